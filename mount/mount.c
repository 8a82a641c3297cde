#include "mount/mount.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

/* Top-level links of a merged-usr system: /bin -> usr/bin. The policy
 * holds canonical paths, so the new root needs the links themselves. */
static const char *const system_links[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };

static void add(struct mount_plan *plan, enum mount_kind kind, unsigned flags, const char *source,
		const char *target, const char *options, const char *origin)
{
	plan->entries = xgrow(plan->entries, plan->n_entries, sizeof(*plan->entries));
	plan->entries[plan->n_entries++] = (struct mount_entry){
		.kind = kind,
		.flags = flags,
		.source = source ? xstrdup(source) : NULL,
		.target = xstrdup(target),
		.options = options ? xstrdup(options) : NULL,
		.origin = origin,
		.depth = path_depth(target),
	};
}

#define CGROUP_TREE "/sys/fs/cgroup"

/* Options of a v1 hierarchy's mount that are no controller and no name:
 * left out, the jail's mount being its own. */
static bool cgroup1_generic(const char *opt)
{
	static const char *const generic[] = { "rw", "ro", "xattr", "clone_children", "noprefix", "cpuset_v2_mode",
					       "favordynmods", "nsdelegate", "memory_recursiveprot", "memory_localevents" };
	for (size_t i = 0; i < ARRAY_SIZE(generic); i++)
		if (streq(opt, generic[i]))
			return true;
	return str_has_prefix(opt, "release_agent=");
}

/* The cgroup tree a runtime reads its limits from, as the host lays it
 * out, each hierarchy mounted afresh in the jail's own cgroup namespace
 * (rooted at the run's group): cgroup2 alone at /sys/fs/cgroup on a
 * unified host; on a hybrid one, each v1 hierarchy at its host path
 * (options: its controllers, or its name), cgroup2 at its own, and the
 * host's links (cpu -> cpu,cpuacct), so that a runtime finds its limits
 * through mountinfo (the JVM, Go) or at the usual paths (libuv reads
 * /sys/fs/cgroup/memory/...). Never the host's own tree. */
static void add_cgroup_tree(struct mount_plan *plan, const char *origin)
{
	struct statfs sfs;
	_cleanup_free_ char *mounts = NULL;
	if ((statfs(CGROUP_TREE, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC) ||
	    read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 20, &mounts, NULL) < 0) {
		add(plan, MOUNT_CGROUP, MOUNT_READONLY, NULL, CGROUP_TREE, NULL, origin);
		return;
	}
	size_t before = plan->n_entries;
	for (char *line = mounts, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - TYPE SOURCE SUPER" */
		char *sep = strstr(line, " - ");
		if (!sep || strchr(line, '\\'))
			continue;
		*sep = '\0';
		char *save = NULL, *f = strtok_r(line, " ", &save), *mount = NULL;
		for (int i = 0; f && i < 4; i++)
			mount = f = strtok_r(NULL, " ", &save);
		char *type = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save);
		char *super = strtok_r(NULL, " ", &save);
		if (!mount || !type || !path_is_beneath(mount, CGROUP_TREE) || streq(mount, CGROUP_TREE))
			continue;
		if (streq(type, "cgroup2")) {
			add(plan, MOUNT_CGROUP, MOUNT_READONLY, NULL, mount, NULL, origin);
			continue;
		}
		if (!streq(type, "cgroup") || !super)
			continue;
		struct text opts = { 0 };
		bool controller = false;
		char *s2 = NULL;
		for (char *o = strtok_r(super, ",", &s2); o; o = strtok_r(NULL, ",", &s2)) {
			if (cgroup1_generic(o))
				continue;
			controller |= !str_has_prefix(o, "name=");
			if (opts.n)
				text_addc(&opts, ',');
			text_adds(&opts, o);
		}
		/* A named hierarchy with no controller (name=systemd). */
		if (!controller)
			text_adds(&opts, opts.n ? ",none" : "none");
		_cleanup_free_ char *o = text_take(&opts);
		add(plan, MOUNT_CGROUP, MOUNT_READONLY, "cgroup", mount, o, origin);
	}
	if (plan->n_entries == before) {
		add(plan, MOUNT_CGROUP, MOUNT_READONLY, NULL, CGROUP_TREE, NULL, origin);
		return;
	}
	/* The host's links beside them: cpu -> cpu,cpuacct. */
	_cleanup_close_ int fd = open(CGROUP_TREE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d)
		return;
	fd = -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		char target[256];
		ssize_t n;
		if (de->d_type != DT_LNK || (n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1)) <= 0)
			continue;
		target[n] = '\0';
		_cleanup_free_ char *at = path_join(CGROUP_TREE, de->d_name);
		add(plan, MOUNT_SYMLINK, 0, target, at, NULL, origin);
	}
	closedir(d);
}

