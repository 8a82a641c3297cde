/* The trust hand-off guard: files inside the workspace that make something
 * run later, outside the jail (.git/hooks, .git/config, core.hooksPath,
 * editor and agent settings, stockade's own configuration). Landlock
 * cannot make a read-only hole in a writable tree without forbidding new
 * files beside it, and a mount cannot cover a path that does not exist
 * yet, so the guard copies these files before a run and, once every
 * process of the run is gone, undoes any change: changed or new entries
 * move to a quarantine folder in the user's state directory, and the
 * baseline comes back. Nothing is lost; each change is handed back to the
 * caller, which names it.
 *
 * The baseline lives on disk (state_dir/guard/<hash of the workspace>/),
 * under a lock, so that concurrent runs in one workspace share it and a
 * run whose stockade was killed is undone by the next one. What moves
 * aside goes to state_dir/quarantine/<ID>/<path>, one item per ID, by
 * rename where the state directory shares the workspace's filesystem; a
 * copy otherwise, bounded by the caps and without holes; and where even
 * that fails, renamed beside itself to a name nothing reads. Undo never
 * fails open: what it cannot do is named, and the run's cleanup fails.
 *
 * Which paths are hand-offs is the policy's (policy/handoff.h, with the
 * hand-offs as data); each is opened beneath the workspace without
 * following a symlink. The look for them on disk and the vetting of a git
 * config are handoff/'s, which no mechanism includes: the caller hands
 * them in (struct guard_knowledge; jail/run-guard.c's run_guard_knowledge). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* policy/handoff.h's, and lib/fd.h's parent_cache */
struct gitconfig_vetted;
struct gitconfig_where;
struct handoff_scan;
struct handoffs;
struct parent_cache;

/* What the guard asks of hand-offs on disk, and does not look at itself:
 * the caller's functions (handoff/'s, in one table of jail/'s), so that
 * the guard includes no other mechanism. The types are policy/handoff.h's. */
struct guard_knowledge {
	/* The hand-offs of the workspace opened (for reading) at wfd, sorted,
	 * each once, none inside another; parents (on wfd) is the caller's
	 * (handoffs_discover). */
	int (*discover)(const struct handoff_scan *s, int wfd, struct parent_cache *parents, struct handoffs *ret);
	/* Whether the directory opened at dfd (through no symlink) is a bare
	 * git directory (handoff_dir_is_bare). */
	bool (*dir_is_bare)(int dfd);
	/* Whether the directory at rel (beneath wfd) is one git would take
	 * for a git directory (handoff_gitdir_plausible). */
	bool (*gitdir_plausible)(int wfd, const char *rel);
	/* `now`, a git config as a run left it, vetted against `base`, the
	 * same file before the run (NULL when new): 0 and the outcome in
	 * *ret (freed with gitconfig_vetted_free), or -errno (gitconfig_vet). */
	int (*config_vet)(const char *base, size_t base_n, const char *now, size_t now_n,
			  const struct gitconfig_where *w, struct gitconfig_vetted *ret);
};

struct guard_options {
	const char *workspace;	/* canonical absolute path */
	const char *state_dir;	/* canonical, reached without a symlink; e.g. ~/.local/state/stockade */
	const char *user_home;	/* for ~/.gitconfig's core.hooksPath; may be NULL */
	char *const *extra;	/* more workspace-relative paths to keep; may be NULL */
	/* Every tree the run may write (canonical, NULL-terminated, may be
	 * NULL): a git remote that is a local path there is not inert, for
	 * git push would run the hooks of what the run put there. */
	char *const *writable;
	size_t file_cap;	/* 0: 1 MiB */
	size_t total_cap;	/* 0: 32 MiB */
	/* workspace is a git directory outside the run's workspace, which the
	 * run may write (git from a subdirectory): its own hand-offs only,
	 * and no index (a git directory is no tree to walk) */
	bool gitdir_only;
	/* the look for hand-offs on disk and git config vetting (never
	 * NULL): jail/run-guard.c's run_guard_knowledge */
	const struct guard_knowledge *knows;
};

