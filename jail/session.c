/* The session verbs (session.h). */
#include "jail/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/holder.h"
#include "jail/keeper.h"
#include "jail/say.h"
#include "jail/terminal.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "lib/wire.h"
#include "policy/allow.h"
#include "policy/build.h"
#include "policy/env.h"
#include "policy/report.h"

extern char **environ;

/* The folder the sessions' sockets live in: the user's runtime
 * directory where it is private, or stockade's state directory; made
 * 0700, and refused unless it is the user's own and nobody else's. */
static int sessions_dir(char **ret)
{
	*ret = NULL;
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	_cleanup_free_ char *base = NULL;
	if (rt && rt[0] == '/' && lstat(rt, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
	    !(st.st_mode & 077)) {
		base = path_join(rt, "stockade");
	} else {
		struct policy_failure pf;
		if (policy_find_state_dir(environ, &base, &pf) < 0) {
			say_policy_failure(&pf);
			policy_failure_free(&pf);
			return -EINVAL;
		}
	}
	_cleanup_free_ char *dir = path_join(base, "sessions");
	(void)mkdir_private(dir, getuid());
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		log_error("cannot use '%s' for sessions: it must be a folder of yours that nobody else can reach (0700)", dir);
		log_hint("chmod 700 '%s'", dir);
		return -EPERM;
	}
	*ret = TAKE_PTR(dir);
	return 0;
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 64 || id[0] == '.' || id[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') || (id[i] >= '0' && id[i] <= '9') ||
		      id[i] == '.' || id[i] == '_' || id[i] == '-'))
			return false;
	return true;
}

/* A connection to the session's socket, hello said and not yet
 * answered: its fd, or -1 (said, unless quiet). */
static int session_dial(const char *dir, const char *id, bool quiet)
{
	if (!valid_id(id)) {
		if (!quiet)
			log_error("invalid session '%s': a session's id is letters, digits, '.', '_' and '-'", id);
		return -1;
	}
	_cleanup_free_ char *path = xstrcat3(dir, "/", id);
	_cleanup_free_ char *sock_path = xstrcat3(path, ".sock", "");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(sock_path) >= sizeof(a.sun_path)) {
		if (!quiet)
			log_error("cannot reach the session '%s': its socket path '%s' is too long", id, sock_path);
		return -1;
	}
	strcpy(a.sun_path, sock_path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (!quiet) {
			log_error("no session '%s' is running (%s)", id, strerror(e));
			log_hint("stockade session list shows those that are; stockade session start begins one");
		}
		return -1;
	}
	struct wire_out o = { 0 };
	wire_begin(&o, "hello");
	wire_add_long(&o, "version", WIRE_VERSION);
	int r = wire_send(fd, &o, NULL, 0);
	wire_out_free(&o);
	if (r < 0) {
		if (!quiet)
			log_error("cannot speak to the session '%s': %s", id, strerror(-r));
		close(fd);
		return -1;
	}
	return fd;
}

/* The session's answer to hello, read: true, or false with fd closed
 * (said, unless quiet). */
static bool session_answered(int fd, const char *id, struct wire_msg *ret_hello, bool quiet)
{
	struct wire_msg m = { 0 };
	int fds[WIRE_MAX_FDS];
	size_t n_fds = 0;
	int r = wire_recv(fd, &m, fds, WIRE_MAX_FDS, &n_fds);
	if (r < 0 || !m.type || !streq(m.type, "hello")) {
		if (!quiet)
			log_error("cannot speak to the session '%s': %s", id,
				  r < 0 ? strerror(-r) : wire_get(&m, "message") ? wire_get(&m, "message") : m.type);
		if (r == 0)
			wire_msg_free(&m);
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		close(fd);
		return false;
	}
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	if (ret_hello)
		*ret_hello = m;
	else
		wire_msg_free(&m);
	return true;
}

/* A connection to the session's socket, said hello to and answered: its
 * fd, or -1 (said, unless quiet). */
