#include "cgroup/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

/* Where the cgroup2 hierarchy is mounted: /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid host. */
static char *cgroup2_mount(void)
{
	/* The usual places first: a statfs each, where mountinfo is a few
	 * kilobytes to read and parse. */
	static const char *const usual[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < ARRAY_SIZE(usual); i++) {
		struct statfs sfs;
		if (statfs(usual[i], &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
			return xstrdup(usual[i]);
	}
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	char *line = NULL;
	size_t n = 0;
	char *found = NULL;
	while (!found && getline(&line, &n, f) > 0) {
		char *sep = strstr(line, " - cgroup2 ");
		if (!sep)
			continue;
		/* fields: id parent major:minor root mountpoint ... */
		char *save = NULL, *field = strtok_r(line, " ", &save);
		for (int i = 0; field && i < 4; i++)
			field = strtok_r(NULL, " ", &save);
		if (field && !strchr(field, '\\'))
			found = xstrdup(field);
	}
	free(line);
	return found;
}

char *cgroup_own(const char *name)
{
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 16, &text, NULL) < 0)
		return NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "ID:CONTROLLERS:PATH": "0::/x" (v2), "4:memory:/x" or
		 * "8:pids:/x" (v1; several controllers may share a line) */
		char *a = strchr(line, ':');
		char *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		*a = *b = '\0';
		bool match = !*name && streq(line, "0") && !a[1];
		for (char *save = NULL, *c = *name ? strtok_r(a + 1, ",", &save) : NULL; c && !match;
		     c = strtok_r(NULL, ",", &save))
			match = streq(c, name);
		if (match)
			return xstrdup(b + 1);
	}
	return NULL;
}

int cgroup_create(struct run_cgroup *cg)
{
	_cleanup_free_ char *mount = cgroup2_mount();
	_cleanup_free_ char *own = cgroup_own("");
	if (!mount || !own)
		return -ENOENT;
	_cleanup_free_ char *parent = path_join(mount, own);
	if (access(parent, W_OK) < 0)
		return -errno;	/* not delegated: the common case, decided cheaply */
	static unsigned counter;
	_cleanup_free_ char *dir = xasprintf("%s/stockade-%d-%u", parent, (int)getpid(), counter++);
	if (mkdir(dir, 0755) < 0)
		return -errno;
	/* cgroup.kill came with Linux 5.14; the root cgroup has none, so
	 * look in the new one. */
	_cleanup_free_ char *kill_file = path_join(dir, "cgroup.kill");
	_cleanup_free_ char *procs = path_join(dir, "cgroup.procs");
	int fd = access(kill_file, W_OK) == 0 ? open(procs, O_WRONLY | O_CLOEXEC) : -1;
	/* Joining needs write access to the parent's cgroup.procs too:
	 * check it now, not in the command's process. */
	_cleanup_free_ char *parent_procs = path_join(parent, "cgroup.procs");
	if (fd < 0 || access(parent_procs, W_OK) < 0) {
		int e = -errno;
		if (fd >= 0)
			close(fd);
		rmdir(dir);
		return e;
	}
	cg->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cg->dir = TAKE_PTR(dir);
	cg->procs_fd = fd;
	return 0;
}

void cgroup_remove(const struct run_cgroup *cg)
{
	/* rmdir succeeds once the last process is gone. */
	for (int i = 0; cg->dir && i < 500 && rmdir(cg->dir) < 0 && errno == EBUSY; i++)
		usleep(10000);
}

int cgroup_join(const struct run_cgroup *cg)
{
	if (cg->procs_fd < 0)
		return 0;
	if (write(cg->procs_fd, "0", 1) != 1)
		return -errno;
	return 0;
}

int cgroup_kill(const struct run_cgroup *cg)
{
	if (!cg->dir)
		return -ENOENT;
	_cleanup_free_ char *kill_file = path_join(cg->dir, "cgroup.kill");
	_cleanup_close_ int fd = open(kill_file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1)
		return -errno;
	return 0;
}