enum guard_change_kind {
	GUARD_CHANGED,		/* old content or target put back, new one set aside */
	GUARD_CREATED,		/* new entry set aside */
	GUARD_REMOVED,		/* removed entry recreated */
	GUARD_UNRESTORABLE,	/* over the size cap: the new content is set aside, the old is gone */
	GUARD_VETTED,		/* a git config: its settings that are not inert dropped (or put
				 * back), the rest kept; the config as the run left it set aside */
};

struct guard_change {
	enum guard_change_kind kind;
	char *path;		/* relative to the workspace */
	char *quarantined;	/* absolute path of what was set aside, or NULL */
	char *id;		/* its quarantine id, for `stockade quarantine restore` */
	char **dropped;		/* GUARD_VETTED: the settings dropped, "section.key" (NULL-terminated) */
	bool beside;		/* set aside in place, renamed to an inert name, not in the
				 * quarantine: the cleanup failed */
	bool unrestored;	/* the old content could not be put back: it is in the
				 * quarantine (old_id), the cleanup failed */
	char *old_id;
};

struct guard_report {
	struct guard_change *changes;
	size_t n_changes;
	char **unguarded;	/* relative paths over the size cap or unreadable
				 * (NULL-terminated, may be NULL) */
	/* guard_begin: hand-off files that had another name (a hard link),
	 * each given an inode of its own (NULL-terminated, may be NULL) */
	char **unlinked;
	size_t n_files;		/* files the baseline holds */
	size_t n_copied;	/* files copied this time (not reused) */
	bool cleanup_failed;	/* something was set aside in place or not put back (its
				 * old content kept in the quarantine, or gone: a
				 * GUARD_UNRESTORABLE change) */
	/* guard_check: the watch stopped during this check (-errno; -ENOSPC:
	 * out of inotify watches), and every check from now on lists the
	 * workspace again as guard_end does */
	int watch_stopped;
};

struct guard;

/* What a guard operation failed at, handed back with the path it was
 * about, for the caller's message. */
enum guard_step {
	GUARD_STEP_WORKSPACE,	/* reading the workspace (path: it) */
	GUARD_STEP_STATE,	/* the workspace's state directory or its lock (path: it) */
	GUARD_STEP_BASELINE,	/* the baseline on disk (path: the manifest); -EBADMSG: damaged */
	GUARD_STEP_SNAPSHOT,	/* copying a hand-off into the baseline (path: the hand-off) */
	GUARD_STEP_UNDO,	/* undoing a change (path: the hand-off) */
};

struct guard_failure {
	enum guard_step step;
	char *path;		/* absolute, or for a hand-off relative to the workspace */
};

void guard_failure_free(struct guard_failure *f);

/* Takes the baseline (or reuses the one a concurrent run holds, or first
 * undoes a killed run) and registers this run. ret_report is filled even
 * when an error is returned, so that changes already undone can be named;
 * free it with guard_report_free() in every case. On failure, what failed
 * is in *ret_failure (may be NULL); free it with guard_failure_free(). */
int guard_begin(const struct guard_options *o, struct guard **ret, struct guard_report *ret_report,
		struct guard_failure *ret_failure);

/* Undoes every change to the hand-offs since the baseline and unregisters
 * this run. Call it once every process of the run is gone. When an undo
 * fails the run stays registered, so the next guard_begin retries it once
 * this process has exited. */
int guard_end(struct guard *g, struct guard_report *ret_report, struct guard_failure *ret_failure);

void guard_report_free(struct guard_report *r);

/* A guard kept across many commands (a session's): the run stays
 * registered and its baseline stays the one guard_begin took, and after
 * each command guard_check undoes what changed since, at a cost that
 * does not grow with the workspace.
 *
 * guard_watch lists the workspace once and watches it (inotify): every
 * directory, each new one as the events show it, the directories the
 * hand-offs lie in and the hand-off files themselves. -errno where it
 * cannot (-ENOSPC: out of inotify watches; -EMFILE: out of instances):
 * the guard then works as before, each check refreshing the whole index
 * (one stat a directory), and the caller says so once. */
