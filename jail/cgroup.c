#include "jail/cgroup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

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

static char *own_cgroup(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return NULL;
	char *line = NULL;
	size_t n = 0;
	char *found = NULL;
	while (!found && getline(&line, &n, f) > 0) {
		if (!str_has_prefix(line, "0::"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		found = xstrdup(line + 3);
	}
	free(line);
	return found;
}

int cgroup_create(struct run_cgroup *cg)
{
	_cleanup_free_ char *mount = cgroup2_mount();
	_cleanup_free_ char *own = own_cgroup();
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
