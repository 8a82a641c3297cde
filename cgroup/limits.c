#include "cgroup/limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/vfs.h>

#include "lib/fd.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "cgroup/cgroup.h"

static uint64_t host_memory(void)
{
	struct sysinfo si;
	if (sysinfo(&si) < 0)
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

static bool is_fs(const char *path, unsigned long magic)
{
	struct statfs sfs;
	return statfs(path, &sfs) == 0 && (unsigned long)sfs.f_type == magic;
}

static int write_text(const char *dir, const char *file, const char *text)
{
	_cleanup_free_ char *path = path_join(dir, file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	if (write(fd, text, n) != (ssize_t)n)
		return -errno;
	return 0;
}

static bool has_file(const char *dir, const char *file)
{
	_cleanup_free_ char *path = path_join(dir, file);
	return access(path, F_OK) == 0;
}

/* The groups of runs whose stockade was killed before it could remove
 * them: empty once their processes are gone (rmdir refuses any other). */
static void sweep(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		/* stockade-limits-PID-N, and the run's own stockade-PID-N */
		const char *num = str_has_prefix(de->d_name, "stockade-limits-") ? de->d_name + strlen("stockade-limits-")
				  : str_has_prefix(de->d_name, "stockade-")	      ? de->d_name + strlen("stockade-")
										      : NULL;
		if (!num || *num < '1' || *num > '9')
			continue;
		long pid = strtol(num, NULL, 10);
		if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* A group of the run's own beneath this process's in the hierarchy at
 * mount (controller: a v1 hierarchy's name; "" for v2), with file set to
 * value; kept in l. False, and nothing left behind, when it cannot be. */
static bool make_group(struct run_limits *l, const char *mount, const char *controller, const char *file,
		       const char *value, char **ret_dir)
{
	if (l->n_dirs == ARRAY_SIZE(l->dirs))
		return false;
	_cleanup_free_ char *own = cgroup_own(controller);
	if (!own)
		return false;
	_cleanup_free_ char *parent = path_join(mount, own);
	if (access(parent, W_OK) < 0)
		return false;
	sweep(parent);
	static unsigned counter;
	_cleanup_free_ char *dir = xasprintf("%s/stockade-limits-%d-%u", parent, (int)getpid(), counter++);
	if (mkdir(dir, 0755) < 0)
		return false;
	/* How the command's process joins: it writes 0 there itself. In a v1
	 * hierarchy, "tasks": the writer's own thread alone, which the kernel
	 * moves without its global lock on every thread group (and the RCU
	 * grace period that lock waits for, 5 to 20 ms in a third of the
	 * runs); the process is single-threaded, so that is all of it. In
	 * v2, whose threads stay in their process's group, cgroup.procs. */
	_cleanup_free_ char *procs = path_join(dir, *controller ? "tasks" : "cgroup.procs");
	int fd = -1;
	if (!has_file(dir, file) || write_text(dir, file, value) < 0 ||
	    (fd = open(procs, O_WRONLY | O_CLOEXEC)) < 0) {
		rmdir(dir);
		return false;
	}
	l->procs[l->n_procs++] = fd;
	*ret_dir = xstrdup(dir);
	l->dirs[l->n_dirs++] = TAKE_PTR(dir);
	return true;
}

unsigned long limits_user_tasks(uid_t uid)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	unsigned long n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || st.st_uid != uid)
			continue;
		/* Its threads: the links of its task directory, two more than
		 * the threads (the kernel's proc_task_getattr), without making
		 * the whole status file. */
		_cleanup_free_ char *task = xstrcat3(de->d_name, "/", "task");
		n += fstatat(dirfd(d), task, &st, 0) == 0 && st.st_nlink > 2 ? st.st_nlink - 2 : 1;
	}
	closedir(d);
	return n;
}

unsigned long limits_user_tasks_within(uid_t uid, unsigned long slack)
{
	/* "running/total": total is every task of the host's, the
	 * kernel's threads included, at least the user's. */
	char buf[128];
	_cleanup_close_ int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (n > 0) {
		buf[n] = '\0';
		const char *slash = strchr(buf, '/');
		char *end = NULL;
		unsigned long total = slash ? strtoul(slash + 1, &end, 10) : 0;
		if (slash && end != slash + 1 && total > 0 && total <= slack)
			return total;
	}
	return limits_user_tasks(uid);
}

void limits_setup(const struct policy *p, enum backend backend, const char *run_cgroup, struct run_limits *ret)
{
	*ret = (struct run_limits)RUN_LIMITS_INIT;
	ret->max_procs = p->limits.max_procs;
	ret->memory = size_spec_bytes(&p->limits.memory, host_memory());
	if (backend == BACKEND_NONE || backend == BACKEND_SEATBELT)
		return;
	char procs[32], memory[32], num[21];
	stpcpy(procs, fmt_u64(num, ret->max_procs));
	stpcpy(memory, fmt_u64(num, ret->memory));

	/* The landlock backend's own cgroup, where the host delegated it the
	 * controllers. */
	if (run_cgroup) {
		_cleanup_free_ char *parent = path_parent(run_cgroup, NULL);
		if (parent)
			sweep(parent);
		if (has_file(run_cgroup, "pids.max") && write_text(run_cgroup, "pids.max", procs) == 0) {
			ret->procs_by = "cgroup pids.max";
			ret->pids_events = path_join(run_cgroup, "pids.events");
		}
		if (has_file(run_cgroup, "memory.max") && write_text(run_cgroup, "memory.max", memory) == 0) {
			(void)write_text(run_cgroup, "memory.swap.max", "0");
			ret->memory_by = "cgroup memory.max";
			ret->memory_events = path_join(run_cgroup, "memory.events");
		}
	}
	/* A v2 group of the run's own, then v1's hierarchies (a hybrid host,
	 * as root). */
	char *dir = NULL;
	static const char *const v2[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < ARRAY_SIZE(v2) && !run_cgroup && !ret->procs_by; i++) {
		if (!is_fs(v2[i], CGROUP2_SUPER_MAGIC) || !make_group(ret, v2[i], "", "pids.max", procs, &dir))
			continue;
		ret->procs_by = "cgroup pids.max";
		ret->pids_events = path_join(dir, "pids.events");
		if (has_file(dir, "memory.max") && write_text(dir, "memory.max", memory) == 0) {
			(void)write_text(dir, "memory.swap.max", "0");
			ret->memory_by = "cgroup memory.max";
			ret->memory_events = path_join(dir, "memory.events");
		}
		free(dir);
		dir = NULL;
	}
	if (!ret->procs_by && is_fs("/sys/fs/cgroup/pids", CGROUP_SUPER_MAGIC) &&
	    make_group(ret, "/sys/fs/cgroup/pids", "pids", "pids.max", procs, &dir)) {
		ret->procs_by = "cgroup v1 pids.max";
		ret->pids_events = path_join(dir, "pids.events");
		free(dir);
		dir = NULL;
	}
	if (!ret->memory_by && is_fs("/sys/fs/cgroup/memory", CGROUP_SUPER_MAGIC) &&
	    make_group(ret, "/sys/fs/cgroup/memory", "memory", "memory.limit_in_bytes", memory, &dir)) {
		ret->memory_by = "cgroup v1 memory.limit_in_bytes";
		ret->memory_events = path_join(dir, "memory.oom_control");
		free(dir);
		dir = NULL;
	}
	/* RLIMIT_NPROC: never binds a process whose real uid is root. */
	if (!ret->procs_by && p->uid != 0) {
		if (backend == BACKEND_NAMESPACES) {
			ret->nproc = ret->max_procs;
			ret->procs_by = "RLIMIT_NPROC, which counts the jail's own user namespace";
		} else {
			ret->nproc = ret->max_procs;
			ret->nproc_plus_user = true;
			ret->procs_by = "RLIMIT_NPROC, which counts every process of the user: the run may start what the user runs now "
					"plus the limit (at most an eighth more where the host's tasks stand in for the user's)";
		}
		/* Nested in a run that set one already: no raising the hard
		 * limit without a capability, and the lower one holds. */
		struct rlimit rl;
		if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && ret->nproc > rl.rlim_max) {
			ret->nproc = rl.rlim_max;
			ret->nproc_plus_user = false;
			ret->procs_by = "RLIMIT_NPROC, lower already where this run started (an outer run's limit, which holds)";
		}
	}
}