static bool beneath_special(const char *path)
{
	return path_is_beneath(path, "/proc") || path_is_beneath(path, "/dev");
}

/* What the jail has at path before this rule's own mount: the mount of the
 * nearest rule above it. */
static const struct rule *enclosing(const struct policy *p, const char *path)
{
	if (streq(path, "/"))
		return NULL;
	_cleanup_free_ char *parent = path_parent(path, NULL);
	return policy_rule_for(p, parent);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct mount_entry *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return strcmp(x->target, y->target);
}

/* The entry added last, moved to its place in a plan in order. */
static void place_last(struct mount_plan *plan)
{
	size_t n = plan->n_entries - 1, lo = 0, hi = n;
	struct mount_entry e = plan->entries[n];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (entry_cmp(&plan->entries[mid], &e) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&plan->entries[lo + 1], &plan->entries[lo], (n - lo) * sizeof(e));
	plan->entries[lo] = e;
}

int mount_plan(const struct policy *p, struct mount_plan *ret)
{
	*ret = (struct mount_plan){ .workspace = p->workspace ? xstrdup(p->workspace) : NULL };
	struct mount_plan *plan = ret;

	add(plan, MOUNT_PROC, 0, NULL, "/proc", NULL, "the jail's own /proc");
	add(plan, MOUNT_TMPFS, 0, NULL, "/dev", "mode=0755,size=64k,nr_inodes=64", "a minimal /dev");
	add(plan, MOUNT_DEVPTS, 0, NULL, "/dev/pts", "newinstance,ptmxmode=0666,mode=0620", "a devpts of the jail's own");
	add(plan, MOUNT_SYMLINK, 0, "pts/ptmx", "/dev/ptmx", NULL, "a devpts of the jail's own");
	/* The home, /tmp and /dev/shm: directories of one tmpfs, so that
	 * --tmp-size bounds them together. */
	const struct size_spec *ts = &p->limits.tmp_size;
	char num[21];
	plan->shared_options = ts->bytes ? xstrcat3("size=", fmt_u64(num, ts->bytes), ",nr_inodes=1m")
					 : xstrcat3("size=", fmt_u64(num, ts->percent ? ts->percent : 50), "%,nr_inodes=1m");
	add(plan, MOUNT_TMPFS, MOUNT_SHARED, NULL, "/dev/shm", "mode=1777", "a private /dev/shm");
	add(plan, MOUNT_SYMLINK, 0, "/proc/self/fd", "/dev/fd", NULL, "a minimal /dev");
	add(plan, MOUNT_SYMLINK, 0, "/proc/self/fd/0", "/dev/stdin", NULL, "a minimal /dev");
	add(plan, MOUNT_SYMLINK, 0, "/proc/self/fd/1", "/dev/stdout", NULL, "a minimal /dev");
	add(plan, MOUNT_SYMLINK, 0, "/proc/self/fd/2", "/dev/stderr", NULL, "a minimal /dev");

	for (size_t i = 0; i < policy_n_all(p); i++) {
		const struct rule *r = policy_rule_at(p, i);
		/* Only the winner on each path is rendered. */
		const struct rule *w = policy_rule_for(p, r->path);
		if (w != r)
			continue;
		if (r->flags & RULE_DEVICE) {
			/* The jail has a devpts of its own: neither the host's
			 * nor the caller's terminal in it is bound. Read-only:
			 * a device node is read and written all the same, but
			 * its mode, owner, attributes and times are the host's
			 * (a root run's chmod 0 /dev/null). */
			if (str_has_prefix(r->path, "/dev/") && !path_is_beneath(r->path, "/dev/pts"))
				add(plan, MOUNT_BIND, MOUNT_DEVICE | MOUNT_FILE | MOUNT_READONLY, r->path, r->path, NULL,
				    r->origin);
			continue;
		}
		if (beneath_special(r->path) || (r->flags & RULE_CARRIED))
			continue;
		/* The cgroup tree a runtime reads its limits from: the jail's
		 * own cgroup namespace's, never the host's whole tree. */
		if (streq(r->path, CGROUP_TREE) && r->access == ACCESS_READ) {
			add_cgroup_tree(plan, r->origin);
			continue;
		}
		if (path_is_beneath(r->path, "/sys/fs/cgroup") && policy_effect(p, "/sys/fs/cgroup") == EFFECT_READ)
			continue;
		if (r->flags & RULE_FRESH) {
			add(plan, MOUNT_TMPFS, MOUNT_SHARED, NULL, r->path, streq(r->path, "/tmp") ? "mode=1777" : "mode=0700",
			    r->origin);
			continue;
		}

		struct stat st;
		if (lstat(r->path, &st) < 0)
			continue;
		unsigned file = S_ISDIR(st.st_mode) ? 0 : MOUNT_FILE;
		unsigned beneath = (r->flags & RULE_BENEATH) ? MOUNT_BENEATH : 0;
		const struct rule *outer = enclosing(p, r->path);
		enum effect around = outer ? policy_effect(p, outer->path) : EFFECT_NONE;
		bool outer_fresh = outer && (outer->flags & RULE_FRESH);

		switch (r->access) {
		case ACCESS_READ:
		case ACCESS_WRITE: {
			if (S_ISLNK(st.st_mode))
				break;
			enum effect e = policy_effect(p, r->path);
			/* The same host tree already bound around it: nothing
			 * to add. A fresh tmpfs around it holds nothing. */
			if (!outer_fresh && around == e)
				break;
			add(plan, MOUNT_BIND, (e == EFFECT_READ ? MOUNT_READONLY : 0) | file | beneath, r->path,
			    r->path, NULL, r->origin);
			break;
		}
		case ACCESS_PROTECT:
			/* Only a writable tree needs the read-only hole; a
			 * symlink is left to the guard. */
			if (around == EFFECT_WRITE && !S_ISLNK(st.st_mode) && !outer_fresh)
				add(plan, MOUNT_BIND,
				    MOUNT_READONLY | file | beneath | (r->flags & RULE_HANDOFF ? MOUNT_IF_PRESENT : 0),
				    r->path, r->path, NULL, r->origin);
			break;
		case ACCESS_HIDE:
			if (around == EFFECT_NONE || S_ISLNK(st.st_mode) || outer_fresh)
				break;
			/* A grant beneath it (--read of one file the hide
			 * holds) needs its mount point made in the cover,
			 * which is sealed read-only after. */
			if (S_ISDIR(st.st_mode) && policy_has_rule_beneath(p, r->path))
				add(plan, MOUNT_TMPFS, MOUNT_SEAL, NULL, r->path, "mode=0111,size=64k,nr_inodes=256", r->origin);
			else if (S_ISDIR(st.st_mode))
				add(plan, MOUNT_TMPFS, MOUNT_READONLY, NULL, r->path, "mode=0000,size=4k,nr_inodes=4", r->origin);
			else
				add(plan, MOUNT_EMPTY_FILE, MOUNT_READONLY | MOUNT_FILE, NULL, r->path, NULL, r->origin);
			break;
		}
	}

	for (size_t i = 0; i < ARRAY_SIZE(system_links); i++) {
		char target[4096];
		struct stat st;
		if (lstat(system_links[i], &st) < 0 || !S_ISLNK(st.st_mode))
			continue;
		ssize_t n = readlink(system_links[i], target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		add(plan, MOUNT_SYMLINK, 0, target, system_links[i], NULL, "default: system");
	}

	qsort(plan->entries, plan->n_entries, sizeof(*plan->entries), entry_cmp);
	return 0;
}

void mount_plan_cover(struct mount_plan *plan, const char *path, const char *origin)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	/* Only inside what the plan binds: covering adds nothing elsewhere. */
	bool inside = false;
	for (size_t i = 0; i < plan->n_entries && !inside; i++)
		inside = plan->entries[i].kind == MOUNT_BIND && path_is_beneath(path, plan->entries[i].target);
	if (!inside)
		return;
	add(plan, MOUNT_EMPTY_FILE, MOUNT_READONLY | MOUNT_FILE | MOUNT_READABLE, NULL, path, NULL, origin);
	place_last(plan);
}

