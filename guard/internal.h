/* The guard's internals, shared by its files: the baseline and its
 * entries, the copies of their contents, the manifest, undoing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard/guard.h"
#include "policy/handoff.h"

#define FILE_CAP_DEFAULT ((size_t)1 << 20)
#define TOTAL_CAP_DEFAULT ((size_t)32 << 20)
/* Every level holds a descriptor: well below RLIMIT_NOFILE. */
#define WALK_DEPTH_MAX 256

enum entry_type {
	ENTRY_REG = 1,
	ENTRY_DIR,
	ENTRY_LNK,
	ENTRY_OTHER,	/* fifo, socket, device */
};

enum entry_flag {
	ENTRY_COPIED = 1 << 0,		/* the content is in an object */
	ENTRY_UNLISTED = 1 << 1,	/* a directory that could not be read */
	ENTRY_GITDIR = 1 << 2,		/* the top of a git directory: only its
					 * hooks and config are kept */
};

/* What identifies one version of a file without reading it. ctime cannot
 * be set from userspace, so an equal fingerprint means an unchanged file,
 * unless the change fell in the same clock tick (see entry_racy()). */
struct fingerprint {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct entry {
	char *path;
	uint8_t type, flags;
	uint32_t mode;
	struct fingerprint fp;
	uint64_t hash;		/* FNV-1a of the content, when copied */
	char *target;		/* a symlink's */
	char *object;		/* the copy's name in objects/ */
};

struct baseline {
	char *workspace;
	int64_t taken_ns;	/* CLOCK_REALTIME when the snapshot began */
	struct handoffs roots;
	struct entry *v;
	size_t n, cap;
};

/* Timestamps come from a clock that ticks coarsely (a jiffy; a second
 * on some network filesystems): a file changed within this window of the
 * snapshot may change again with the same fingerprint, so its content is
 * compared instead ("racy git" in git's index). */
#define RACY_NS ((int64_t)2000000000)

#define FNV_INIT 0xcbf29ce484222325ULL
uint64_t fnv1a(uint64_t h, const void *data, size_t n);

/* Objects: the copies of baseline contents, in state/objects/. */
struct objdir {
	int dirfd;	/* the state directory, borrowed */
	int fd;
};

struct stat;
struct fingerprint fingerprint_of(const struct stat *st);
bool fingerprint_eq(const struct fingerprint *a, const struct fingerprint *b);
bool entry_racy(const struct baseline *b, const struct entry *e);
uint8_t entry_type_of(mode_t m);
void entry_done(struct entry *e);
struct entry *baseline_push(struct baseline *b);
void baseline_sort(struct baseline *b);
const struct entry *baseline_find(const struct baseline *b, const char *path);
/* The names of a directory entry's children in the baseline, in order. */
char **baseline_children(const struct baseline *b, const char *dir);
size_t baseline_files(const struct baseline *b);
void baseline_free(struct baseline *b);
/* Takes the baseline of the hand-offs as they are now, reusing the copies
 * of prev (the last manifest; may be NULL) where a file is unchanged. */
int baseline_take(const struct guard_options *o, int wfd, struct objdir *od, const struct baseline *prev,
		  struct baseline *ret, struct guard_report *rep, char **ret_failing);
void report_unguarded(struct guard_report *rep, const char *rel);

int objdir_fd(struct objdir *od);
void objdir_close(struct objdir *od);
/* Reads an object, checked against what the manifest says of it. */
int object_read(struct objdir *od, const struct entry *e, char **ret);
/* Whether the open file fd holds what the entry's object holds; -EBADMSG
 * when the object is damaged. */
int content_matches(int fd, struct objdir *od, const struct entry *e, bool *ret);

/* The manifest, as bytes. */
struct wbuf {
	char *p;
	size_t n, cap;
};

int manifest_load(int dirfd, struct baseline *ret, struct wbuf *ret_raw);
bool manifest_current(const struct baseline *prev, const struct wbuf *raw, struct baseline *next);
int manifest_store(int dirfd, const struct baseline *b);
/* Removes the objects the manifest does not name. */
void objects_collect(struct objdir *od, const struct baseline *b);

/* Undoes every change since the baseline: the baseline's roots, then the
 * new ones of the workspace as restored (a repository made during the
 * run). The first failure is returned, with the hand-off it was about in
 * *ret_failing (NULL for the workspace itself); the rest is still tried. */
int undo_all(const struct guard_options *o, int wfd, struct objdir *od, const struct baseline *b,
	     struct guard_report *rep, char **ret_failing);

static inline struct handoff_scan guard_scan(const struct guard_options *o)
{
	return (struct handoff_scan){ .workspace = o->workspace, .user_home = o->user_home, .extra = o->extra };
}