static int session_connect(const char *dir, const char *id, struct wire_msg *ret_hello, bool quiet)
{
	int fd = session_dial(dir, id, quiet);
	return fd >= 0 && session_answered(fd, id, ret_hello, quiet) ? fd : -1;
}

/* ---- start ---- */

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* 0600: the folder is 0700 already; the socket says it again. */
	mode_t old = umask(077);
	int r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 64) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int start(const struct options *o, unsigned long long start_us, session_run_fn run)
{
	_cleanup_free_ char *dir = NULL;
	if (sessions_dir(&dir) < 0)
		return EXIT_STOCKADE;
	char idbuf[17];
	const char *id = o->session_name;
	if (!id) {
		uint64_t v = 0;
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			v = now_usec() ^ (uint64_t)getpid();
		fmt_x64(idbuf, v);
		idbuf[8] = '\0';
		id = idbuf;
	}
	if (!valid_id(id)) {
		log_error("invalid --name '%s': use letters, digits, '.', '_' and '-' (at most 64), not '.' or '-' first", id);
		return EXIT_STOCKADE;
	}
	_cleanup_free_ char *stem = xstrcat3(dir, "/", id);
	_cleanup_free_ char *sock = xstrcat3(stem, ".sock", ""), *info = xstrcat3(stem, ".info", ""),
			    *logp = xstrcat3(stem, ".log", "");
	int live = session_connect(dir, id, NULL, true);
	if (live >= 0) {
		close(live);
		log_error("cannot start the session '%s': one of that name is running", id);
		log_hint("stockade session exec %s -- COMMAND uses it; stockade session stop %s ends it", id, id);
		return EXIT_STOCKADE;
	}
	(void)unlink(sock);
	int lfd = listen_on(sock);
	if (lfd < 0) {
		log_error("cannot make the session's socket '%s': %s", sock, strerror(-lfd));
		return EXIT_STOCKADE;
	}
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0) {
		log_error("cannot start the session: %m");
		close(lfd);
		return EXIT_STOCKADE;
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_error("cannot start the session: %m");
		close(lfd);
		return EXIT_STOCKADE;
	}
	if (pid == 0) {
		/* The holder: out of the caller's session, its terminal never
		 * held (nothing of the jail's may hold it), what it says in
		 * the session's log. */
		close(ready[0]);
		setsid();
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int logfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (null < 0 || logfd < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(logfd, 2) < 0)
			_exit(EXIT_STOCKADE);
		close(null);
		close(logfd);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		struct holder_setup hs = { .id = id, .sock_path = sock, .info_path = info, .listen_fd = lfd,
					   .ready_fd = ready[1], .idle_s = o->idle_s };
		struct holder *h = holder_new(&hs);
		int st = run(o, start_us, h);
		holder_finish(h);
		holder_free(h);
		keeper_reap();
		_exit(st == EXIT_STOCKADE ? EXIT_STOCKADE : 0);
	}
	close(lfd);
	close(ready[1]);
	/* Ready, or the holder's end: then what it said is the error. */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	char c = 0;
	for (;;) {
		struct pollfd fds[2] = { { .fd = ready[0], .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
		if (poll(fds, pidfd >= 0 ? 2 : 1, -1) < 0 && errno == EINTR)
			continue;
		if (fds[0].revents && read(ready[0], &c, 1) == 1)
			break;
		if (fds[0].revents || (pidfd >= 0 && fds[1].revents))
			break;
	}
	close(ready[0]);
	if (pidfd >= 0)
		close(pidfd);
	if (c != 'r') {
		(void)waitpid(pid, NULL, 0);
		_cleanup_free_ char *said = NULL;
		size_t len = 0;
		if (read_file_at(AT_FDCWD, logp, 1 << 16, &said, &len) == 0 && len)
			fputs(said, stderr);
		log_error("the session '%s' did not start", id);
		(void)unlink(sock);
		(void)unlink(info);
		(void)unlink(logp);
		return EXIT_STOCKADE;
	}
	printf("%s\n", id);
	return fflush(stdout) == 0 ? 0 : EXIT_STOCKADE;
}

/* ---- exec ---- */

static void hex(char *out, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* What an exec of this caller's would inherit beside its descriptors,
 * for the command (the zygote keeps each within the session's): the
 * signals it ignores (nohup's SIGHUP, a background job's SIGINT and
 * SIGQUIT; every other one is the default), its signal mask (read before
 * this blocks what it forwards), its umask (a umask 077 keeps the
 * command's files private as outside), niceness, CPUs (taskset's) and
 * limits. */
static void add_inherited(struct wire_out *out)
{
	unsigned long ign = signals_ignored();
	if (ign)
		wire_add_long(out, "sigign", (long)ign);
	sigset_t blocked;
	if (sigprocmask(SIG_BLOCK, NULL, &blocked) == 0) {
		long bits = 0;
		for (int sig = 1; sig < 32; sig++)
			if (sigismember(&blocked, sig) == 1)
				bits |= (long)SIGNAL_BIT(sig);
		wire_add_long(out, "sigblk", bits);
	}
	mode_t own_umask = umask(0);
	umask(own_umask);
	wire_add_long(out, "umask", (long)own_umask);
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	if (errno == 0)
		wire_add_long(out, "nice", nice);
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
		/* its bytes up to the last CPU set */
		const unsigned char *b = (const unsigned char *)&cpus;
		size_t n = sizeof(cpus);
		while (n > 0 && !b[n - 1])
			n--;
		char text[2 * sizeof(cpus) + 1] = "";
		hex(text, &cpus, n);
		if (n)
			wire_add(out, "cpus", text);
	}
	for (int res = 0; res < RLIM_NLIMITS; res++) {
		struct rlimit rl;
		char text[64];
		if (getrlimit(res, &rl) == 0) {
			snprintf(text, sizeof(text), "%d %llu %llu", res, (unsigned long long)rl.rlim_cur,
				 (unsigned long long)rl.rlim_max);
			wire_add(out, "rlimit", text);
		}
	}
}

static int say_error(const struct wire_msg *m)
{
	long st = EXIT_STOCKADE;
	(void)wire_get_long(m, "status", 0, 255, &st);
	const char *msg = wire_get(m, "message"), *hint = wire_get(m, "hint");
	log_error("%s", msg ? msg : "the session refused the command");
	if (hint)
		log_hint("%s", hint);
	return (int)st;
}

/* A signal for the command, to the session that runs it. */
static void send_signal(int sock, int sig)
{
	struct wire_out o = { 0 };
	wire_begin(&o, "signal");
	wire_add_long(&o, "sig", sig);
	(void)wire_send(sock, &o, NULL, 0);
	wire_out_free(&o);
}

/* The command stopped (Ctrl-Z through its pty): so does this client, the
 * user's mode back; continued, the command is. */
static void suspend(int sock, struct terminal *t)
{
	terminal_restore(t);
	kill(getpid(), SIGTSTP);
	terminal_resume(t);
	send_signal(sock, SIGCONT);
}

static int exec_verb(const struct options *o, const char *dir)
{
	/* The command goes right behind the hello, whose answer is read
	 * after it: one round trip, not two. A session that refuses the
	 * hello refuses the command too. */
	int sock = session_dial(dir, o->session_id, false);
	if (sock < 0)
		return EXIT_STOCKADE;
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	struct terminal term;
	bool tty = terminal_plan(&term);
	struct wire_out out = { 0 };
	wire_begin(&out, "exec");
	wire_add(&out, "cwd", cwd ? cwd : ".");
	for (size_t i = 0; o->argv[i]; i++)
		wire_add(&out, "arg", o->argv[i]);
	/* The caller's environment, with its own --env NAME=VALUE and
	 * --unset; the holder scrubs it as the session's policy says. */
	struct env e = { 0 };
	env_begin(&e, environ, o->layer.env_ops, o->layer.n_env_ops);
	for (size_t i = 0; e.envp[i]; i++)
		wire_add(&out, "env", e.envp[i]);
	env_free(&e);
	add_inherited(&out);
	/* What narrows this command's jail: the holder checks that it does. */
	for (size_t i = 0; i < o->layer.n_rules; i++) {
		const char *raw = o->layer.rules[i].path, *home = getenv("HOME");
		_cleanup_free_ char *abs = raw[0] == '/' ? xstrdup(raw)
					   : str_has_prefix(raw, "~/") && home ? path_join(home, raw + 2)
									      : path_join(cwd ? cwd : ".", raw);
		wire_add(&out, o->layer.rules[i].access == ACCESS_HIDE ? "hide" : "read", abs);
	}
	for (size_t i = 0; i < o->layer.n_allow; i++) {
		/* a built-in list by its name, once */
		const struct allow_entry *a = &o->layer.allow[i];
		if (a->list && i > 0 && o->layer.allow[i - 1].list && streq(o->layer.allow[i - 1].list, a->list))
			continue;
		_cleanup_free_ char *text = a->list ? xstrdup(a->list) : allow_entry_text(a);
		wire_add(&out, "allow", text);
	}
	if (o->layer.net_set)
		wire_add(&out, "net", net_mode_name(o->layer.net));
	/* The terminal stays here: the command gets a pty, and /dev/null
	 * in place of each descriptor that was the terminal. */
	int fds[4] = { 0, 1, 2, -1 };
	_cleanup_close_ int null = -1, report = -1;
	if (tty) {
		char tio[2 * sizeof(term.child.tio) + 1];
		hex(tio, &term.child.tio, sizeof(term.child.tio));
		wire_add_long(&out, "tty-fds", term.child.tty_fds);
		wire_add_long(&out, "ctty", term.child.controlling);
		wire_add_long(&out, "rows", term.child.ws.ws_row);
		wire_add_long(&out, "cols", term.child.ws.ws_col);
		wire_add(&out, "tio", tio);
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int fd = 0; fd <= 2; fd++)
			if (term.child.tty_fds & (1u << fd))
				fds[fd] = null;
	}
	size_t n_fds = 3;
	if (o->report) {
		report = report_open(o->report);
		if (report < 0) {
			log_error("cannot write the report '%s': %s", o->report, strerror(-report));
			close(sock);
			return EXIT_STOCKADE;
		}
		wire_add(&out, "report", "1");
		fds[n_fds++] = report;
	}
	/* Signals go to the command (the terminal's come through the pty),
	 * from before it can have started. */
	sigset_t mask, old;
	sigemptyset(&mask);
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	int r = wire_send(sock, &out, fds, n_fds);
	wire_out_free(&out);
	if (r < 0 || !session_answered(sock, o->session_id, NULL, false)) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r < 0) {
			log_error("cannot send the command to the session: %s", strerror(-r));
			if (r == -EMSGSIZE)
				log_hint("the environment and the arguments together must stay under 256 KiB");
			close(sock);
		}
		return EXIT_STOCKADE;
	}
	int status = -1;
	while (status < 0) {
		struct pollfd pfds[2 + TERMINAL_POLLFDS] = { { .fd = sock, .events = POLLIN },
							     { .fd = sig_fd, .events = POLLIN } };
		size_t n_term = tty && term.master >= 0 ? terminal_pollfds(&term, pfds + 2) : 0;
		if (poll(pfds, 2 + n_term, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (n_term)
			terminal_ready(&term, pfds + 2, n_term);
		if (n_term && terminal_hung_up(&term))
			send_signal(sock, SIGHUP);
		if (pfds[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
				int sig = (int)si.ssi_signo;
				if (sig == SIGWINCH && tty && term.master >= 0) {
					terminal_winch(&term);
					continue;
				}
				if (sig == SIGCONT) {
					if (tty && term.master >= 0)
						terminal_resume(&term);
					continue;
				}
				send_signal(sock, sig);
			}
		}
		if (!pfds[0].revents)
			continue;
		struct wire_msg m;
		int in[WIRE_MAX_FDS];
		size_t n_in = 0;
		r = wire_recv(sock, &m, in, WIRE_MAX_FDS, &n_in);
		if (r < 0) {
			log_error("the session ended before the command did");
			status = EXIT_STOCKADE;
			break;
		}
		if (streq(m.type, "started")) {
			if (tty && n_in > 0) {
				term.master = in[0];
				n_in = 0;
				terminal_start(&term);
			}
		} else if (streq(m.type, "said")) {
			const char *line = wire_get(&m, "line");
			if (line)
				fprintf(stderr, "%s\n", line);
		} else if (streq(m.type, "stopped")) {
			if (tty && term.master >= 0 && term.child.controlling)
				suspend(sock, &term);
		} else if (streq(m.type, "exit")) {
			long st = EXIT_STOCKADE;
			(void)wire_get_long(&m, "status", 0, 255, &st);
			status = (int)st;
		} else if (streq(m.type, "error")) {
			status = say_error(&m);
		}
		for (size_t i = 0; i < n_in; i++)
			close(in[i]);
		wire_msg_free(&m);
	}
	if (tty)
		terminal_end(&term);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sig_fd >= 0)
		close(sig_fd);
	close(sock);
	return status;
}