void limits_describe(const struct run_limits *l, const struct policy *p, const char *run_dir, struct report *rep)
{
	_cleanup_free_ char *procs_source = source_text(&p->limits.max_procs_source);
	_cleanup_free_ char *memory_source = source_text(&p->limits.memory_source);
	char size[64];
	size_spec_format(&p->limits.memory, host_memory(), size, sizeof(size));
	if (l->procs_by) {
		_cleanup_free_ char *what = xasprintf("processes: at most %lu, threads included (%s; %s)", l->max_procs,
						      procs_source, l->procs_by);
		report_enforced(rep, what);
	} else {
		_cleanup_free_ char *what = xasprintf("processes: at most %lu (%s)", l->max_procs, procs_source);
		report_gap(rep, what,
			   p->uid == 0 ? "no cgroup with the pids controller can be made here, and RLIMIT_NPROC does not hold root"
				       : "no cgroup with the pids controller can be made here");
	}
	char tmp[64];
	size_spec_format(&p->limits.tmp_size, host_memory(), tmp, sizeof(tmp));
	_cleanup_free_ char *tmp_source = source_text(&p->limits.tmp_size_source);
	if (!run_dir) {
		_cleanup_free_ char *what = xasprintf("the home, /tmp and /dev/shm: one tmpfs of at most %s (%s)", tmp, tmp_source);
		report_enforced(rep, what);
	} else {
		_cleanup_free_ char *what = xasprintf("the home and tmp: at most %s (%s)", tmp, tmp_source);
		/* where the run directories go, not this run's own: the same
		 * words from run to run (a gap is said once while it stays) */
		_cleanup_free_ char *where = path_parent(run_dir, NULL);
		_cleanup_free_ char *why = xasprintf("on the landlock backend they are directories in %s, a filesystem of the host's that stockade cannot bound%s",
						     where ? where : run_dir, l->memory_by ? " (its pages count against the run's memory)" : "");
		report_gap(rep, what, why);
	}
	if (l->memory_by) {
		_cleanup_free_ char *what = xasprintf("memory: at most %s (%s; %s)", size, memory_source, l->memory_by);
		report_enforced(rep, what);
	} else {
		_cleanup_free_ char *what = xasprintf("memory: at most %s (%s)", size, memory_source);
		report_gap(rep, what, "no cgroup with the memory controller can be made here");
	}
}