void mount_plan_add_text(struct mount_plan *plan, const char *path, const char *text, const char *origin)
{
	add(plan, MOUNT_TEXT, MOUNT_READONLY | MOUNT_FILE | MOUNT_READABLE, NULL, path, text, origin);
	place_last(plan);
}

void mount_plan_free(struct mount_plan *plan)
{
	for (size_t i = 0; i < plan->n_entries; i++) {
		free(plan->entries[i].source);
		free(plan->entries[i].target);
		free(plan->entries[i].options);
	}
	free(plan->entries);
	free(plan->workspace);
	free(plan->shared_options);
	*plan = (struct mount_plan){ 0 };
}

static const char *const kind_names[] = {
	[MOUNT_BIND] = "bind",	   [MOUNT_TMPFS] = "tmpfs",	    [MOUNT_PROC] = "proc",
	[MOUNT_DEVPTS] = "devpts", [MOUNT_EMPTY_FILE] = "empty-file", [MOUNT_SYMLINK] = "symlink",
	[MOUNT_CGROUP] = "cgroup2", [MOUNT_TEXT] = "file",
};

void mount_plan_print(FILE *f, const struct mount_plan *plan)
{
	fputs("mounts (in order; the root is a fresh tmpfs, read-only once built):\n", f);
	if (plan->shared_options)
		fprintf(f, "  (shared: the home, /tmp and /dev/shm are directories of one tmpfs, %s)\n", plan->shared_options);
	for (size_t i = 0; i < plan->n_entries; i++) {
		const struct mount_entry *e = &plan->entries[i];
		_cleanup_free_ char *target = str_visible(e->target);
		_cleanup_free_ char *source = e->source ? str_visible(e->source) : NULL;
		fprintf(f, "  %-10s %s", e->kind == MOUNT_CGROUP && e->source ? "cgroup" : kind_names[e->kind], target);
		if (e->kind == MOUNT_SYMLINK)
			fprintf(f, " -> %s", source);
		else if (e->kind == MOUNT_BIND && !streq(e->source, e->target))
			fprintf(f, " from %s", source);
		if (e->kind != MOUNT_SYMLINK)
			fprintf(f, " %s%s%s%s",
				e->flags & MOUNT_READONLY ? "ro"
				: e->flags & MOUNT_SEAL	  ? "ro (once what is beneath is mounted)"
							  : "rw",
				e->flags & MOUNT_DEVICE ? ",dev" : "", e->flags & MOUNT_SHARED ? ",shared" : "",
				e->flags & MOUNT_READABLE ? ",readable" : "");
		if (e->options && e->kind != MOUNT_TEXT) {
			fputc(' ', f);
			fputs_visible(e->options, f);
		}
		fputs("  (", f);
		fputs_visible(e->origin ? e->origin : "?", f);
		fputs(")\n", f);
	}
}

