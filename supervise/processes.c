/* Calls that name another process, on the landlock backend: the filter
 * hands over each that does not name the caller itself, and the
 * supervisor lets it go on to the kernel only when what it names is a
 * process of the run (a descendant of stockade, which is the run's
 * subreaper); any other, stockade included, is answered ESRCH as the
 * namespace jail's pid namespace would answer. The arguments are
 * registers, not memory: the call goes on as checked. What is left is a
 * pid reused between the check and the call, which needs the whole pid
 * space to wrap in that window. */
#include "supervise/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include "lib/util.h"

#define PRIO_PROCESS_ 0
#define PRIO_PGRP_ 1
#define PRIO_USER_ 2
#define IOPRIO_WHO_PROCESS_ 1
#define IOPRIO_WHO_PGRP_ 2
#define IOPRIO_WHO_USER_ 3

/* Calls whose first argument is a pid; then those of (which, who). */
static const struct {
	int nr;
	const char *name;
	bool changes;
} by_pid[] = {
	{ SYS_prlimit64, "prlimit64", true },
	{ SYS_sched_setaffinity, "sched_setaffinity", true },
	{ SYS_sched_getaffinity, "sched_getaffinity", false },
	{ SYS_sched_setparam, "sched_setparam", true },
	{ SYS_sched_getparam, "sched_getparam", false },
	{ SYS_sched_setscheduler, "sched_setscheduler", true },
	{ SYS_sched_getscheduler, "sched_getscheduler", false },
	{ SYS_sched_setattr, "sched_setattr", true },
	{ SYS_sched_getattr, "sched_getattr", false },
	{ SYS_sched_rr_get_interval, "sched_rr_get_interval", false },
	{ SYS_pidfd_open, "pidfd_open", false },
}, by_which[] = {
	{ SYS_setpriority, "setpriority", true },
	{ SYS_getpriority, "getpriority", false },
	{ SYS_ioprio_set, "ioprio_set", true },
	{ SYS_ioprio_get, "ioprio_get", false },
};

bool supervise_process_call(int nr, const uint64_t args[6], struct sv_process_call *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(by_pid); i++)
		if (by_pid[i].nr == nr) {
			*ret = (struct sv_process_call){ .name = by_pid[i].name, .changes = by_pid[i].changes,
							 .kind = SV_TARGET_PROCESS, .id = (int32_t)(uint32_t)args[0] };
			return true;
		}
	for (size_t i = 0; i < ARRAY_SIZE(by_which); i++) {
		if (by_which[i].nr != nr)
			continue;
		bool io = nr == SYS_ioprio_set || nr == SYS_ioprio_get;
		int which = (int)(uint32_t)args[0];
		*ret = (struct sv_process_call){ .name = by_which[i].name, .changes = by_which[i].changes,
						 .id = (int32_t)(uint32_t)args[1] };
		ret->kind = which == (io ? IOPRIO_WHO_PROCESS_ : PRIO_PROCESS_) ? SV_TARGET_PROCESS
			    : which == (io ? IOPRIO_WHO_PGRP_ : PRIO_PGRP_)	    ? SV_TARGET_PGRP
			    : which == (io ? IOPRIO_WHO_USER_ : PRIO_USER_)	    ? SV_TARGET_USER
										    : SV_TARGET_NONE;
		return true;
	}
	return false;
}

/* Field n (from 1) of /proc/PID/stat, past the command's name, whose
 * parentheses may hold anything. */
static long stat_field(pid_t pid, int n)
{
	char path[64], num[21], buf[1024];
	stpcpy(stpcpy(stpcpy(path, "/proc/"), fmt_u64(num, (uint64_t)pid)), "/stat");
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* ") S ppid pgrp": the space before field 3, the state, then on. */
	p++;
	for (int field = 3; field < n; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	char *end;
	long v = strtol(p + 1, &end, 10);
	return end == p + 1 ? -1 : v;
}

bool sv_in_run(const struct supervisor *sv, pid_t pid)
{
	pid_t root = sv->root;
	if (pid <= 0 || pid == root || pid == getpid())
		return false;
	/* Up the parents: the run's processes and their orphans all come
	 * down from its root, the keeper (which is stockade's child, and no
	 * process of the run's: a prlimit64 on it would leave the run
	 * unended should stockade die). */
	for (int depth = 0; depth < 65536; depth++) {
		long parent = stat_field(pid, 4);
		if (parent == root)
			return true;
		if (parent <= 1)
			return false;
		pid = (pid_t)parent;
	}
	return false;
}

/* Every member of the process group is the run's: true; one outside, or
 * none at all, false. */
static bool group_in_run(const struct supervisor *sv, pid_t pgrp)
{
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	size_t members = 0;
	bool outside = false;
	struct dirent *de;
	while (!outside && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || stat_field((pid_t)pid, 5) != pgrp)
			continue;
		outside = !sv_in_run(sv, (pid_t)pid);
		members++;
	}
	closedir(d);
	return !outside && members > 0;
}

int sv_process_call(const struct supervisor *sv, const struct seccomp_notif *req, char *what, size_t size)
{
	struct sv_process_call c;
	snprintf(what, size, "system call %d", req->data.nr);
	if (!supervise_process_call(req->data.nr, (const uint64_t *)req->data.args, &c))
		return ENOSYS;
	switch (c.kind) {
	case SV_TARGET_NONE:
		return 0;	/* the kernel's EINVAL */
	case SV_TARGET_PROCESS:
		snprintf(what, size, "%s on pid %ld", c.name, c.id);
		/* 0 is the caller, and below 0 the kernel's own error. */
		return c.id > 0 && !sv_in_run(sv, (pid_t)c.id) ? ESRCH : 0;
	case SV_TARGET_PGRP: {
		long pgrp = c.id ? c.id : stat_field((pid_t)req->pid, 5);
		snprintf(what, size, "%s on process group %ld", c.name, pgrp);
		return pgrp >= 0 && !group_in_run(sv, (pid_t)pgrp) ? EPERM : 0;
	}
	case SV_TARGET_USER:
		/* Every process of the user: the run's are not told apart from
		 * the rest. */
		snprintf(what, size, "%s on every process of the user", c.name);
		return c.changes ? EPERM : 0;
	}
	return ENOSYS;
}
