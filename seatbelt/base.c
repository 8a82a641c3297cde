/* What a process needs to start on macOS under a profile that denies
 * everything by default: each allowance with why, from what a shell,
 * git, Python, Node, cargo and clang ask for (read from public
 * deny-by-default profiles, Codex's and Chromium's, and Apple's own as
 * write-ups quote them; written here from the reasons, not copied). What
 * is not here stays denied: LaunchServices (`open -a`), the Keychain's
 * SecurityServer, preferences through cfprefsd, FSEvents, pasteboard,
 * AppleEvents (osascript), System V IPC, sysctl writes. */
#include "seatbelt/internal.h"

static const struct seatbelt_base_path base_paths[] = {
	/* Never all of /System: /System/Volumes/Data is the data volume
	 * again, every user's home beneath it. */
	{ "/System/Library", ACCESS_READ, "frameworks, dylibs and the dyld shared cache before macOS 13" },
	{ "/System/Cryptexes", ACCESS_READ, "the OS cryptex: dyld's shared cache on macOS 13 and later" },
	{ "/System/Volumes/Preboot/Cryptexes", ACCESS_READ, "the same cryptex, by the path dyld opens" },
	{ "/private/var/db/dyld", ACCESS_READ, "dyld's shared cache on older releases" },
	{ "/private/var/db/timezone", ACCESS_READ, "/etc/localtime points here: every program that prints a time" },
	{ "/private/var/select", ACCESS_READ, "/bin/sh reads /var/select/sh to pick the shell it runs" },
	{ "/private/var/db/xcode_select_link", ACCESS_READ, "xcrun (git, clang, make from the Command Line Tools) finds the developer folder by it" },
	{ "/Library/Developer/CommandLineTools", ACCESS_READ, "git, clang, make and the SDK /usr/bin's stubs run" },
	{ "/Applications/Xcode.app/Contents/Developer", ACCESS_READ, "the same from Xcode, where xcode-select points there" },
	{ "/Library/Apple/usr", ACCESS_READ, "Apple's own tools outside the sealed volume (path_helper's list)" },
	{ "/dev/dtracehelper", ACCESS_WRITE, "dyld registers each image's probes there at start" },
	{ "/dev/autofs_nowait", ACCESS_READ, "Foundation opens it so that a path lookup never waits on an automount" },
	{ "/dev/fd", ACCESS_WRITE, "a shell's <(...) and /dev/stdin: the process's own descriptors" },
};

const struct seatbelt_base_path *seatbelt_base_paths(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(base_paths);
	return base_paths;
}

struct allowance {
	const char *sbpl;
	const char *why;
};

static const struct allowance processes[] = {
	{ "(allow process-fork)", "a shell, make and test runners start processes; each still needs process-exec by path" },
	{ "(allow signal (target same-sandbox))", "job control and test runners signal their own; never a process outside the run" },
	{ "(allow process-info* (target same-sandbox))", "ps, waitpid bookkeeping, Node's process.kill(pid, 0): the run's own only" },
	{ "(allow process-codesigning-status* (target self))", "dyld and the Security framework ask for the process's own signature" },
};

static const struct allowance sysctls[] = {
	{ "(allow sysctl-read (sysctl-name-prefix \"hw.\"))", "CPU count and memory size: make -j, cargo, Node's os.cpus(), Python's os.cpu_count()" },
	{ "(allow sysctl-read (sysctl-name-prefix \"machdep.cpu.\"))", "CPU features: clang, Rust's std::is_x86_feature_detected, OpenSSL" },
	{ "(allow sysctl-read (sysctl-name \"kern.ostype\") (sysctl-name \"kern.osrelease\") (sysctl-name \"kern.osversion\") (sysctl-name \"kern.osproductversion\") (sysctl-name \"kern.version\"))",
	  "uname(3): every build system asks what it runs on" },
	{ "(allow sysctl-read (sysctl-name \"kern.hostname\") (sysctl-name \"kern.argmax\") (sysctl-name \"kern.maxfilesperproc\") (sysctl-name \"kern.ngroups\") (sysctl-name \"kern.usrstack64\") (sysctl-name \"kern.boottime\") (sysctl-name \"kern.secure_kernel\") (sysctl-name \"vm.loadavg\"))",
	  "gethostname, xargs's ARG_MAX, ulimit, getgroups, the stack, uptime and load: libc and the runtimes" },
	{ "(allow sysctl-read (sysctl-name \"sysctl.proc_cputype\") (sysctl-name \"sysctl.proc_translated\") (sysctl-name \"sysctl.proc_native\"))",
	  "whether the process runs under Rosetta: the toolchains pick binaries by it" },
	{ "(allow sysctl-read (sysctl-name-prefix \"kern.proc.pid.\"))",
	  "a process's own entry by pid (Go's and Node's runtimes, ps -p $$); the name cannot tell its own pid from another's (see unenforced); the whole table, kern.proc.all, stays denied" },
};