void cgroup_release(struct run_cgroup *cg)
{
	if (cg->procs_fd >= 0)
		close(cg->procs_fd);
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	if (cg->dir)
		rmdir(cg->dir);
	free(cg->dir);
	*cg = (struct run_cgroup)RUN_CGROUP_INIT;
}

/* ---- what the landlock backend's command sees of /sys/fs/cgroup ---- */

/* What runtimes read of their own group: the controllers' files (the
 * JVM's container support reads cpu, cpuset, memory and pids; Go, Rust,
 * .NET and libuv cpu and memory; io and blkio are the JVM's too), and
 * which controllers v2 gives it. Not cgroup.procs, nor another
 * controller's settings. */
static const char *const own_prefixes[] = {
	"cpu.", "cpuacct.", "cpuset.", "memory.", "pids.", "io.", "blkio.", "cgroup.controllers",
};

/* The limits of the groups above the run's, by name, v1 and v2: what the
 * JVM and Rust read of each ancestor (they take the lowest). A name a
 * hierarchy lacks is skipped. */
static const char *const ancestor_limits[] = {
	"cpu.max", "cpu.weight", "cpuset.cpus.effective", "cpuset.mems.effective",
	"memory.max", "memory.high", "memory.swap.max", "pids.max",
	"cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares", "cpuset.cpus", "cpuset.mems",
	"cpuset.effective_cpus", "cpuset.effective_mems", "memory.limit_in_bytes",
	"memory.memsw.limit_in_bytes", "memory.soft_limit_in_bytes", "memory.use_hierarchy",
};

/* The v1 controllers own_prefixes and ancestor_limits name files of. */
#define VIEW_CONTROLLERS "cpu,cpuacct,cpuset,memory,pids,blkio,io"

struct cgroup_line {
	char *controllers;	/* "" for v2's "0::" line */
	char *path;
};

/* Whether the comma-separated lists a and b share a name. */
static bool lists_share(const char *a, const char *b)
{
	_cleanup_free_ char *copy = xstrdup(a);
	for (char *save = NULL, *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(name);
		for (const char *q = b; (q = strstr(q, name)); q += n)
			if ((q == b || q[-1] == ',') && (q[n] == ',' || q[n] == '\0'))
				return true;
	}
	return false;
}

/* A group's path with no "." or ".." in it: a group outside the cgroup
 * namespace's root shows as "/../x", which must not lead out of the
 * mount. */
static bool plain_path(const char *path)
{
	for (const char *c = path; *c; c++)
		if (c[0] == '/' && c[1] == '.' && (c[2] == '/' || c[2] == '\0' || (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))
			return false;
	return true;
}

static void view_add(struct cgroup_view *v, char *path, bool whole)
{
	v->paths = xgrow(v->paths, v->n_paths, sizeof(*v->paths));
	v->paths[v->n_paths++] = (struct cgroup_view_path){ .path = path, .whole = whole };
}

/* The regular files of dir that are the own group's (own_prefixes) or
 * an ancestor's limits (ancestor_limits), each a path of the view.
 * Symlinks and directories (other groups) are never among them. */
static void view_add_files(struct cgroup_view *v, const char *dir, bool own)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d)
		return;
	fd = -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_REG)
			continue;
		bool wanted = false;
		for (size_t i = 0; own && i < ARRAY_SIZE(own_prefixes) && !wanted; i++)
			wanted = str_has_prefix(de->d_name, own_prefixes[i]);
		for (size_t i = 0; !own && i < ARRAY_SIZE(ancestor_limits) && !wanted; i++)
			wanted = streq(de->d_name, ancestor_limits[i]);
		if (wanted)
			view_add(v, path_join(dir, de->d_name), false);
	}
	closedir(d);
}