/* The number after key in a cgroup's events file ("max 3"). */
static unsigned long long events(const char *path, const char *key)
{
	_cleanup_free_ char *text = NULL;
	if (!path || read_file_at(AT_FDCWD, path, 4096, &text, NULL) < 0)
		return 0;
	size_t n = strlen(key);
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ' ')
			return strtoull(line + n + 1, NULL, 10);
	return 0;
}

void limits_after(const struct run_limits *l, const struct policy *p, struct report *rep)
{
	unsigned long long forks = events(l->pids_events, "max");
	if (forks) {
		_cleanup_free_ char *src = source_text(&p->limits.max_procs_source);
		log_note("the run reached its limit of %lu processes (%s): %llu fork(s) refused", l->max_procs, src, forks);
		_cleanup_free_ char *what = xasprintf("processes: the limit of %lu (%s), %llu fork(s)", l->max_procs, src, forks);
		_cleanup_free_ char *rule = xasprintf("at most %lu processes (%s)", l->max_procs, l->procs_by);
		_cleanup_free_ char *fix = xasprintf("--max-procs %lu", l->max_procs * 2);
		report_denial_ruled(rep, "limit", what, "EAGAIN", rule, src, fix);
	}
	unsigned long long kills = events(l->memory_events, "oom_kill");
	if (kills) {
		_cleanup_free_ char *src = source_text(&p->limits.memory_source);
		log_note("the run reached its memory limit (%s): %llu process(es) killed", src, kills);
		_cleanup_free_ char *what = xasprintf("memory: the limit (%s), %llu process(es) killed", src, kills);
		_cleanup_free_ char *rule = xasprintf("at most %llu bytes of memory (%s)", (unsigned long long)l->memory,
						      l->memory_by);
		/* twice the limit, in MiB: an option that works as given */
		_cleanup_free_ char *fix = xasprintf("--memory %lluM", (unsigned long long)((l->memory * 2 + (1 << 20) - 1) >> 20));
		report_denial_ruled(rep, "limit", what, "OOM", rule, src, fix);
	}
}

void limits_release(struct run_limits *l)
{
	for (size_t i = 0; i < l->n_procs; i++)
		if (l->procs[i] >= 0)
			close(l->procs[i]);
	/* Empty once every process of the run is gone. */
	for (size_t i = 0; i < l->n_dirs; i++) {
		for (int k = 0; k < 100 && rmdir(l->dirs[i]) < 0 && errno == EBUSY; k++)
			usleep(2000);
		free(l->dirs[i]);
	}
	free(l->pids_events);
	free(l->memory_events);
	*l = (struct run_limits)RUN_LIMITS_INIT;
}

void limits_doctor(FILE *f, bool json)
{
	struct policy p;
	policy_init(&p);
	p.uid = getuid();
	static const enum backend backends[] = { BACKEND_NAMESPACES, BACKEND_LANDLOCK };
	if (json)
		fputs("  \"limits\": {", f);
	for (size_t i = 0; i < ARRAY_SIZE(backends); i++) {
		struct run_limits l;
		limits_setup(&p, backends[i], NULL, &l);
		if (json) {
			fprintf(f, "%s\"%s\": {\"processes\": ", i ? ", " : "", backend_name(backends[i]));
			if (l.procs_by)
				json_string(f, l.procs_by);
			else
				fputs("null", f);
			fputs(", \"memory\": ", f);
			if (l.memory_by)
				json_string(f, l.memory_by);
			else
				fputs("null", f);
			fprintf(f, ", \"tmpfs\": %s}", backends[i] == BACKEND_NAMESPACES ? "true" : "false");
			limits_release(&l);
			continue;
		}
		fprintf(f, "limits (%s):%*sprocesses by %s; memory %s%s\n", backend_name(backends[i]),
			(int)(13 - strlen(backend_name(backends[i]))), "",
			l.procs_by ? l.procs_by : "nothing (unbounded here)", l.memory_by ? "by " : "",
			l.memory_by ? l.memory_by : "unbounded here (no cgroup with the memory controller)");
		limits_release(&l);
	}
	if (json) {
		fputs("},\n", f);
		policy_free(&p);
		return;
	}
	fputs("limits (tmpfs):        the namespace jail's home, /tmp and /dev/shm: one tmpfs (--tmp-size); the landlock "
	      "backend's: directories on the host's $XDG_RUNTIME_DIR, /dev/shm or TMPDIR, which stockade cannot bound\n",
	      f);
	policy_free(&p);
}
