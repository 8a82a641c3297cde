/* What is new in a carved directory, on the landlock backend.
 *
 * Landlock only grants, and a right on a directory holds for everything
 * beneath it: a hidden or read-only entry in a directory the command may
 * write is rendered by granting each other entry as a sibling, the
 * directory itself keeping its listing right alone (landlock/). Whatever
 * a new entry there would need (READ_FILE and WRITE_FILE, checked when it
 * is opened) would hold for the hidden one too, so Landlock can give
 * nothing new there; the supervisor makes it instead. The filter sends
 * every open, creation, removal and rename to the listener
 * (seccomp_plan.supervise_files); for a name in a carved directory, or in
 * a directory the supervisor made for the run, the supervisor carries the
 * call out itself, through its own descriptor of that directory, never
 * following a link in the name, with the command's umask and (for a root
 * stockade) without its capabilities, and hands an open's descriptor
 * over (SECCOMP_IOCTL_NOTIF_ADDFD). What it makes is the run's: its
 * inodes are remembered, and a later open of one of them is carried out
 * the same way (Landlock would refuse it: the directory grants no file
 * right). Everything else goes on to the kernel as made, where Landlock
 * decides: a sibling's own grant, a hidden entry's refusal (named here,
 * with its rule). The supervisor removes or renames only what the policy
 * lets the command write, or what it made; it never links or renames a
 * hidden or read-only entry, which would carry it where Landlock grants
 * more. A program made there cannot be executed (execve is the kernel's,
 * and Landlock grants no execute right on it); the report says so. */
#include "supervise/internal.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "lib/path.h"
#include "lib/util.h"
#include "policy/why.h"

void supervisor_set_carved(struct supervisor *sv, char *const *carved)
{
	strv_free(sv->carved);
	sv->carved = strv_new();
	for (size_t i = 0; carved && carved[i]; i++)
		strv_add(&sv->carved, carved[i]);
	if (!sv->made_dirs)
		sv->made_dirs = strv_new();
}

void sv_files_free(struct supervisor *sv)
{
	strv_free(sv->carved);
	strv_free(sv->made_dirs);
	free(sv->made_inodes);
	sv->carved = sv->made_dirs = NULL;
	sv->made_inodes = NULL;
	sv->n_made_inodes = 0;
}

static bool made(const struct supervisor *sv, const struct stat *st)
{
	for (size_t i = 0; i < sv->n_made_inodes; i++)
		if (sv->made_inodes[i].dev == st->st_dev && sv->made_inodes[i].ino == st->st_ino)
			return true;
	return false;
}

static void remember(struct supervisor *sv, const struct stat *st)
{
	if (made(sv, st))
		return;
	sv->made_inodes = xgrow(sv->made_inodes, sv->n_made_inodes, sizeof(*sv->made_inodes));
	sv->made_inodes[sv->n_made_inodes++] = (struct sv_inode){ .dev = st->st_dev, .ino = st->st_ino };
}

/* A directory whose new entries are the supervisor's to make. */
static bool ours(const struct supervisor *sv, const char *dir)
{
	return strv_contains(sv->carved, dir) || strv_contains(sv->made_dirs, dir);
}

/* path's folder and last name; false for "/" */
static bool split(const char *path, char **ret_dir, const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	if (!slash || !slash[1])
		return false;
	*ret_dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
	*ret_name = slash + 1;
	return true;
}

/* What the policy lets the command write, or a trust hand-off, which
 * Landlock grants as the tree around it and the guard keeps. */
static bool writable(const struct supervisor *sv, const char *path)
{
	const struct rule *r = policy_rule_for(sv->p, path);
	if (r && (r->flags & RULE_HANDOFF))
		return true;
	return policy_effect(sv->p, path) == EFFECT_WRITE;
}

bool sv_may_write(const struct supervisor *sv, const char *path)
{
	return writable(sv, path);
}

bool sv_made_inode(const struct supervisor *sv, const struct stat *st)
{
	for (size_t i = 0; i < sv->n_made; i++)
		if (sv->made[i].dev == st->st_dev && sv->made[i].ino == st->st_ino)
			return true;
	return made(sv, st);
}

/* An open of a hidden path: named with its rule, where it comes from
 * and its fix, as `stockade why` answers them (the kernel refuses it:
 * Landlock, or the namespace jail's cover, read-only where it is a
 * file). */