int guard_watch(struct guard *g);
/* The descriptor to poll for the watch's events, or -1: none (never
 * begun, or stopped). */
int guard_watch_fd(const struct guard *g);

enum guard_check_flags {
	/* Only when the watch's events since the last check name a
	 * hand-off or where the repositories are (the holder, between
	 * commands); otherwise the events are read and nothing is done. */
	GUARD_CHECK_IF_SEEN = 1 << 0,
};

/* Undoes every change to the hand-offs since guard_begin, exactly as
 * guard_end does (the same quarantine, vetting, report and failure),
 * but keeps the run registered and its baseline. New repositories are
 * looked for only where the watch's events say the tree changed; where
 * there is no watch, or events were lost (IN_Q_OVERFLOW), the whole
 * index is refreshed as guard_end refreshes it. Call it once every
 * process of a command is gone; anything else still running may change
 * a hand-off right after it, which the next check undoes. */
int guard_check(struct guard *g, unsigned flags, struct guard_report *ret_report, struct guard_failure *ret_failure);

/* Frees g without ending the run: the run stays registered (the
 * descriptor that holds its lock is left open on purpose), and once this
 * process has exited the next guard_begin undoes its changes. */
void guard_free(struct guard *g);

const char *guard_change_kind_name(enum guard_change_kind k);

struct report;
/* What the guard enforces, into the report: with the namespace jail's
 * read-only binds, or (the landlock backend) without. */
void guard_describe(bool bound_readonly, struct report *rep);

/* The hand-offs of the run's baseline (relative to the workspace,
 * existing or not, NULL-terminated), for the read-only binds. */
char *const *guard_handoffs(const struct guard *g);
/* The same without beginning a run, for `stockade explain`: from the
 * index where the workspace has one, else by walking it; nothing is
 * written. */
int guard_list_handoffs(const struct guard_options *o, char ***ret);

/* Whether a run is under way in the workspace. */
int guard_workspace_busy(const char *state_dir, const char *workspace, bool *ret);

/* One item of the quarantine, as `stockade quarantine` lists it. An item
 * whose record cannot be read has only its id. */
struct guard_quarantined {
	char *id;
	int64_t when;		/* seconds since the epoch */
	long run;		/* the pid of the stockade that set it aside */
	char *workspace;
	char *path;		/* relative to the workspace */
	char *why;		/* a guard_change_kind_name(), or "old content" */
	char *stored;		/* where it is now (absolute) */
	char *detail;		/* the settings dropped from a config, one a line, or NULL */
};

int guard_quarantine_list(const char *state_dir, struct guard_quarantined **ret, size_t *ret_n);
/* Moves the item back to its path in its workspace, outside any jail.
 * Refused while a run is under way there (-EBUSY), or when something is
 * at the path (-EEXIST, path in the failure); -ESRCH: no such item. */
int guard_quarantine_restore(const char *state_dir, const char *id, struct guard_quarantined *ret_item,
			     struct guard_failure *f);
/* The same to dst (absolute, nothing there, its folder there) instead of
 * its path: the whole item, wherever the user wants it. */
int guard_quarantine_restore_as(const char *state_dir, const char *id, const char *dst,
				struct guard_quarantined *ret_item, struct guard_failure *f);
/* One item by its id: -ESRCH where there is none, -EBADMSG where its
 * record cannot be read. */
int guard_quarantine_get(const char *state_dir, const char *id, struct guard_quarantined *ret);
/* The item's content is back where it belongs by other means (its
 * dropped settings merged into the config now there): its record and
 * what was kept go. */
int guard_quarantine_settled(const char *state_dir, const char *id);
/* The settings an item's record says were dropped ("section.key" or
 * "section.subsection.key"), NULL-terminated, never NULL. */
char **guard_quarantined_settings(const struct guard_quarantined *it);
void guard_quarantined_done(struct guard_quarantined *it);
void guard_quarantined_free(struct guard_quarantined *v, size_t n);