/* One hierarchy: mounted at mount, from the hierarchy's root; the
 * process's group in it, path; a group made for the run beneath mount,
 * if any. */
static void view_hierarchy(struct cgroup_view *v, const char *mount, const char *root, const char *path,
			   char *const *made, size_t n_made)
{
	const char *run = NULL;
	for (size_t i = 0; i < n_made && !run; i++)
		if (made[i] && path_is_beneath(made[i], mount) && !streq(made[i], mount))
			run = made[i];
	_cleanup_free_ char *own = NULL;
	if (!run) {
		/* The mount shows its hierarchy from root: the group's
		 * directory is the path below it. */
		const char *below = streq(root, "/") ? path : path_is_beneath(path, root) ? path + strlen(root) : NULL;
		if (!below)
			return;
		own = streq(below, "/") ? xstrdup(mount) : path_join(mount, below);
	}
	_cleanup_free_ char *dir = xstrdup(run ? run : own);
	if (run)
		view_add(v, xstrdup(run), true);
	else
		view_add_files(v, own, true);
	while (!streq(dir, mount)) {
		char *up = path_parent(dir, NULL);
		free(dir);
		dir = up;
		if (!dir || !path_is_beneath(dir, mount))
			return;
		view_add_files(v, dir, false);
	}
}

void cgroup_view(char *const *made, size_t n_made, struct cgroup_view *ret)
{
	*ret = (struct cgroup_view){ 0 };
	_cleanup_free_ char *groups = NULL, *mounts = NULL;
	if (read_file_at(AT_FDCWD, "/proc/self/cgroup", 1 << 16, &groups, NULL) < 0 ||
	    read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 20, &mounts, NULL) < 0)
		return;
	struct cgroup_line lines[32];
	size_t n_lines = 0;
	for (char *line = groups, *next; line && *line && n_lines < ARRAY_SIZE(lines); line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "ID:CONTROLLERS:PATH" */
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b || b[1] != '/' || str_has_control(b + 1) || !plain_path(b + 1))
			continue;
		*b = '\0';
		lines[n_lines++] = (struct cgroup_line){ .controllers = a + 1, .path = b + 1 };
	}
	for (char *line = mounts, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS] - TYPE
		 * SOURCE SUPER-OPTIONS"; a path with a space is escaped
		 * (\040) and skipped. */
		char *sep = strstr(line, " - ");
		if (!sep || strchr(line, '\\'))
			continue;
		*sep = '\0';
		char *save = NULL, *root = NULL, *mount = NULL;
		char *f = strtok_r(line, " ", &save);
		for (int i = 0; f && i < 4; i++) {
			f = strtok_r(NULL, " ", &save);
			if (i == 2)
				root = f;
			if (i == 3)
				mount = f;
		}
		char *type = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save);
		char *super = strtok_r(NULL, " ", &save);
		if (!root || !mount || !type || !path_is_beneath(mount, "/sys/fs/cgroup"))
			continue;
		bool v2 = streq(type, "cgroup2");
		if (!v2 && (!streq(type, "cgroup") || !super))
			continue;
		/* A v1 hierarchy of none of the controllers whose files the
		 * view shows (devices, freezer, name=systemd, ...): nothing of
		 * it to read. */
		if (!v2 && !lists_share(VIEW_CONTROLLERS, super))
			continue;
		/* Its line: v2's "0::", or the v1 line naming one of the
		 * mount's controllers (or its name=). */
		for (size_t i = 0; i < n_lines; i++) {
			if (v2 ? !*lines[i].controllers : *lines[i].controllers && lists_share(lines[i].controllers, super)) {
				view_hierarchy(ret, mount, root, lines[i].path, made, n_made);
				break;
			}
		}
	}
}

void cgroup_view_free(struct cgroup_view *v)
{
	for (size_t i = 0; i < v->n_paths; i++)
		free(v->paths[i].path);
	free(v->paths);
	*v = (struct cgroup_view){ 0 };
}