static void name_hidden(const struct policy *p, struct report *rep, const char *path, int flags, bool cover)
{
	const struct rule *r = policy_rule_for(p, path);
	if (!r || r->access != ACCESS_HIDE)
		return;
	bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
	struct stat st;
	bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	/* Landlock lets a hidden directory itself be listed (its parent's
	 * listing right holds beneath it): no refusal to name. */
	if (!cover && !writes && dir && streq(path, r->path))
		return;
	struct why w;
	why_path(p, path, writes ? WANT_WRITE : WANT_READ, &w);
	why_fix_for_real(p, path, writes ? WANT_WRITE : WANT_READ, &w);
	/* In the namespace jail a credential in the fresh home is not
	 * there at all; a hidden file is covered read-only. */
	_cleanup_free_ char *parent = path_parent(r->path, NULL);
	const struct rule *around = parent ? policy_rule_for(p, parent) : NULL;
	const char *err = cover && around && (around->flags & RULE_FRESH)	 ? "ENOENT"
			  : cover && writes && !dir && streq(path, r->path) ? "EROFS"
									     : "EACCES";
	report_denial_ruled(rep, "open", path, err, w.rule, w.source, w.fix);
	why_free(&w);
}

static mode_t umask_of(pid_t pid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Umask:", 6) == 0)
			return (mode_t)strtoul(line + 6, NULL, 8) & 0777;
	return 022;
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* ---- opens ---- */

struct open_call {
	int dirfd;
	uint64_t path;
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

static bool open_call_of(const struct seccomp_notif *req, struct open_call *ret)
{
	const __u64 *a = req->data.args;
	switch (req->data.nr) {
#ifdef SYS_open
	case SYS_open:
		*ret = (struct open_call){ AT_FDCWD, a[0], a[1], a[2], 0 };
		return true;
	case SYS_creat:
		*ret = (struct open_call){ AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1], 0 };
		return true;
#endif
	case SYS_openat:
		*ret = (struct open_call){ (int)a[0], a[1], a[2], a[3], 0 };
		return true;
	case SYS_openat2: {
		struct open_how how = { 0 };
		size_t n = a[3] < sizeof(how) ? (size_t)a[3] : sizeof(how);
		if (n < offsetof(struct open_how, resolve) || !sv_read_mem((pid_t)req->pid, a[2], &how, n))
			return false;
		*ret = (struct open_call){ (int)a[0], a[1], how.flags, how.mode, how.resolve };
		return true;
	}
	}
	return false;
}

void supervise_name_hidden_open(const struct policy *p, struct report *rep, const struct seccomp_notif *req, bool cover)
{
	struct open_call c;
	pid_t pid = (pid_t)req->pid;
	if (!open_call_of(req, &c))
		return;
	_cleanup_free_ char *raw = supervise_read_path(pid, c.path);
	_cleanup_free_ char *path = raw ? supervise_path_of(pid, c.dirfd, raw) : NULL;
	if (path)
		name_hidden(p, rep, path, (int)c.flags, cover);
}

static void do_open(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct open_call c;
	pid_t pid = (pid_t)req->pid;
	if (!open_call_of(req, &c)) {
		sv_continue(sv, req->id);
		return;
	}
	_cleanup_free_ char *raw = supervise_read_path(pid, c.path);
	_cleanup_free_ char *path = raw ? supervise_path_of(pid, c.dirfd, raw) : NULL;
	if (!path) {
		sv_continue(sv, req->id);
		return;
	}
	name_hidden(sv->p, sv->rep, path, (int)c.flags, false);
	int flags = (int)(c.flags & ~(uint64_t)O_CLOEXEC);
	_cleanup_free_ char *dir = NULL;
	const char *name = NULL;
	bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
	/* O_TMPFILE names the directory itself; anything else, a name in
	 * one. openat2's resolve flags are the kernel's to honour. */
	if (c.resolve || (tmpfile ? !ours(sv, path) : !split(path, &dir, &name) || !ours(sv, dir))) {
		sv_continue(sv, req->id);
		return;
	}
	_cleanup_close_ int dfd = open_dir(tmpfile ? path : dir);
	struct stat st;
	bool exists = !tmpfile && dfd >= 0 && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	/* What is there and not the run's (a sibling with its own grant, a
	 * hidden entry, a link) is Landlock's; nothing there and no O_CREAT
	 * is the kernel's ENOENT. */
	if (dfd < 0 || (exists && (!S_ISREG(st.st_mode) || !made(sv, &st))) ||
	    (!exists && !tmpfile && (!(flags & O_CREAT) || !writable(sv, path)))) {
		sv_continue(sv, req->id);
		return;
	}
	if (!sv_id_valid(sv, req->id))
		return;
	mode_t mode = (mode_t)c.mode & 07777 & ~umask_of(pid) & ~(mode_t)(S_ISUID | S_ISGID);
	int err = sv_acting(sv);
	int fd = -1;
	if (!err) {
		fd = openat(dfd, tmpfile ? "." : name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
		err = fd < 0 ? errno : 0;
		sv_acted(sv);
	}
	if (fd < 0) {
		sv_respond(sv, req->id, err);
		return;
	}
	if (!tmpfile && fstat(fd, &st) == 0)
		remember(sv, &st);
	sv_hand_over(sv, req->id, fd, (int)c.flags);
}

/* ---- making, removing, renaming, linking ---- */

/* Carries out fn for a name in one of ours, as the command: its errno,
 * or SV_REFUSED. */
static int acting(struct supervisor *sv, int (*fn)(void *), void *data)
{
	int err = sv_acting(sv);
	if (err)
		return EPERM;
	err = fn(data) < 0 ? errno : 0;
	sv_acted(sv);
	return err;
}

struct made_at {
	int dfd;
	const char *name;
	mode_t mode;
	dev_t dev;
	bool dir;
	const char *target;	/* symlink */
};

static int mk(void *data)
{
	struct made_at *m = data;
	if (m->target)
		return symlinkat(m->target, m->dfd, m->name);
	if (m->dir)
		return mkdirat(m->dfd, m->name, m->mode);
	return mknodat(m->dfd, m->name, m->mode, m->dev);
}

/* mkdir, mknod, symlink: a new name in one of ours. */
static void do_make(struct supervisor *sv, const struct seccomp_notif *req)
{
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	int nr = req->data.nr;
	int dirfd = AT_FDCWD;
	uint64_t at = a[0], target_at = 0;
	struct made_at m = { .dfd = -1 };
	if (nr == SYS_mkdirat || nr == SYS_mknodat)
		dirfd = (int)a[0], at = a[1];
	else if (nr == SYS_symlinkat)
		target_at = a[0], dirfd = (int)a[1], at = a[2];
#ifdef SYS_symlink
	else if (nr == SYS_symlink)
		target_at = a[0], at = a[1];
#endif
	bool dir = nr == SYS_mkdirat;
#ifdef SYS_mkdir
	dir = dir || nr == SYS_mkdir;
#endif
	uint64_t mode_arg = nr == SYS_mkdirat || nr == SYS_mknodat ? a[2] : a[1];
	_cleanup_free_ char *raw = supervise_read_path(pid, at);
	_cleanup_free_ char *target = target_at ? supervise_read_path(pid, target_at) : NULL;
	_cleanup_free_ char *path = raw ? supervise_path_of(pid, dirfd, raw) : NULL;
	_cleanup_free_ char *parent = NULL;
	const char *name = NULL;
	if (!path || (target_at && !target) || !split(path, &parent, &name) || !ours(sv, parent)) {
		sv_continue(sv, req->id);
		return;
	}
	if (!writable(sv, path)) {
		sv_respond(sv, req->id, EACCES);
		return;
	}
	mode_t type = (mode_t)mode_arg & S_IFMT;
	if (!dir && !target && type != 0 && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) {
		/* no device nodes, as Landlock grants none */
		sv_respond(sv, req->id, EPERM);
		return;
	}
	_cleanup_close_ int dfd = open_dir(parent);
	if (dfd < 0) {
		sv_respond(sv, req->id, -dfd);
		return;
	}
	m = (struct made_at){ .dfd = dfd, .name = name, .dir = dir, .target = target,
			      .mode = (mode_t)(mode_arg & 07777 & ~umask_of(pid)) | (dir ? 0 : type ? type : S_IFREG),
			      .dev = nr == SYS_mknodat ? (dev_t)a[3] : 0 };
	if (!sv_id_valid(sv, req->id))
		return;
	int err = acting(sv, mk, &m);
	struct stat st;
	if (!err && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		remember(sv, &st);
		if (dir)
			strv_add(&sv->made_dirs, path);
	}
	sv_respond(sv, req->id, err);
}

/* May the supervisor remove or move this entry (dfd/name, at path)? What
 * it made, or what the policy lets the command write; never a hidden or
 * read-only one. 0, or the errno. */
static int movable(const struct supervisor *sv, int dfd, const char *name, const char *path, struct stat *ret)
{
	if (fstatat(dfd, name, ret, AT_SYMLINK_NOFOLLOW) < 0)
		return errno;
	return made(sv, ret) || writable(sv, path) ? 0 : EACCES;
}

struct removal {
	int dfd;
	const char *name;
	int flags;
};

static int rm(void *data)
{
	struct removal *r = data;
	return unlinkat(r->dfd, r->name, r->flags);
}

static void do_remove(struct supervisor *sv, const struct seccomp_notif *req)
{
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	int nr = req->data.nr, dirfd = AT_FDCWD, flags = 0;
	uint64_t at = a[0];
	if (nr == SYS_unlinkat)
		dirfd = (int)a[0], at = a[1], flags = (int)a[2] & AT_REMOVEDIR;
#ifdef SYS_rmdir
	if (nr == SYS_rmdir)
		flags = AT_REMOVEDIR;
#endif
	_cleanup_free_ char *raw = supervise_read_path(pid, at);
	_cleanup_free_ char *path = raw ? supervise_path_of(pid, dirfd, raw) : NULL;
	_cleanup_free_ char *parent = NULL;
	const char *name = NULL;
	if (!path || !split(path, &parent, &name) || !ours(sv, parent)) {
		sv_continue(sv, req->id);
		return;
	}
	_cleanup_close_ int dfd = open_dir(parent);
	struct stat st;
	int err = dfd < 0 ? -dfd : movable(sv, dfd, name, path, &st);
	if (!err) {
		if (!sv_id_valid(sv, req->id))
			return;
		struct removal r = { dfd, name, flags };
		err = acting(sv, rm, &r);
	}
	if (!err && flags & AT_REMOVEDIR) {
		for (size_t i = 0; sv->made_dirs[i]; i++)
			if (streq(sv->made_dirs[i], path)) {
				free(sv->made_dirs[i]);
				sv->made_dirs[i] = xstrdup("");
			}
	}
	sv_respond(sv, req->id, err);
}

struct move {
	int from_dfd, to_dfd;
	const char *from, *to;
	unsigned flags;
	bool link;
};

static int mv(void *data)
{
	struct move *m = data;
	if (m->link)
		return linkat(m->from_dfd, m->from, m->to_dfd, m->to, 0);
	return renameat2(m->from_dfd, m->from, m->to_dfd, m->to, m->flags);
}

/* A made directory moved: the names beneath it move with it. */
static void moved_dirs(struct supervisor *sv, const char *from, const char *to)
{
	for (size_t i = 0; sv->made_dirs[i]; i++) {
		const char *d = sv->made_dirs[i];
		if (!path_is_beneath(d, from))
			continue;
		char *now = streq(d, from) ? xstrdup(to) : path_join(to, path_below(d, from));
		free(sv->made_dirs[i]);
		sv->made_dirs[i] = now;
	}
}

static void do_move(struct supervisor *sv, const struct seccomp_notif *req)
{
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	int nr = req->data.nr;
	bool link = nr == SYS_linkat;
#ifdef SYS_link
	link = link || nr == SYS_link;
#endif
	_cleanup_free_ char *from = NULL, *to = NULL;
	struct move m = { .from_dfd = -1, .to_dfd = -1, .link = link };
	if (link) {
		bool plain = nr != SYS_linkat;
		_cleanup_free_ char *f = supervise_read_path(pid, plain ? a[0] : a[1]);
		_cleanup_free_ char *t = supervise_read_path(pid, plain ? a[1] : a[3]);
		from = f ? supervise_path_of(pid, plain ? AT_FDCWD : (int)a[0], f) : NULL;
		to = t ? supervise_path_of(pid, plain ? AT_FDCWD : (int)a[2], t) : NULL;
		/* linkat(AT_EMPTY_PATH) or following a link: the kernel's */
		if (!plain && (a[4] & (AT_EMPTY_PATH | AT_SYMLINK_FOLLOW)))
			from = (free(from), NULL);
	} else {
		(void)supervise_rename_paths(req, &from, &to);
		m.flags = nr == SYS_renameat2 ? (unsigned)a[4] : 0;
	}
	_cleanup_free_ char *from_dir = NULL, *to_dir = NULL;
	if (!from || !to || !split(from, &from_dir, &m.from) || !split(to, &to_dir, &m.to) ||
	    (!ours(sv, from_dir) && !ours(sv, to_dir))) {
		sv_continue(sv, req->id);
		return;
	}
	_cleanup_close_ int fd1 = open_dir(from_dir), fd2 = open_dir(to_dir);
	m.from_dfd = fd1;
	m.to_dfd = fd2;
	struct stat st, there;
	int err = fd1 < 0 ? -fd1 : fd2 < 0 ? -fd2 : movable(sv, fd1, m.from, from, &st);
	/* What it replaces must be movable too; a new name, writable. */
	if (!err && fstatat(fd2, m.to, &there, AT_SYMLINK_NOFOLLOW) == 0)
		err = link ? EEXIST : movable(sv, fd2, m.to, to, &there);
	else if (!err && !writable(sv, to))
		err = EACCES;
	if (!err && link && S_ISDIR(st.st_mode))
		err = EPERM;
	if (!err) {
		if (!sv_id_valid(sv, req->id))
			return;
		err = acting(sv, mv, &m);
	}
	if (!err) {
		/* in one of ours, it has no grant of its own to be opened by */
		if (ours(sv, to_dir))
			remember(sv, &st);
		if (!link && S_ISDIR(st.st_mode))
			moved_dirs(sv, from, to);
	}
	sv_respond(sv, req->id, err);
}

struct truncation {
	int dfd;
	const char *name;
	off_t len;
};

static int truncate_made(void *data)
{
	struct truncation *t = data;
	int fd = openat(t->dfd, t->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = ftruncate(fd, t->len);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

static void do_truncate(struct supervisor *sv, const struct seccomp_notif *req)
{
	pid_t pid = (pid_t)req->pid;
	_cleanup_free_ char *raw = supervise_read_path(pid, req->data.args[0]);
	_cleanup_free_ char *path = raw ? supervise_path_of(pid, AT_FDCWD, raw) : NULL;
	_cleanup_free_ char *dir = NULL;
	const char *name = NULL;
	struct stat st;
	_cleanup_close_ int dfd = path && split(path, &dir, &name) && ours(sv, dir) ? open_dir(dir) : -1;
	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || !made(sv, &st)) {
		sv_continue(sv, req->id);
		return;
	}
	if (!sv_id_valid(sv, req->id))
		return;
	struct truncation t = { dfd, name, (off_t)req->data.args[1] };
	sv_respond(sv, req->id, acting(sv, truncate_made, &t));
}

enum files_call { FILES_NONE, FILES_OPEN, FILES_MAKE, FILES_REMOVE, FILES_MOVE, FILES_TRUNCATE };

static enum files_call files_call(int nr)
{
	switch (nr) {
#ifdef SYS_open
	case SYS_open:
	case SYS_creat:
#endif
	case SYS_openat:
	case SYS_openat2:
		return FILES_OPEN;
#ifdef SYS_mkdir
	case SYS_mkdir:
	case SYS_mknod:
	case SYS_symlink:
#endif
	case SYS_mkdirat:
	case SYS_mknodat:
	case SYS_symlinkat:
		return FILES_MAKE;
#ifdef SYS_unlink
	case SYS_unlink:
	case SYS_rmdir:
#endif
	case SYS_unlinkat:
		return FILES_REMOVE;
#ifdef SYS_rename
	case SYS_rename:
	case SYS_link:
#endif
	case SYS_renameat:
	case SYS_renameat2:
	case SYS_linkat:
		return FILES_MOVE;
	case SYS_truncate:
		return FILES_TRUNCATE;
	}
	return FILES_NONE;
}

bool supervise_files_call(int nr)
{
	return files_call(nr) != FILES_NONE;
}

bool supervisor_files(struct supervisor *sv, const struct seccomp_notif *req)
{
	int nr = req->data.nr;
	if (!sv->carved)
		return false;
	switch (files_call(nr)) {
	case FILES_NONE:
		return false;
	case FILES_OPEN:
		/* the shm watch names its opens; a carved directory is
		 * never /dev/shm */
		if (supervise_is_shm_open(nr, (const uint64_t *)req->data.args)) {
			_cleanup_free_ char *shm = NULL;
			if (supervise_shm_path(req, &shm))
				return false;
		}
		do_open(sv, req);
		return true;
	case FILES_MAKE:
		do_make(sv, req);
		return true;
	case FILES_REMOVE:
		do_remove(sv, req);
		return true;
	case FILES_MOVE:
		do_move(sv, req);
		return true;
	case FILES_TRUNCATE:
		do_truncate(sv, req);
		return true;
	}
	return false;
}