static const char *const step_names[] = {
	[MOUNT_STEP_PRIVATE] = "make the mounts private",
	[MOUNT_STEP_NEW_ROOT] = "mount the new root",
	[MOUNT_STEP_OPEN_ROOT] = "open the new root",
	[MOUNT_STEP_OPEN_WORKSPACE] = "open the workspace",
	[MOUNT_STEP_TARGET] = "create the mount point",
	[MOUNT_STEP_TEXT] = "write the run's policy into the root",
	[MOUNT_STEP_SYMLINK] = "symlink",
	[MOUNT_STEP_OPEN_SOURCE] = "open",
	[MOUNT_STEP_FSOPEN] = "fsopen",
	[MOUNT_STEP_FSCONFIG] = "fsconfig",
	[MOUNT_STEP_FSMOUNT] = "fsmount",
	[MOUNT_STEP_MOVE_MOUNT] = "move_mount",
	[MOUNT_STEP_OPEN_TREE] = "open_tree",
	[MOUNT_STEP_SETATTR] = "mount_setattr",
	[MOUNT_STEP_EMPTY_FILE] = "make the empty file that covers hidden files",
	[MOUNT_STEP_CHDIR] = "change to the new root",
	[MOUNT_STEP_PIVOT] = "pivot_root",
	[MOUNT_STEP_DETACH] = "detach the old root",
	[MOUNT_STEP_READ_ONLY] = "make the root read-only",
};

const char *mount_step_name(enum mount_step step)
{
	return (size_t)step < ARRAY_SIZE(step_names) && step_names[step] ? step_names[step] : "mount";
}

bool mount_step_is_path(enum mount_step step)
{
	return step == MOUNT_STEP_OPEN_WORKSPACE || step == MOUNT_STEP_TARGET || step == MOUNT_STEP_OPEN_SOURCE ||
	       step == MOUNT_STEP_SYMLINK;
}

void mount_describe(struct report *rep)
{
	report_enforced(rep, "filesystem: a new root of read-only and read-write binds; hidden paths not bound or covered");
	report_enforced(rep, "a fresh home, /tmp and /dev/shm on one tmpfs; a minimal /dev; the jail's own /proc and cgroup tree");
}

/* ---- applying, in the jail's init ---- */

/* The directories on the way to the last mount point, still open: the
 * plan is sorted, so the next target shares most of its path (the
 * fourteen under /dev, the cgroup tree), and each of them is made and
 * opened once instead of once a target. Each holds what the path leads
 * to now: a directory something was mounted on is never kept (the
 * target itself is not), so what lies below a mount is opened through
 * it. Only this process, with nothing else in its mount namespace yet,
 * makes anything in the new root. */
#define CHAIN_DEPTH 64
struct chain {
	int fd[CHAIN_DEPTH];		/* fd[i]: the directory after i + 1 components */
	char name[CHAIN_DEPTH][NAME_MAX + 1];
	size_t depth;
};

