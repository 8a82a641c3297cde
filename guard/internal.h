/* The guard's internals, shared by its files: the baseline and its
 * entries, the copies of their contents, the manifest, undoing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard/guard.h"
#include "policy/handoff.h"

struct index;

#define FILE_CAP_DEFAULT ((size_t)1 << 20)
#define TOTAL_CAP_DEFAULT ((size_t)32 << 20)

enum entry_type {
	ENTRY_REG = 1,
	ENTRY_DIR,
	ENTRY_LNK,
	ENTRY_OTHER,	/* fifo, socket, device */
};

enum entry_flag {
	ENTRY_COPIED = 1 << 0,		/* the content is in an object */
	ENTRY_UNLISTED = 1 << 1,	/* a directory that could not be read */
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
int baseline_take(const struct guard_options *o, int wfd, const struct handoff_repos *repos, struct objdir *od,
		  const struct baseline *prev,
		  struct baseline *ret, struct guard_report *rep, char **ret_failing);
void report_unguarded(struct guard_report *rep, const char *rel);

int objdir_fd(struct objdir *od);
void objdir_close(struct objdir *od);
/* Reads an object, checked against what the manifest says of it. */
int object_read(struct objdir *od, const struct entry *e, char **ret);
/* Whether the open file fd holds what the entry's object holds; -EBADMSG
 * when the object is damaged. */
int content_matches(int fd, struct objdir *od, const struct entry *e, bool *ret);

/* The manifest and the quarantine's records, as bytes. */
struct wbuf {
	char *p;
	size_t n, cap;
};
void wbuf_put(struct wbuf *w, const void *data, size_t n);
/* Fixed-width numbers in the host's order (the files never leave it),
 * strings length-prefixed (NULL has a length of its own). */
void wb_u8(struct wbuf *w, uint8_t v);
void wb_u32(struct wbuf *w, uint32_t v);
void wb_u64(struct wbuf *w, uint64_t v);
void wb_str(struct wbuf *w, const char *s);

/* Reading them back: a read past the end, or a string with a NUL in it,
 * sets bad and gives zeros from then on. */
struct rbuf {
	const char *p;
	size_t n, off;
	bool bad;
};
uint8_t rb_u8(struct rbuf *r);
uint32_t rb_u32(struct rbuf *r);
uint64_t rb_u64(struct rbuf *r);
char *rb_str(struct rbuf *r);

/* The checksum that ends each state file. */
uint64_t state_sum(const void *data, size_t n);
/* Writes a state file whole, by rename: a crash leaves the old one or
 * the new one. */
int state_file_store(int dirfd, const char *name, const struct wbuf *w);
/* Reads one back, its checksum checked against the magic it starts with:
 * -EBADMSG when torn or damaged, *ret_r then covering what is between. */
int state_file_load(int dirfd, const char *name, const char *magic, struct wbuf *ret_raw, struct rbuf *ret_r);

int manifest_load(int dirfd, struct baseline *ret, struct wbuf *ret_raw);
/* The bytes of a manifest: magic, content, checksum; and the content
 * read back (tests/fuzz/manifest.c fuzzes it). */
#define MANIFEST_MAGIC "stockade guard manifest\n"
void manifest_render(const struct baseline *b, struct wbuf *w);
int manifest_parse(struct rbuf r, struct baseline *ret);
bool manifest_current(const struct baseline *prev, const struct wbuf *raw, struct baseline *next);
int manifest_store(int dirfd, const struct baseline *b);
/* Removes the objects the manifest does not name. */
void objects_collect(struct objdir *od, const struct baseline *b);

/* Undoes every change since the baseline: the baseline's roots, then the
 * new ones of the workspace as restored (a repository made during the
 * run), with the repositories where repos says, and what is too deep to
 * look through set aside whole. The first failure is returned, with the
 * hand-off it was about in *ret_failing (NULL for the workspace itself);
 * the rest is still tried. The hand-offs looked at, the baseline's and
 * those found, go to *ret_roots (may be NULL; sorted). */
enum undo_flags {
	/* A git config whose lock (config.lock) someone holds is left for
	 * a later look instead of waited for: between a session's commands,
	 * where a git blocked on the namespace jail's rename trap, which the
	 * same process answers, would hold it for the whole wait. */
	UNDO_SKIP_LOCKED = 1 << 0,
};
int undo_all(const struct guard_options *o, int wfd, int statefd, const struct handoff_repos *repos,
	     char *const *too_deep, struct objdir *od, const struct baseline *b, unsigned flags,
	     struct guard_report *rep, char **ret_failing, char ***ret_roots);

/* The index of where the repositories are (index.c). */
struct index_dir {
	char *path;		/* relative to the workspace, "" for the top */
	uint64_t dev, ino;
	int64_t ctime_ns;
	uint8_t git;		/* its repositories (index.c's repos_byte): its `.git` entry's DT_*, a bare git directory, .hg, .jj; 0 when none */
	size_t nsub;		/* descendants, which follow it */
};

struct index {
	char *workspace;
	struct index_dir *v;
	size_t n;
	char **too_deep;	/* directories deeper than a path can name (NULL-terminated, may be NULL) */
	char **unsearchable;	/* directories that could not be listed */
};

int index_load(int dirfd, const char *workspace, struct index *ret);
int index_store(int dirfd, const struct index *ix);
/* Told of each directory a refresh lists, opened (fd, borrowed), before
 * it is listed. */
struct index_lister {
	void (*opened)(void *data, int fd, const char *rel);
	void *data;
};
/* The index brought up to date with the workspace at wfd (old may be
 * NULL: everything is listed); *ret_changed says whether it differs.
 * lister may be NULL. */
int index_refresh(int wfd, const char *workspace, const struct index *old, const struct index_lister *lister,
		  struct index *ret, bool *ret_changed);
/* The subtree at rel (not the top) listed again as it is now, in place:
 * made, moved in, or gone. *ret_changed: its repositories, or what is
 * too deep or unsearchable in it, changed. */
int index_rescan(struct index *ix, int wfd, const char *rel, const struct index_lister *lister, bool *ret_changed);
/* The `.git` entry of the directory at rel looked at again: whether it
 * changed. */
bool index_regit(struct index *ix, int wfd, const char *rel, const struct guard_knowledge *knows);
/* Directories the refreshes stat'ed, for the tests: a check that looks at
 * what changed and no more leaves it as it was. */
extern unsigned long index_dirs_stated;
struct index_dir *index_find(const struct index *ix, const char *path);
void index_repos(const struct index *ix, struct handoff_repos *ret);
void index_free(struct index *ix);

/* The watch of a guard kept across many commands (watch.c). */
struct watch;
int watch_new(struct watch **ret);
void watch_free(struct watch *w);
int watch_fd(const struct watch *w);
size_t watch_count(const struct watch *w);
/* For index_refresh and index_rescan: each directory listed is watched
 * (a failure makes the watch no good: watch_apply and watch_refresh
 * return it). */
struct index_lister watch_lister(struct watch *w);
/* Reads every event there is, and notes what they say. */
int watch_read(struct watch *w);
/* Events were lost: watch_refresh, not watch_apply. */
bool watch_overflowed(const struct watch *w);
/* Whether an event since the last watch_sync named a hand-off, or the
 * index changed where repositories are. */
bool watch_seen(const struct watch *w);
/* The index brought up to date from the events read: the directories
 * they named listed again (and watched), nothing else looked at. ix
 * NULL: there is none (a git directory around the workspace), the
 * events are only about hand-offs. */
int watch_apply(struct watch *w, int wfd, struct index *ix, const struct guard_knowledge *knows, bool *ret_changed);
/* The same after lost events: the index refreshed whole from old (every
 * directory stat'ed), each directory listed watched. */
int watch_refresh(struct watch *w, int wfd, const char *workspace, const struct index *old, struct index *ret);
/* The hand-offs a check looked at (roots, sorted here, taken) and the
 * baseline's files: the directories they lie in and hold, and the files
 * themselves, watched; what no longer is one, unwatched. */
void watch_sync(struct watch *w, int wfd, char **roots, const struct baseline *b);
bool watch_roots_differ(const struct watch *w, char *const *roots);

/* A failure handed back with the path it was about (taken). */
int guard_fail(struct guard_failure *f, int r, enum guard_step step, char *path);

/* Trees, never following a symlink: a copy bounded to max bytes of data
 * in all (-EFBIG past it) that skips holes, and a removal with no depth
 * limit. */
int tree_copy(int sfd, const char *sname, int dfd, const char *dname, size_t max);
/* the data of one open file into another, holes kept */
int file_copy(int in, int out, off_t size);
int tree_remove(int dfd, const char *name);
/* renameat2 with RENAME_NOREPLACE (plain renameat where the filesystem
 * lacks it), making a directory the run left read-only writable for the
 * time it takes: the files are the user's, and so is the mode put back. */
int rename_noreplace(int sfd, const char *sname, int dfd, const char *dname);

/* The quarantine (quarantine.c). */
struct quarantine {
	const char *state_dir;	/* as a path, for what is named */
	int state_fd;		/* borrowed */
	int topfd;		/* quarantine/, once opened */
	const char *workspace;
	char stamp[32];
	unsigned count;
};
#define QUARANTINE_INIT(dir, fd, ws) ((struct quarantine){ .state_dir = (dir), .state_fd = (fd), .topfd = -1, .workspace = (ws) })

/* Where one item goes: the folder that holds it (made), its name there. */
struct qitem {
	char *id;
	char *abs;	/* its absolute path */
	char *name;
	int dirfd;
};

struct qrecord {
	const char *path;	/* relative to the workspace */
	const char *why;
	const char *stored;	/* where it is (absolute) */
	const char *detail;	/* may be NULL */
};

int quarantine_item_new(struct quarantine *q, const char *rel, struct qitem *ret);
int quarantine_item_record(struct quarantine *q, const char *id, const struct qrecord *rec);
void qitem_done(struct qitem *it);
void quarantine_done(struct quarantine *q);

static inline struct handoff_scan guard_scan(const struct guard_options *o, const struct handoff_repos *repos)
{
	return (struct handoff_scan){ .workspace = o->workspace, .user_home = o->user_home, .extra = o->extra, .repos = repos,
				      .gitdir_only = o->gitdir_only };
}
