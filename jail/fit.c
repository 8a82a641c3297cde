#include "jail/fit.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "cgroup/cgroup.h"
#include "cgroup/limits.h"
#include "jail/ids.h"
#include "policy/report.h"
#include "seccomp/seccomp.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/util.h"
#include "landlock/landlock.h"
#include "netns/netns.h"

static int read_int_file(const char *path, int fallback)
{
	_cleanup_free_ char *s = NULL;
	if (read_file_at(AT_FDCWD, path, 32, &s, NULL) < 0)
		return fallback;
	return atoi(s);
}

struct probe_result {
	int step;
	int err;
};

/* Runs fn in a child and brings back which step failed and its errno;
 * probing by trying must not change stockade's own process. */
static struct probe_result probe_in_child(int (*fn)(int *ret_step))
{
	int p[2];
	struct probe_result res = { .step = -1, .err = EIO };
	if (pipe2(p, O_CLOEXEC) < 0)
		return res;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return res;
	}
	if (pid == 0) {
		close(p[0]);
		struct probe_result r = { 0 };
		int e = fn(&r.step);
		r.err = e < 0 ? -e : 0;
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	size_t got = 0;
	if (read_all(p[0], &res, sizeof(res), &got) < 0 || got != sizeof(res))
		res = (struct probe_result){ .step = -1, .err = EIO };
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return res;
}

static const char *const userns_steps[] = {
	"unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS|CLONE_NEWCGROUP)",
	"writing the uid and gid maps",
	"making the mounts private",
	"mounting a tmpfs",
	"bringing up loopback over netlink",
};