static void chain_cut(struct chain *c, size_t depth)
{
	while (c->depth > depth) {
		c->depth--;
		close(c->fd[c->depth]);
	}
}

static void chain_free(struct chain *c)
{
	chain_cut(c, 0);
}

/* Creates the mount point rel (a path below the new root) as a directory,
 * or an empty file, and returns it pinned as an O_PATH descriptor;
 * missing parents are made as directories on the way, and kept in the
 * chain. Nothing here follows a symlink. An existing_only one is opened
 * and never made: a hole in a tree already bound, whose path is the
 * host's own. symlink_only: the directory to make the link in. */
static int make_target(int root, struct chain *c, const char *rel, bool file, bool symlink_only, bool existing_only)
{
	/* On the stack, as the chain's names: the jail's init allocates
	 * nothing here (each heap page it wrote would be a copy of
	 * stockade's, and a fault). */
	char copy[PATH_MAX];
	if (strlen(rel) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, rel);
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	size_t depth = 0;
	int dir = root;
	_cleanup_close_ int deep = -1;	/* past the chain's depth: the one open */
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		bool last = !next;
		if (last && symlink_only) {
			if (deep >= 0)
				return TAKE_FD(deep);
			chain_cut(c, depth);
			int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
			return fd < 0 ? -errno : fd;
		}
		if (!last && deep < 0 && depth < c->depth && streq(c->name[depth], comp)) {
			dir = c->fd[depth++];
			comp = next;
			continue;
		}
		if (deep < 0)
			chain_cut(c, depth);
		if (existing_only) {
			/* opened below */
		} else if (last && file) {
			int fd = openat(dir, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
			if (fd >= 0)
				close(fd);
			else if (errno != EEXIST)
				return -errno;
		} else if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST) {
			return -errno;
		}
		int sub = open_nofollow(dir, comp, O_PATH | (last && file ? 0 : O_DIRECTORY), 0, OPEN_BENEATH);
		if (sub < 0 || last)
			return sub;
		if (deep < 0 && c->depth < CHAIN_DEPTH && strlen(comp) <= NAME_MAX) {
			c->fd[c->depth] = sub;
			strcpy(c->name[c->depth], comp);
			dir = sub;
			depth = ++c->depth;
		} else {
			if (deep >= 0)
				close(deep);
			dir = deep = sub;
		}
		comp = next;
	}
	return -EINVAL;	/* the root itself is no mount point */
}

