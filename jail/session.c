/* The session verbs (session.h). */
#include "jail/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
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
	if (lstat(dir, &st) == 0 && st.st_uid != getuid()) {
		/* Another user's (root with their HOME or XDG_STATE_HOME): no
		 * chmod makes it yours; your own place does. */
		struct passwd *pw = getpwuid(st.st_uid);
		_cleanup_free_ char *owner = pw ? xstrdup(pw->pw_name) : xasprintf("user %u", (unsigned)st.st_uid);
		pw = getpwuid(getuid());
		const char *xdg = getenv("XDG_STATE_HOME");
		log_error("cannot use '%s' for sessions: it is %s's (uid %u), and a session's folder must be yours alone", dir,
			  owner, (unsigned)st.st_uid);
		if (xdg && xdg[0] == '/' && path_is_beneath(dir, xdg))
			log_hint("unset XDG_STATE_HOME, or set it to a folder of yours");
		else if (pw)
			log_hint("run it with your own home: HOME='%s' stockade session ...", pw->pw_dir);
		else
			log_hint("set HOME to a folder of yours");
		return -EPERM;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 077)) {
		log_error("cannot use '%s' for sessions: it must be a folder of yours that nobody else can reach (0700)", dir);
		if (S_ISDIR(st.st_mode))
			log_hint("chmod 700 '%s'", dir);
		else
			log_hint("move '%s' aside: a session's folder is made there", dir);
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

/* The session's log, when it holds something: its path (a session that
 * ended there left what nobody was told). */
static char *log_left(const char *dir, const char *id)
{
	char *logp = xasprintf("%s/%s.log", dir, id);
	struct stat st;
	if (lstat(logp, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		return logp;
	free(logp);
	return NULL;
}

/* A connection to the session's socket, hello said and not yet
 * answered: its fd, or -errno (said, unless quiet). timeout_ms > 0
 * bounds the connect and each send and receive on it: a holder that is
 * stopped or wedged answers nothing. */
static int session_dial(const char *dir, const char *id, bool quiet, int timeout_ms)
{
	if (!valid_id(id)) {
		if (!quiet)
			log_error("invalid session '%s': a session's id is letters, digits, '.', '_' and '-'", id);
		return -EINVAL;
	}
	_cleanup_free_ char *path = xstrcat3(dir, "/", id);
	_cleanup_free_ char *sock_path = xstrcat3(path, ".sock", "");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(sock_path) >= sizeof(a.sun_path)) {
		if (!quiet)
			log_error("cannot reach the session '%s': its socket path '%s' is too long", id, sock_path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, sock_path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && timeout_ms > 0) {
		struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (!quiet && (e == EAGAIN || e == EINPROGRESS)) {
			log_error("the session '%s' does not answer: its holder takes no connection", id);
		} else if (!quiet) {
			log_error("no session '%s' is running (%s)", id, strerror(e));
			_cleanup_free_ char *left = log_left(dir, id);
			if (left)
				log_hint("what the session said at its end, which nobody was told, is in '%s'", left);
			log_hint("stockade session list shows those that are; stockade session start begins one");
		}
		return -e;
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
		return r;
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
		errno = r < 0 ? -r : EPROTO;
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
static int session_connect(const char *dir, const char *id, struct wire_msg *ret_hello, bool quiet, int timeout_ms)
{
	int fd = session_dial(dir, id, quiet, timeout_ms);
	return fd >= 0 && session_answered(fd, id, ret_hello, quiet) ? fd : -1;
}

/* One KEY of the session's info file, or NULL. */
static char *info_get(const char *dir, const char *id, const char *key)
{
	_cleanup_free_ char *path = xasprintf("%s/%s.info", dir, id), *text = NULL;
	size_t len = 0;
	if (read_file_at(AT_FDCWD, path, 1 << 16, &text, &len) < 0)
		return NULL;
	size_t kl = strlen(key);
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, key, kl) && line[kl] == '=')
			return xstrdup(line + kl + 1);
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* A session whose holder does not answer in time: said, with its pid
 * and the ways out. */
static void say_not_answering(const char *dir, const char *id, int timeout_ms)
{
	_cleanup_free_ char *pid = info_get(dir, id, "pid");
	log_error("the session '%s' did not answer within %d s: its holder%s%s%s is stopped or wedged", id,
		  timeout_ms / 1000, pid ? " (pid " : "", pid ? pid : "", pid ? ")" : "");
	if (pid)
		log_hint("kill -CONT %s lets a stopped one go on; kill -KILL %s ends it (its keeper then ends the jail)", pid, pid);
}

/* How long list, stop and an exec that was sent a signal wait for a
 * holder to answer its hello. */
#define ALIVE_TIMEOUT_MS 2000

/* Whether the session's holder answers a hello in time. */
static bool session_alive(const char *dir, const char *id)
{
	int fd = session_connect(dir, id, NULL, true, ALIVE_TIMEOUT_MS);
	if (fd < 0)
		return false;
	close(fd);
	return true;
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
	/* A holder that takes the connection is running, answering or not
	 * (a stopped one keeps its socket and its jail). */
	int live = session_dial(dir, id, true, 2000);
	if (live >= 0 || live == -EAGAIN) {
		if (live >= 0)
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
		struct holder_setup hs = { .id = id, .sock_path = sock, .info_path = info, .log_path = logp, .listen_fd = lfd,
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
	char c = 0, ready_text[32] = "";
	for (;;) {
		struct pollfd fds[2] = { { .fd = ready[0], .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
		if (poll(fds, pidfd >= 0 ? 2 : 1, -1) < 0 && errno == EINTR)
			continue;
		/* "r" and how much of the log the jail's start said, in one write */
		ssize_t n = fds[0].revents ? read(ready[0], ready_text, sizeof(ready_text) - 1) : 0;
		if (n > 0) {
			ready_text[n] = '\0';
			c = ready_text[0];
			break;
		}
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
	/* What the jail's start said (a note, a warning), as a run says it;
	 * the rest of the log is the next exec's or the stop's to say. */
	long long told = strtoll(ready_text + 1, NULL, 10);
	_cleanup_free_ char *said = NULL;
	size_t len = 0;
	if (told > 0 && read_file_at(AT_FDCWD, logp, (size_t)told, &said, &len) == 0 && len)
		(void)!fwrite(said, 1, len < (size_t)told ? len : (size_t)told, stderr);
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
	int sock = session_dial(dir, o->session_id, false, 0);
	if (sock < 0)
		return EXIT_STOCKADE;
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	struct terminal term;
	bool tty = terminal_plan(&term);
	struct wire_out out = { 0 };
	wire_begin(&out, "exec");
	/* "started" says the command ran: a session that ends after it
	 * gives the command's SIGKILL, not 125 */
	wire_add(&out, "started", "1");
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
	if (r < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		log_error("cannot send the command to the session: %s", strerror(-r));
		if (r == -EMSGSIZE)
			log_hint("the environment and the arguments together must stay under 256 KiB");
		close(sock);
		if (sig_fd >= 0)
			close(sig_fd);
		return EXIT_STOCKADE;
	}
	/* The hello's answer, then the command's messages; a signal stops
	 * the wait for neither (the command may still be starting) unless
	 * the holder no longer answers. */
	int status = -1;
	bool answered = false, started = false;
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
			while (status < 0 && read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
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
				/* One that ends a run ends this client where the
				 * session cannot pass it on (its holder stopped or
				 * wedged): a connection of its own asks whether it
				 * answers. Gone, the command goes with this
				 * connection as the holder reads its end. */
				if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !session_alive(dir, o->session_id)) {
					say_not_answering(dir, o->session_id, ALIVE_TIMEOUT_MS);
					log_error("%s: this client ends; the command ends as soon as the session reads that",
						  sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
					status = 128 + sig;
				}
			}
			if (status >= 0)
				break;
		}
		if (!pfds[0].revents)
			continue;
		if (!answered) {
			if (!session_answered(sock, o->session_id, NULL, false)) {
				sock = -1;
				status = EXIT_STOCKADE;
				break;
			}
			answered = true;
			continue;
		}
		struct wire_msg m;
		int in[WIRE_MAX_FDS];
		size_t n_in = 0;
		r = wire_recv(sock, &m, in, WIRE_MAX_FDS, &n_in);
		if (r < 0) {
			/* The holder is gone (killed): its keeper ends the jail,
			 * the command with it. One that had started ran. */
			_cleanup_free_ char *logp = xasprintf("%s/%s.log", dir, o->session_id);
			if (started) {
				log_error("the session '%s' ended before the command did (its holder is gone): the command was "
					  "killed with every process of the session (SIGKILL)", o->session_id);
				status = 128 + SIGKILL;
			} else {
				log_error("the session '%s' ended before the command started", o->session_id);
				status = EXIT_STOCKADE;
			}
			log_hint("what the session says as its keeper ends it goes to '%s'", logp);
			break;
		}
		if (streq(m.type, "started")) {
			started = true;
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
	if (sock >= 0)
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
		struct wire_msg h = { 0 };
		/* Each holder has its time to answer: a stopped one is said,
		 * not waited for. */
		int fd = session_dial(dir, id, true, ALIVE_TIMEOUT_MS);
		if (fd == -ECONNREFUSED || fd == -ENOENT) {
			/* its holder is gone: what it left goes (its log, where
			 * it holds something, stays for exec and stop to name) */
			_cleanup_free_ char *stem = xstrcat3(dir, "/", id);
			_cleanup_free_ char *s = xstrcat3(stem, ".sock", ""), *i = xstrcat3(stem, ".info", "");
			_cleanup_free_ char *l = xstrcat3(stem, ".log", ""), *left = log_left(dir, id);
			(void)unlink(s);
			(void)unlink(i);
			if (!left)
				(void)unlink(l);
			continue;
		}
		if (fd < 0 && fd != -EAGAIN && fd != -EINPROGRESS)
			continue;
		bool answers = fd >= 0 && session_answered(fd, id, &h, true);
		if (!any)
			printf("%-16s %-8s %-10s %-9s %-6s %s\n", "SESSION", "PID", "BACKEND", "NETWORK", "EXECS", "WORKSPACE");
		any = true;
		if (answers) {
			printf("%-16s %-8s %-10s %-9s %-6s %s\n", id, wire_get(&h, "pid"), wire_get(&h, "backend"),
			       wire_get(&h, "network"), wire_get(&h, "execs"), wire_get(&h, "workspace"));
			wire_msg_free(&h);
			close(fd);
			continue;
		}
		_cleanup_free_ char *pid = info_get(dir, id, "pid"), *backend = info_get(dir, id, "backend"),
				    *ws = info_get(dir, id, "workspace");
		printf("%-16s %-8s %-10s %-9s %-6s %s (not answering)\n", id, pid ? pid : "?", backend ? backend : "?", "?",
		       "?", ws ? ws : "?");
		say_not_answering(dir, id, ALIVE_TIMEOUT_MS);
	}
	closedir(d);
	return fflush(stdout) == 0 ? 0 : EXIT_STOCKADE;
}

/* How long a stop waits for the session to end once it has answered:
 * the guard's end and the places' removal. */
#define STOP_TIMEOUT_MS 60000

static int stop_verb(const char *dir, const char *id)
{
	int fd = session_dial(dir, id, false, ALIVE_TIMEOUT_MS);
	if (fd == -EAGAIN || fd == -EINPROGRESS)
		say_not_answering(dir, id, ALIVE_TIMEOUT_MS);
	if (fd < 0)
		return EXIT_STOCKADE;
	if (!session_answered(fd, id, NULL, true)) {
		if (errno == EAGAIN)
			say_not_answering(dir, id, ALIVE_TIMEOUT_MS);
		else
			log_error("cannot speak to the session '%s': %s", id, strerror(errno));
		return EXIT_STOCKADE;
	}
	struct timeval tv = { .tv_sec = STOP_TIMEOUT_MS / 1000 };
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct wire_out o = { 0 };
	wire_begin(&o, "stop");
	int r = wire_send(fd, &o, NULL, 0);
	wire_out_free(&o);
	if (r < 0) {
		log_error("cannot ask the session '%s' to stop: %s", id, strerror(-r));
		close(fd);
		return EXIT_STOCKADE;
	}
	/* What its end undid, said; then "stopped" once every process is
	 * gone, the guard has ended and the places are removed (EOF says
	 * the same). */
	int status = 0;
	for (;;) {
		struct wire_msg m;
		int fds[WIRE_MAX_FDS];
		size_t n = 0;
		r = wire_recv(fd, &m, fds, WIRE_MAX_FDS, &n);
		if (r == -EAGAIN || r == -EWOULDBLOCK) {
			_cleanup_free_ char *pid = info_get(dir, id, "pid");
			log_error("the session '%s' did not end within %d s of being asked to: its holder%s%s%s goes on "
				  "ending it", id, STOP_TIMEOUT_MS / 1000, pid ? " (pid " : "", pid ? pid : "", pid ? ")" : "");
			status = EXIT_STOCKADE;
			break;
		}
		if (r < 0)
			break;
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		bool done = !streq(m.type, "said");
		const char *line = wire_get(&m, "line");
		if (!done && line)
			fprintf(stderr, "%s\n", line);
		wire_msg_free(&m);
		if (done)
			break;
	}
	close(fd);
	return status;
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