static int try_userns(int *step)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	*step = 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
		    CLONE_NEWUTS | CLONE_NEWCGROUP) < 0)
		return -errno;
	*step = 1;
	int r = ids_map(0, uid, gid);
	if (r < 0)
		return r;
	*step = 2;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*step = 3;
	if (mount("stockade-probe", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=4k") < 0)
		return -errno;
	*step = 4;
	return netns_loopback_up();
}

static int try_notify(int *step)
{
	bool killable = false;
	int r = seccomp_probe_listener(&killable);
	*step = killable ? 1 : 2;
	return r;
}

/* pidfd_getfd on a child: what the supervisor does to a jailed process,
 * and what Yama's ptrace_scope 2 and 3 refuse. */
static int try_pidfd_getfd(int *step)
{
	*step = 0;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	int r = 0;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		r = -errno;
	} else {
		*step = 1;
		int fd = (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0);
		if (fd < 0)
			r = -errno;
		else
			close(fd);
		close(pidfd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return r;
}

#define APPARMOR_USERNS "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"

/* The profile tools/apparmor/stockade.in names "stockade", loaded. */
static bool apparmor_profile_loaded(void)
{
	_cleanup_free_ char *list = NULL;
	size_t len = 0;
	if (read_file_at(AT_FDCWD, "/sys/kernel/security/apparmor/profiles", 1 << 20, &list, &len) < 0)
		return false;
	for (char *line = list; line && *line;) {
		if (str_has_prefix(line, "stockade ("))
			return true;
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return false;
}

const char *fit_apparmor_hint(void)
{
	if (read_int_file(APPARMOR_USERNS, -1) != 1 || apparmor_profile_loaded())
		return NULL;
	return "AppArmor restricts user namespaces here and stockade's profile is not loaded: sudo make install "
	       "puts /etc/apparmor.d/stockade in place (stockade doctor says whether it is)";
}

/* Whether /proc/net/dev (this network namespace's) lists lo alone, or
 * with an outer namespace jail's way out that leads nowhere (its veth
 * pair, netns/outside.c); false when it cannot be read. */
static bool netns_only_loopback(void)
{
	_cleanup_free_ char *dev = NULL;
	if (read_file_at(AT_FDCWD, "/proc/net/dev", 1 << 16, &dev, NULL) < 0)
		return false;
	size_t n = 0;
	bool lo = false;
	/* Two header lines, then "  NAME: counters..." per interface. */
	for (char *line = dev; line && *line;) {
		char *colon = strchr(line, ':'), *end = strchr(line, '\n');
		if (colon && (!end || colon < end)) {
			char *name = line;
			while (*name == ' ')
				name++;
			size_t len = (size_t)(colon - name);
			bool is_lo = len == 2 && strncmp(name, "lo", 2) == 0;
			bool own = (len == strlen(NETNS_OUTSIDE_ROUTE) && strncmp(name, NETNS_OUTSIDE_ROUTE, len) == 0) ||
				   (len == strlen(NETNS_OUTSIDE_TAP) && strncmp(name, NETNS_OUTSIDE_TAP, len) == 0);
			n += !own;
			lo |= is_lo;
		}
		line = end ? end + 1 : NULL;
	}
	return n == 1 && lo;
}

void host_probe(struct host *h, int what)
{
	*h = (struct host){ .yama = -1, .legacy_tiocsti = -1, .apparmor_userns = -1 };
	struct utsname u;
	/* No printf on a run's path (see fmt_u64); the three fields fit. */
	_Static_assert(sizeof(h->kernel) >= 3 * sizeof(u.release), "uname's three fields fit");
	if (uname(&u) == 0)
		stpcpy(stpcpy(stpcpy(stpcpy(stpcpy(h->kernel, u.sysname), " "), u.release), " "), u.machine);
	int abi = landlock_abi();
	h->landlock_abi = abi > 0 ? abi : 0;
	h->landlock_err = abi < 0 ? -abi : (abi == 0 ? EOPNOTSUPP : 0);
	/* Yama's ptrace_scope 2 and 3 refuse pidfd_getfd: the supervisor
	 * could not act for the command. Absent here: one failed open. */
	h->yama = read_int_file("/proc/sys/kernel/yama/ptrace_scope", -1);
	/* A process under no filter can always have a listener: only one
	 * already filtered (a nested run) pays a fork to find out. */
	h->seccomp_filters = proc_self_status("Seccomp_filters");
	if (h->seccomp_filters > 0) {
		struct probe_result nr = probe_in_child(try_notify);
		h->listener_busy = nr.err == EBUSY;
		h->netns_loopback_only = h->listener_busy && netns_only_loopback();
	}
	if (what == HOST_CHEAP)
		return;
	h->probed = true;

	struct probe_result r = probe_in_child(try_userns);
	h->userns = r.err == 0;
	if (!h->userns) {
		h->userns_step = r.step >= 0 && (size_t)r.step < ARRAY_SIZE(userns_steps) ? userns_steps[r.step] : "probing";
		h->userns_err = r.err;
	}
	r = probe_in_child(try_notify);
	h->notify = r.err == 0 && r.step >= 1;
	h->notify_killable = h->notify && r.step == 1;
	h->notify_err = r.err;
	r = probe_in_child(try_pidfd_getfd);
	h->pidfd_getfd = r.err == 0;
	h->pidfd_getfd_err = r.err;

	struct run_cgroup cg = RUN_CGROUP_INIT;
	int c = cgroup_create(&cg);
	h->cgroup = c == 0;
	h->cgroup_err = c < 0 ? -c : 0;
	if (c == 0) {
		char *slash = strrchr(cg.dir, '/');
		h->cgroup_dir = xstrndup(cg.dir, (size_t)(slash - cg.dir));
	}
	cgroup_release(&cg);

	h->legacy_tiocsti = read_int_file("/proc/sys/dev/tty/legacy_tiocsti", -1);
	h->apparmor_userns = read_int_file(APPARMOR_USERNS, -1);
	h->apparmor_profile = apparmor_profile_loaded();
}

void host_free(struct host *h)
{
	free(h->cgroup_dir);
	h->cgroup_dir = NULL;
}

enum backend fit_choose(const struct policy *p, const struct host *h, const char **ret_why)
{
	if (p->mode == MODE_OFF) {
		*ret_why = "--mode off";
		return BACKEND_NONE;
	}
	if (p->backend != BACKEND_AUTO) {
		*ret_why = "chosen with --backend";
		return p->backend;
	}
	return fit_auto(h, ret_why);
}

enum backend fit_auto(const struct host *h, const char **ret_why)
{
	/* doctor has tried; a run tries by building the jail, and falls back
	 * when the host refuses it. */
	if (h->probed && !h->userns) {
		if (h->landlock_abi > 0) {
			*ret_why = "user namespaces are refused here; Landlock is enforced";
			return BACKEND_LANDLOCK;
		}
		*ret_why = "user namespaces are refused and Landlock is not enforced here";
		return BACKEND_NONE;
	}
	*ret_why = "user namespaces work here";
	return BACKEND_NAMESPACES;
}

static const char *const abi_gives[] = {
	[1] = "filesystem rights: execute, read, write, make and remove files and directories",
	[2] = "refer: renaming and linking across directories",
	[3] = "truncate",
	[4] = "TCP bind and connect rules",
	[5] = "ioctl on devices",
	[6] = "scoping of abstract Unix sockets and signals to the run",
	[7] = "audit logging of denials (for the administrator; not visible to stockade)",
};

static const char *err_name(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

/* What the landlock backend leaves of the host's /tmp, and what the
 * namespace jail leaves of Unix sockets (stockade.1, LIMITS). */
#define DOCTOR_HOST_TMP_LANDLOCK                                                                                  \
	"Landlock grants nothing there; the supervisor makes tmpfile() and mkstemp() files and sockets directly in " \
	"it, removed after the run; the names and metadata (stat) of your entries there stay visible"
#define DOCTOR_UNIX_NAMESPACES \
	"a host socket inside a --read or --write tree is reachable (no supervisor; Landlock governs no Unix connect)"

int doctor_print(const struct host *h, bool json, FILE *f)
{
	const char *why;
	enum backend auto_backend = fit_auto(h, &why);
	if (json) {
		fputs("{\n  \"kernel\": ", f);
		json_string(f, h->kernel);
		fprintf(f, ",\n  \"landlock\": {\"abi\": %d, \"gives\": [", h->landlock_abi);
		for (int i = 1; i <= h->landlock_abi && i < (int)ARRAY_SIZE(abi_gives); i++) {
			if (i > 1)
				fputs(", ", f);
			json_string(f, abi_gives[i]);
		}
		fputs("]},\n", f);
		fprintf(f, "  \"user_namespaces\": {\"work\": %s", h->userns ? "true" : "false");
		if (!h->userns) {
			fputs(", \"failed_at\": ", f);
			json_string(f, h->userns_step);
			fputs(", \"errno\": ", f);
			json_string(f, err_name(h->userns_err));
		}
		fprintf(f, "},\n  \"seccomp_user_notification\": {\"works\": %s, \"killable_wait\": %s, \"busy\": %s},\n",
			h->notify ? "true" : "false", h->notify_killable ? "true" : "false",
			h->listener_busy ? "true" : "false");
		fprintf(f, "  \"pidfd_getfd\": {\"works\": %s", h->pidfd_getfd ? "true" : "false");
		if (!h->pidfd_getfd) {
			fputs(", \"errno\": ", f);
			json_string(f, err_name(h->pidfd_getfd_err));
		}
		fprintf(f, "},\n  \"cgroup\": {\"delegated\": %s, \"path\": ", h->cgroup ? "true" : "false");
		if (h->cgroup_dir)
			json_string(f, h->cgroup_dir);
		else
			fputs("null", f);
		fprintf(f, "},\n  \"apparmor_userns\": {\"restricted\": %s, \"profile_loaded\": %s",
			h->apparmor_userns < 0 ? "null" : h->apparmor_userns ? "true" : "false",
			h->apparmor_profile ? "true" : "false");
		fputs("},\n", f);
		limits_doctor(f, true);
		fputs("  \"host_tmp\": {\"namespaces\": \"a tmpfs of the jail's own\", \"landlock\": ", f);
		json_string(f, DOCTOR_HOST_TMP_LANDLOCK);
		fputs("},\n  \"unix_sockets\": {\"landlock\": \"those a socket of the run is bound to, and --connect unix:PATH\", "
		      "\"namespaces\": ", f);
		json_string(f, DOCTOR_UNIX_NAMESPACES);
		fputs("},\n", f);
		fprintf(f, "  \"yama_ptrace_scope\": %d,\n  \"legacy_tiocsti\": %d,\n", h->yama, h->legacy_tiocsti);
		fputs("  \"auto_backend\": ", f);
		json_string(f, backend_name(auto_backend));
		fputs(",\n  \"why\": ", f);
		json_string(f, why);
		fputs("\n}\n", f);
		return ferror(f) ? -EIO : 0;
	}

	fprintf(f, "kernel:                 %s\n", h->kernel);
	if (h->landlock_abi > 0) {
		fprintf(f, "landlock:               ABI %d\n", h->landlock_abi);
		for (int i = 1; i < (int)ARRAY_SIZE(abi_gives); i++)
			fprintf(f, "  %s %d: %s\n", i <= h->landlock_abi ? "yes" : "no ", i, abi_gives[i]);
	} else {
		fprintf(f, "landlock:               not enforced (%s)\n", err_name(h->landlock_err));
		fputs("  hint: boot with lsm=...,landlock (CONFIG_SECURITY_LANDLOCK=y)\n", f);
	}
	if (h->userns)
		fputs("user namespaces:        work (tried: user, mount, pid, net, ipc, uts and cgroup namespaces, uid map, tmpfs, loopback)\n", f);
	else
		fprintf(f, "user namespaces:        refused at %s: %s\n", h->userns_step, err_name(h->userns_err));
	if (h->apparmor_userns < 0)
		fputs("apparmor userns:        no restriction of user namespaces here\n", f);
	else if (h->apparmor_userns == 0)
		fputs("apparmor userns:        not restricted (kernel.apparmor_restrict_unprivileged_userns = 0)\n", f);
	else if (h->apparmor_profile)
		fputs("apparmor userns:        restricted; stockade's profile is loaded and lets it make them\n", f);
	else
		fputs("apparmor userns:        restricted, and stockade's profile is not loaded: the namespace jail is refused\n"
		      "  hint: sudo make install puts /etc/apparmor.d/stockade in place and loads it\n", f);
	if (h->notify)
		fprintf(f, "seccomp notification:   works%s\n",
			h->notify_killable ? " (killable wait)" : " (without a killable wait: Linux < 5.19)");
	else if (h->listener_busy)
		fputs("seccomp notification:   busy: a filter this process runs under holds a listener (a nested run: "
		      "another jail or sandbox); runs load their filter without one (stockade(1), BACKENDS, nested runs)\n", f);
	else
		fprintf(f, "seccomp notification:   refused: %s\n", err_name(h->notify_err));
	if (h->pidfd_getfd)
		fputs("pidfd_getfd:            works\n", f);
	else
		fprintf(f, "pidfd_getfd:            refused: %s (the connect supervisor could not enforce loopback)\n",
			err_name(h->pidfd_getfd_err));
	if (h->cgroup)
		fprintf(f, "cgroup:                 delegated at %s: leftovers are killed with cgroup.kill, even if stockade is killed\n",
			h->cgroup_dir);
	else
		fprintf(f, "cgroup:                 not delegated here (%s): a killed stockade's run still ends (the namespace jail's "
			   "pid namespace dies with it; on the landlock backend the keeper, their subreaper, kills them), but a "
			   "kill of the keeper too leaves the landlock backend's processes running\n",
			err_name(h->cgroup_err));
	limits_doctor(f, false);
	fputs("host /tmp:              namespaces: a tmpfs of the jail's own; landlock: " DOCTOR_HOST_TMP_LANDLOCK "\n", f);
	fputs("unix sockets:           landlock: those a socket of the run is bound to, and --connect unix:PATH; "
	      "namespaces: " DOCTOR_UNIX_NAMESPACES "\n", f);
	if (h->yama < 0)
		fputs("yama ptrace_scope:      not present\n", f);
	else
		fprintf(f, "yama ptrace_scope:      %d%s\n", h->yama,
			h->yama >= 2 ? " (pidfd_getfd refused: loopback without namespaces is unenforced)" : "");
	if (h->legacy_tiocsti >= 0)
		fprintf(f, "legacy TIOCSTI:         %s (the seccomp filter refuses it either way)\n",
			h->legacy_tiocsti ? "enabled" : "disabled");
	fprintf(f, "backend auto picks:     %s (%s)\n", backend_name(auto_backend), why);
	return ferror(f) ? -EIO : 0;
}