static int attach(int mnt, int target)
{
	if (move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

/* A descriptor this pass is done with, to the closer of those closed
 * together (lib/fd.h); closed at once without one. */
static void done_with(struct fd_closer *done, int *fd)
{
	if (*fd < 0)
		return;
	if (done)
		fd_closer_add(done, TAKE_FD(*fd));
	else
		close(TAKE_FD(*fd));
}

/* A new filesystem's mount, detached: its descriptor, or -errno. */
static int make_fs(const char *type, const char *options, unsigned attrs, struct fd_closer *done,
		   enum mount_step *ret_step)
{
	*ret_step = MOUNT_STEP_FSOPEN;
	_cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	*ret_step = MOUNT_STEP_FSCONFIG;
	if (options) {
		char copy[PATH_MAX];
		if (strlen(options) >= sizeof(copy))
			return -E2BIG;
		strcpy(copy, options);
		char *save = NULL;
		for (char *opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(opt, '=');
			int r;
			if (eq) {
				*eq = '\0';
				r = fsconfig(fs, FSCONFIG_SET_STRING, opt, eq + 1, 0);
			} else {
				r = fsconfig(fs, FSCONFIG_SET_FLAG, opt, NULL, 0);
			}
			if (r < 0)
				return -errno;
		}
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	*ret_step = MOUNT_STEP_FSMOUNT;
	int mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (mnt < 0)
		return -errno;
	done_with(done, &fs);
	return mnt;
}

static int new_fs(const char *type, const char *options, unsigned attrs, int target, struct fd_closer *done,
		  enum mount_step *ret_step)
{
	int mnt = make_fs(type, options, attrs, done, ret_step);
	if (mnt < 0)
		return mnt;
	*ret_step = MOUNT_STEP_MOVE_MOUNT;
	int r = attach(mnt, target);
	done_with(done, &mnt);
	return r;
}

/* A tree cloned (open_tree's), made nosuid (nodev, read-only as flags
 * say) and private, and attached at target; done with then. */
static int place_tree(int tree, unsigned flags, int target, struct fd_closer *done, enum mount_step *ret_step)
{
	/* AT_RECURSIVE: a plain remount would leave submounts writable. */
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_NOSUID | (flags & MOUNT_DEVICE ? 0 : MOUNT_ATTR_NODEV) |
			    (flags & MOUNT_READONLY ? MOUNT_ATTR_RDONLY : 0),
		.propagation = MS_PRIVATE,
	};
	*ret_step = MOUNT_STEP_SETATTR;
	int r = mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0 ? -errno : 0;
	if (r == 0) {
		*ret_step = MOUNT_STEP_MOVE_MOUNT;
		r = attach(tree, target);
	}
	done_with(done, &tree);
	return r;
}

static int bind_tree(int source, unsigned flags, int target, struct fd_closer *done, enum mount_step *ret_step)
{
	*ret_step = MOUNT_STEP_OPEN_TREE;
	int tree = open_tree(source, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
						 (flags & MOUNT_FILE ? 0 : AT_RECURSIVE));
	if (tree < 0)
		return -errno;
	return place_tree(tree, flags, target, done, ret_step);
}

/* The run's one tmpfs, whose directories are the home, /tmp and
 * /dev/shm: made detached, each directory cloned from it where it is
 * bound, and never in the tree itself; its descriptor, or -errno. A
 * kernel before 6.15 clones nothing from a mount that is not attached
 * (EINVAL): there it is attached at /.stockade-shared in the new root
 * until its directories are bound (shared_attach), and detached from
 * there after, which waits for an RCU grace period (some 0.7 ms). */
#define SHARED_NAME ".stockade-shared"
struct shared {
	int fd;		/* the tmpfs's root, or -1 before the first */
	bool attached;	/* at /SHARED_NAME of the new root */
};

static int shared_attach(int root, struct shared *sh, enum mount_step *ret_step)
{
	*ret_step = MOUNT_STEP_TARGET;
	if (mkdirat(root, SHARED_NAME, 0700) < 0)
		return -errno;
	_cleanup_close_ int at = open_nofollow(root, SHARED_NAME, O_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
	if (at < 0)
		return at;
	*ret_step = MOUNT_STEP_MOVE_MOUNT;
	int r = attach(sh->fd, at);
	sh->attached = r == 0;
	return r;
}

static void shared_close(struct shared *sh)
{
	if (sh->fd >= 0)
		close(TAKE_FD(sh->fd));
}

/* Directory n of the shared tmpfs (made with fs_options at the first),
 * with the entry's mode, bound at target. */
static int shared_bind(struct shared *sh, int root, const char *fs_options, const char *options, size_t n,
		       int target, struct fd_closer *done, enum mount_step *ret_step)
{
	int r;
	if (sh->fd < 0 &&
	    (sh->fd = make_fs("tmpfs", fs_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, NULL, ret_step)) < 0)
		return sh->fd;
	char name[21];
	const char *num = fmt_u64(name, n);
	mode_t mode = options && str_has_prefix(options, "mode=") ? (mode_t)strtoul(options + 5, NULL, 8) : 0700;
	*ret_step = MOUNT_STEP_TARGET;
	if (mkdirat(sh->fd, num, 0700) < 0 || fchmodat(sh->fd, num, mode, 0) < 0)
		return -errno;
	*ret_step = MOUNT_STEP_OPEN_TREE;
	if (!sh->attached) {
		/* By its name (no AT_EMPTY_PATH): the one open_tree that
		 * takes a path, which a simulated older kernel refuses. */
		int tree = open_tree(sh->fd, num, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
							  AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT);
		if (tree >= 0)
			return place_tree(tree, 0, target, done, ret_step);
		if (errno != EINVAL)
			return -errno;
		if ((r = shared_attach(root, sh, ret_step)) < 0)
			return r;
	}
	_cleanup_close_ int src = open_nofollow(sh->fd, num, O_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
	if (src < 0)
		return src;
	r = bind_tree(src, 0, target, done, ret_step);
	done_with(done, &src);
	return r;
}

#define FAIL(s, pth, r)                                                        \
	do {                                                                   \
		ret->step = (s);                                               \
		ret->path = (pth);                                             \
		return (r);                                                    \
	} while (0)

int mount_apply(const struct mount_plan *plan, const char *root_dir, struct mount_failure *ret)
{
	return mount_apply_keep(plan, root_dir, NULL, ret);
}

int mount_apply_keep(const struct mount_plan *plan, const char *root_dir, int *ret_shared, struct mount_failure *ret)
{
	if (ret_shared)
		*ret_shared = -1;
	*ret = (struct mount_failure){ 0 };
	/* Mounts made here must not propagate back to the host, nor the
	 * host's later mounts (a USB stick, an sshfs) into the jail. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		FAIL(MOUNT_STEP_PRIVATE, "/", -errno);
	/* Room for the run's policy (thousands of rules with --hide-ignored);
	 * read-only once built, it holds nothing else. */
	if (mount("stockade", root_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64m,nr_inodes=4096") < 0)
		FAIL(MOUNT_STEP_NEW_ROOT, root_dir, -errno);
	_cleanup_close_ int root = open_nofollow(AT_FDCWD, root_dir, O_PATH | O_DIRECTORY, 0, 0);
	if (root < 0)
		FAIL(MOUNT_STEP_OPEN_ROOT, root_dir, root);
	_cleanup_close_ int ws = -1;
	if (plan->workspace) {
		ws = open_nofollow(AT_FDCWD, plan->workspace, O_PATH | O_DIRECTORY, 0, 0);
		if (ws < 0)
			FAIL(MOUNT_STEP_OPEN_WORKSPACE, plan->workspace, ws);
	}
	_cleanup_close_ int empty = -1;
	_cleanup_(shared_close) struct shared sh = { .fd = -1 };
	_cleanup_close_ int empty_readable = -1;
	/* its names not cleared: 16 KiB of stack written for nothing */
	_cleanup_(chain_free) struct chain chain;
	chain.depth = 0;
	/* Each mount's descriptors, closed together. */
	_cleanup_fd_closer_ struct fd_closer done = FD_CLOSER_INIT;

	for (size_t i = 0; i < plan->n_entries; i++) {
		const struct mount_entry *e = &plan->entries[i];
		const char *rel = e->target + 1;
		enum mount_step step = MOUNT_STEP_TARGET;

		if (e->kind == MOUNT_SYMLINK || e->kind == MOUNT_TEXT) {
			_cleanup_close_ int dir = make_target(root, &chain, rel, false, true, false);
			if (dir < 0)
				FAIL(step, e->target, dir);
			const char *name = strrchr(e->target, '/') + 1;
			if (e->kind == MOUNT_SYMLINK) {
				if (symlinkat(e->source, dir, name) < 0 && errno != EEXIST)
					FAIL(MOUNT_STEP_SYMLINK, e->target, -errno);
				continue;
			}
			/* In the root's own tmpfs, read-only once the root is. */
			_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
			int r = fd < 0 ? -errno : write_all(fd, e->options, strlen(e->options));
			if (r < 0)
				FAIL(MOUNT_STEP_TEXT, e->target, r);
			continue;
		}

		/* A hand-off's hole whose path another run's guard removed
		 * since the plan listed it: nothing there to protect, and
		 * what is made there later is the guard's to judge. */
		bool if_present = e->flags & MOUNT_IF_PRESENT;
		_cleanup_close_ int target = make_target(root, &chain, rel, e->flags & MOUNT_FILE, false, if_present);
		if (target == -ENOENT && if_present)
			continue;
		if (target < 0)
			FAIL(step, e->target, target);
		int r = 0;
		switch (e->kind) {
		case MOUNT_BIND: {
			/* The source, found without following symlinks; what
			 * was found inside the workspace, beneath it. */
			int src;
			if ((e->flags & MOUNT_BENEATH) && ws >= 0 && path_is_beneath(e->source, plan->workspace) &&
			    !streq(e->source, plan->workspace))
				src = open_nofollow(ws, path_below(e->source, plan->workspace), O_PATH, 0, OPEN_BENEATH);
			else
				src = open_nofollow(AT_FDCWD, e->source, O_PATH, 0, 0);
			if (src == -ENOENT && if_present)
				continue;
			if (src < 0)
				FAIL(MOUNT_STEP_OPEN_SOURCE, e->source, src);
			r = bind_tree(src, e->flags, target, &done, &step);
			done_with(&done, &src);
			break;
		}
		case MOUNT_TMPFS:
			if (e->flags & MOUNT_SHARED) {
				r = shared_bind(&sh, root, plan->shared_options, e->options, i, target, &done, &step);
				break;
			}
			r = new_fs("tmpfs", e->options,
				   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					   (e->flags & MOUNT_READONLY ? MOUNT_ATTR_RDONLY : 0),
				   target, &done, &step);
			break;
		case MOUNT_PROC:
			r = new_fs("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, target, &done, &step);
			break;
		case MOUNT_CGROUP:
			/* Its mount point only: the tree is mounted once init
			 * is in the run's groups (mount_apply_cgroups). */
			break;
		case MOUNT_DEVPTS:
			r = new_fs("devpts", e->options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, target, &done, &step);
			break;
		case MOUNT_EMPTY_FILE: {
			/* Mode 0: refused like the rest of what is hidden, root
			 * included once its capabilities are gone; a readable
			 * one (the resolver configuration) is mode 0444. */
			bool readable = e->flags & MOUNT_READABLE;
			int *which = readable ? &empty_readable : &empty;
			const char *path = readable ? "/.stockade-empty-readable" : "/.stockade-empty";
			const char *name = path + 1;
			if (*which < 0) {
				int fd = openat(root, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, readable ? 0444 : 0);
				if (fd < 0)
					FAIL(MOUNT_STEP_EMPTY_FILE, path, -errno);
				if (readable && fchmod(fd, 0444) < 0) {
					int err = -errno;
					close(fd);
					FAIL(MOUNT_STEP_EMPTY_FILE, path, err);
				}
				close(fd);
				*which = open_nofollow(root, name, O_PATH, 0, OPEN_BENEATH);
				if (*which < 0)
					FAIL(MOUNT_STEP_EMPTY_FILE, path, *which);
			}
			r = bind_tree(*which, MOUNT_READONLY | MOUNT_FILE, target, &done, &step);
			break;
		}
		case MOUNT_SYMLINK:
		case MOUNT_TEXT:
			break;
		}
		if (r < 0)
			FAIL(step, e->target, r);
		done_with(&done, &target);
	}
	for (size_t i = 0; i < plan->n_entries; i++) {
		const struct mount_entry *e = &plan->entries[i];
		if (!(e->flags & MOUNT_SEAL))
			continue;
		_cleanup_close_ int cover = open_nofollow(root, e->target + 1, O_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
		struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
		if (cover < 0)
			FAIL(MOUNT_STEP_TARGET, e->target, cover);
		if (mount_setattr(cover, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
			FAIL(MOUNT_STEP_READ_ONLY, e->target, -errno);
	}
	if (empty >= 0 && unlinkat(root, ".stockade-empty", 0) < 0)
		FAIL(MOUNT_STEP_EMPTY_FILE, "/.stockade-empty", -errno);
	if (sh.fd >= 0) {
		/* Its directories stay where they are bound; its root is no
		 * part of the tree (a descriptor the caller keeps holds it). */
		if (ret_shared)
			*ret_shared = fcntl(sh.fd, F_DUPFD_CLOEXEC, 3);
		shared_close(&sh);
	}
	if (sh.attached) {
		_cleanup_free_ char *at = path_join(root_dir, SHARED_NAME);
		if (umount2(at, MNT_DETACH) < 0)
			FAIL(MOUNT_STEP_DETACH, "/" SHARED_NAME, -errno);
		if (unlinkat(root, SHARED_NAME, AT_REMOVEDIR) < 0)
			FAIL(MOUNT_STEP_TARGET, "/" SHARED_NAME, -errno);
	}

	/* pivot_root onto itself, then detach the old root stacked beneath:
	 * no directory of the host's root stays reachable (nor held: the
	 * sources' descriptors are closed first). */
	fd_closer_flush(&done);
	if (fchdir(root) < 0)
		FAIL(MOUNT_STEP_CHDIR, root_dir, -errno);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		FAIL(MOUNT_STEP_PIVOT, root_dir, -errno);
	if (umount2(".", MNT_DETACH) < 0)
		FAIL(MOUNT_STEP_DETACH, "/", -errno);
	if (chdir("/") < 0)
		FAIL(MOUNT_STEP_CHDIR, "/", -errno);
	/* The root itself holds only mount points: read-only. */
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	if (mount_setattr(AT_FDCWD, "/", 0, &ro, sizeof(ro)) < 0)
		FAIL(MOUNT_STEP_READ_ONLY, "/", -errno);
	return 0;
}

int mount_apply_cgroups(const struct mount_plan *plan, struct mount_failure *ret)
{
	*ret = (struct mount_failure){ 0 };
	_cleanup_fd_closer_ struct fd_closer done = FD_CLOSER_INIT;
	for (size_t i = 0; i < plan->n_entries; i++) {
		const struct mount_entry *e = &plan->entries[i];
		if (e->kind != MOUNT_CGROUP)
			continue;
		_cleanup_close_ int target = open_nofollow(AT_FDCWD, e->target, O_PATH | O_DIRECTORY, 0, 0);
		if (target < 0)
			FAIL(MOUNT_STEP_TARGET, e->target, target);
		enum mount_step step;
		int r = new_fs(e->source ? e->source : "cgroup2", e->options,
			       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_RDONLY, target, &done,
			       &step);
		/* A v1 hierarchy the kernel will not mount here (an LSM's
		 * refusal): its limits unseen, as on a host without it. The
		 * tree is a view, not a boundary, and must not push the run
		 * onto another backend. */
		if (r < 0 && !e->source)
			FAIL(step, e->target, r);
		done_with(&done, &target);
	}
	return 0;
}