/* ---- list and stop ---- */

static int list_verb(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		log_error("cannot list the sessions in '%s': %m", dir);
		return EXIT_STOCKADE;
	}
	bool any = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 6 || !streq(de->d_name + n - 5, ".sock"))
			continue;
		_cleanup_free_ char *id = xstrndup(de->d_name, n - 5);
		struct wire_msg h;
		int fd = session_connect(dir, id, &h, true);
		if (fd < 0) {
			/* its holder is gone: what it left goes */
			_cleanup_free_ char *stem = xstrcat3(dir, "/", id);
			_cleanup_free_ char *s = xstrcat3(stem, ".sock", ""), *i = xstrcat3(stem, ".info", "");
			(void)unlink(s);
			(void)unlink(i);
			continue;
		}
		if (!any)
			printf("%-16s %-8s %-10s %-9s %-6s %s\n", "SESSION", "PID", "BACKEND", "NETWORK", "EXECS", "WORKSPACE");
		any = true;
		printf("%-16s %-8s %-10s %-9s %-6s %s\n", id, wire_get(&h, "pid"), wire_get(&h, "backend"),
		       wire_get(&h, "network"), wire_get(&h, "execs"), wire_get(&h, "workspace"));
		wire_msg_free(&h);
		close(fd);
	}
	closedir(d);
	return fflush(stdout) == 0 ? 0 : EXIT_STOCKADE;
}