static const struct allowance mach[] = {
	{ "(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))", "getpwuid and getgrgid: a shell's prompt, git's identity, Python's pwd" },
	{ "(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.membership\"))", "group membership (id, getgrouplist, access checks in Foundation)" },
	{ "(allow mach-lookup (global-name \"com.apple.system.notification_center\"))", "notify(3): libc learns of time zone and locale changes through it" },
	{ "(allow mach-lookup (global-name \"com.apple.system.logger\") (global-name \"com.apple.logd\"))", "syslog and os_log from the system libraries; refusing them only fills the log" },
	{ "(allow mach-lookup (global-name \"com.apple.bsd.dirhelper\"))", "confstr(_CS_DARWIN_USER_TEMP_DIR): Foundation's per-user temporary folder" },
};

static const struct allowance ipc[] = {
	{ "(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata (ipc-posix-name \"apple.shm.notification_center\"))", "notify(3)'s shared page, read only" },
	{ "(allow ipc-posix-sem)", "named POSIX semaphores: Python's multiprocessing and concurrent.futures; System V IPC stays denied" },
};

static void add_allowances(struct text *t, const char *title, const struct allowance *a, size_t n)
{
	text_adds(t, "\n; ");
	text_adds(t, title);
	text_addc(t, '\n');
	for (size_t i = 0; i < n; i++) {
		text_adds(t, a[i].sbpl);
		text_adds(t, " ; ");
		text_adds(t, a[i].why);
		text_addc(t, '\n');
	}
}

/* The network by mode. Unix sockets are network operations on macOS (a
 * connect to the Docker socket is network-outbound, never a file read):
 * none is allowed here, only by the path rules below, so a socket is
 * reached where the policy grants its path and nowhere else. */
static const struct allowance net_loopback[] = {
	{ "(allow network-bind network-inbound (local ip \"localhost:*\"))", "servers of the run, on loopback only (a bind to *:port is refused)" },
	{ "(allow network-outbound (remote ip \"localhost:*\"))", "clients of those servers; no other host. Name lookups (mDNSResponder) stay denied: a lookup carries data out" },
};

static const struct allowance net_on[] = {
	{ "(allow network-bind network-inbound (local ip \"*:*\"))", "--net on: servers on any address" },
	{ "(allow network-outbound (remote ip \"*:*\"))", "--net on: any host" },
	{ "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))", "--net on: name lookups go to mDNSResponder's socket" },
	{ "(allow mach-lookup (global-name \"com.apple.dnssd.service\"))", "--net on: and to its Mach service (getaddrinfo)" },
	{ "(allow mach-lookup (global-name \"com.apple.trustd\") (global-name \"com.apple.trustd.agent\"))", "--net on: TLS certificate checks (git and curl through the Security framework); the Keychain's SecurityServer stays denied" },
};

void seatbelt_base_head(struct text *t, enum net_mode net)
{
	text_adds(t, "(version 1)\n"
		     "; stockade: rendered from the policy (stockade explain --backend seatbelt)\n"
		     "; nothing is allowed but what a line below allows; the last line that matches decides\n"
		     "(deny default)\n");
	add_allowances(t, "processes", processes, ARRAY_SIZE(processes));
	add_allowances(t, "sysctls, read only: what libc and the toolchains ask at start (sysctl writes stay denied)", sysctls,
		       ARRAY_SIZE(sysctls));
	add_allowances(t, "Mach services: the few libc needs (LaunchServices, SecurityServer, cfprefsd, pasteboard stay denied)",
		       mach, ARRAY_SIZE(mach));
	add_allowances(t, "IPC", ipc, ARRAY_SIZE(ipc));
	switch (net) {
	case NET_OFF:
		text_adds(t, "\n; network off: no address, no name lookup; Unix sockets only where a path rule below grants them\n");
		break;
	case NET_LOOPBACK:
		add_allowances(t, "network loopback: the run's own listeners; Unix sockets only where a path rule below grants them",
			       net_loopback, ARRAY_SIZE(net_loopback));
		break;
	case NET_ALLOW:
		/* No relay on macOS: the allowed names stay out of reach,
		 * which the report names, rather than the network opened. */
		add_allowances(t, "network allow, as loopback (no relay on macOS: the allowed names are not reached); Unix "
				  "sockets only where a path rule below grants them",
			       net_loopback, ARRAY_SIZE(net_loopback));
		break;
	case NET_ON:
		add_allowances(t, "network on; Unix sockets still only where a path rule below grants them", net_on,
			       ARRAY_SIZE(net_on));
		break;
	}
}