static int stop_verb(const char *dir, const char *id)
{
	int fd = session_connect(dir, id, NULL, false);
	if (fd < 0)
		return EXIT_STOCKADE;
	struct wire_out o = { 0 };
	wire_begin(&o, "stop");
	int r = wire_send(fd, &o, NULL, 0);
	wire_out_free(&o);
	/* Answered once every process is gone, the guard has ended and the
	 * places are removed; EOF says the same. */
	struct wire_msg m;
	int fds[WIRE_MAX_FDS];
	size_t n = 0;
	if (r == 0 && wire_recv(fd, &m, fds, WIRE_MAX_FDS, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		wire_msg_free(&m);
	}
	close(fd);
	return r < 0 ? EXIT_STOCKADE : 0;
}

int session_verb(const struct options *o, unsigned long long start_us, session_run_fn run)
{
	if (o->command == CMD_SESSION_START)
		return start(o, start_us, run);
	_cleanup_free_ char *dir = NULL;
	if (sessions_dir(&dir) < 0)
		return EXIT_STOCKADE;
	switch (o->command) {
	case CMD_SESSION_EXEC:
		return exec_verb(o, dir);
	case CMD_SESSION_LIST:
		return list_verb(dir);
	case CMD_SESSION_STOP:
		return stop_verb(dir, o->session_id);
	default:
		return EXIT_STOCKADE;
	}
}
