/* ptyrun: run a command on a fresh terminal, as an interactive shell would,
 * and show what it left in the terminal's input queue.
 *
 *     ptyrun [--after TEXT] [--send MS:BYTES]... [--winch MS:ROWSxCOLS]...
 *            [--signal MS:SIG]... [--hangup MS] [--timeout SECONDS] -- COMMAND [ARG]...
 *
 * The command runs as the session leader of a new session, with the pty's
 * slave as its controlling terminal and stdin/stdout/stderr, in the
 * terminal's foreground process group. Everything it writes is copied to
 * ptyrun's stdout. Each --send writes BYTES (with C escapes: \x03 is Ctrl-C,
 * \n, \r, \t, \\) to the terminal MS milliseconds after the start; each
 * --winch sets the terminal's size then (the kernel sends SIGWINCH to its
 * foreground group, as a terminal emulator's resize does); each --signal
 * sends SIG (a name, TERM) to the command's process; --hangup closes the
 * terminal's master then, as a terminal emulator's window closed does
 * (the kernel hangs the terminal up; nothing more is copied, and the
 * lines below that read the terminal are left out). With --after, MS
 * counts from the moment TEXT first appears in the output (the command
 * says it is ready), not from the start, so that a slow start-up cannot
 * make an event come too early.
 *
 * When the command has exited, ptyrun does what the shell would do next: it
 * reads the terminal's input. Bytes a jailed command pushed with TIOCSTI
 * sit there, and a shell would run them as the user's next command line;
 * what was typed and nobody took is there too. The output ends with
 * these lines:
 *
 *     ptyrun: mode same | changed      the terminal's mode, against the start's
 *     ptyrun: ldisc N                  its line discipline (0: N_TTY)
 *     ptyrun: pending input: <escaped bytes> | none
 *     ptyrun: exit N | ptyrun: signal SIGNAME
 *
 * and ptyrun exits 0. On a timeout (default 60 s) it kills the command's
 * process group, prints "ptyrun: timeout", then the same two lines. Its own
 * errors exit 125 with a message on stderr.
 *
 * The terminal has echo and output CR-LF translation switched off, so the
 * transcript holds exactly the bytes the command wrote. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define EXIT_SETUP 125
#define MAX_SENDS 64
#define POLL_MS 20
#define DRAIN_QUIET_MS 100

enum event_kind { EV_SEND, EV_WINCH, EV_SIGNAL, EV_HANGUP };

struct send {
	long at_ms;
	enum event_kind kind;
	char *bytes;
	size_t len;
	struct winsize ws;	/* EV_WINCH */
	int sig;		/* EV_SIGNAL */
	bool done;
};

static struct send sends[MAX_SENDS];
static size_t n_sends;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ptyrun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SETUP);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* C escapes: \n \r \t \e \\ \xHH \0. Returns the decoded length. */
static size_t unescape(const char *in, char *out)
{
	size_t len = 0;

	while (*in) {
		if (*in != '\\') {
			out[len++] = *in++;
			continue;
		}
		in++;
		switch (*in) {
		case 'n': out[len++] = '\n'; in++; break;
		case 'r': out[len++] = '\r'; in++; break;
		case 't': out[len++] = '\t'; in++; break;
		case 'e': out[len++] = 0x1b; in++; break;
		case '0': out[len++] = '\0'; in++; break;
		case '\\': out[len++] = '\\'; in++; break;
		case 'x': {
			int hi = hex_digit(in[1]), lo = hi >= 0 ? hex_digit(in[2]) : -1;
			if (hi < 0)
				die("bad escape '\\x' in --send");
			if (lo < 0) {
				out[len++] = (char)hi;
				in += 2;
			} else {
				out[len++] = (char)(hi * 16 + lo);
				in += 3;
			}
			break;
		}
		default:
			die("unknown escape '\\%c' in --send", *in ? *in : ' ');
		}
	}
	return len;
}

static void parse_event(const char *opt, const char *arg, enum event_kind kind)
{
	struct send *e = &sends[n_sends];
	char *end;
	long ms;

	errno = 0;
	ms = strtol(arg, &end, 10);
	if (kind == EV_HANGUP ? errno || end == arg || *end || ms < 0 : errno || end == arg || *end != ':' || ms < 0)
		die("bad %s '%s': want MS%s", opt, arg, kind == EV_HANGUP ? "" : ":...");
	if (n_sends == MAX_SENDS)
		die("too many events");
	e->at_ms = ms;
	e->kind = kind;
	if (kind != EV_HANGUP)
		end++;
	switch (kind) {
	case EV_HANGUP:
		break;
	case EV_SEND:
		e->bytes = malloc(strlen(end) + 1);
		if (!e->bytes)
			die("out of memory");
		e->len = unescape(end, e->bytes);
		break;
	case EV_WINCH: {
		unsigned rows, cols;
		if (sscanf(end, "%ux%u", &rows, &cols) != 2 || !rows || !cols)
			die("bad --winch '%s': want MS:ROWSxCOLS", arg);
		e->ws = (struct winsize){ .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
		break;
	}
	case EV_SIGNAL:
		for (int sig = 1; sig < NSIG && !e->sig; sig++)
			if (sigabbrev_np(sig) && strcmp(sigabbrev_np(sig), end) == 0)
				e->sig = sig;
		if (!e->sig)
			die("bad --signal '%s': want MS:NAME (TERM, INT...)", arg);
		break;
	}
	n_sends++;
}

/* Printable ASCII as itself, the rest as C escapes, so the line stays one
 * line whatever was injected. */
static void print_escaped(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = buf[i];
		if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\r')
			fputs("\\r", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c == '\\')
			fputs("\\\\", stdout);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static bool output_mid_line;
/* --after: the text, the output's last bytes (a match may span reads),
 * and whether it has appeared. */
static const char *after;
static char seen_tail[4096 + 256];
static size_t n_seen_tail;
static bool after_seen;

static void watch_for_after(const char *buf, size_t n)
{
	size_t want = strlen(after), keep = want > 1 ? want - 1 : 0;
	if (after_seen || keep > 256)
		return;
	if (n_seen_tail > keep) {
		memmove(seen_tail, seen_tail + n_seen_tail - keep, keep);
		n_seen_tail = keep;
	}
	memcpy(seen_tail + n_seen_tail, buf, n);
	n_seen_tail += n;
	after_seen = memmem(seen_tail, n_seen_tail, after, want) != NULL;
}

static void copy_out(int master)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(master, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		output_mid_line = buf[n - 1] != '\n';
		if (after)
			watch_for_after(buf, (size_t)n);
	}
	fflush(stdout);
}

static void child_setup(int slave, int err_pipe, char **argv)
{
	sigset_t none;
	int err;

	/* A shell's child: its own session and process group, the terminal
	 * as controlling tty, in the foreground. After setsid() the process
	 * already leads its own group; setpgid() would fail with EPERM. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
		goto fail;
	if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
		goto fail;
	if (tcsetpgrp(0, getpgrp()) < 0)
		goto fail;
	execvp(argv[0], argv);
fail:
	err = errno;
	if (write(err_pipe, &err, sizeof(err)) < 0)
		_exit(EXIT_SETUP);
	_exit(EXIT_SETUP);
}

int main(int argc, char **argv)
{
	long timeout_ms = 60000, start;
	unsigned char pending[4096];
	size_t n_pending = 0;
	struct termios tio, start_tio;
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	char slave_name[128];
	int master, slave, err_pipe[2], status, err, i;
	bool timed_out = false, hung_up = false;
	pid_t child;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--after") == 0 && i + 1 < argc) {
			after = argv[++i];
			if (!*after || strlen(after) > 256)
				die("bad --after: want 1 to 256 bytes of text");
		} else if (strcmp(argv[i], "--send") == 0 && i + 1 < argc) {
			parse_event(argv[i], argv[i + 1], EV_SEND);
			i++;
		} else if (strcmp(argv[i], "--winch") == 0 && i + 1 < argc) {
			parse_event(argv[i], argv[i + 1], EV_WINCH);
			i++;
		} else if (strcmp(argv[i], "--signal") == 0 && i + 1 < argc) {
			parse_event(argv[i], argv[i + 1], EV_SIGNAL);
			i++;
		} else if (strcmp(argv[i], "--hangup") == 0 && i + 1 < argc) {
			parse_event(argv[i], argv[i + 1], EV_HANGUP);
			i++;
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			char *end;
			double s = strtod(argv[++i], &end);
			if (end == argv[i] || *end || s <= 0)
				die("bad --timeout '%s'", argv[i]);
			timeout_ms = (long)(s * 1000);
		} else {
			die("usage: ptyrun [--after TEXT] [--send MS:BYTES]... [--winch MS:ROWSxCOLS]... [--signal MS:SIG]... [--hangup MS] [--timeout SECONDS] -- COMMAND [ARG]...");
		}
	}
	if (i >= argc)
		die("usage: ptyrun [--after TEXT] [--send MS:BYTES]... [--winch MS:ROWSxCOLS]... [--signal MS:SIG]... [--hangup MS] [--timeout SECONDS] -- COMMAND [ARG]...");

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ptsname_r(master, slave_name, sizeof(slave_name)) != 0)
		die("cannot open a pty: %s", strerror(errno));
	/* Kept open for the whole run: the queue outlives the command, and the
	 * master never reads EIO while a slave is open. */
	slave = open(slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		die("cannot open '%s': %s", slave_name, strerror(errno));
	if (tcgetattr(slave, &tio) < 0)
		die("cannot read the terminal's settings: %s", strerror(errno));
	tio.c_oflag &= ~(tcflag_t)ONLCR;
	tio.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL);
	if (tcsetattr(slave, TCSANOW, &tio) < 0 || ioctl(master, TIOCSWINSZ, &ws) < 0 ||
	    tcgetattr(slave, &start_tio) < 0)
		die("cannot set up the terminal: %s", strerror(errno));
	if (pipe2(err_pipe, O_CLOEXEC) < 0)
		die("cannot make a pipe: %s", strerror(errno));

	fflush(stdout);
	child = fork();
	if (child < 0)
		die("cannot fork: %s", strerror(errno));
	if (child == 0)
		child_setup(slave, err_pipe[1], argv + i);
	close(err_pipe[1]);
	if (read(err_pipe[0], &err, sizeof(err)) == sizeof(err)) {
		waitpid(child, &status, 0);
		die("cannot run '%s': %s", argv[i], strerror(err));
	}
	close(err_pipe[0]);

	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	start = now_ms();
	long events_from = after ? -1 : 0;	/* ms after start; -1: TEXT not seen yet */
	for (;;) {
		long elapsed = now_ms() - start, wait_ms = POLL_MS;
		struct pollfd pfd = { master, POLLIN, 0 };

		if (events_from < 0 && after_seen)
			events_from = elapsed;
		for (size_t k = 0; k < n_sends && events_from >= 0; k++) {
			if (!sends[k].done && events_from + sends[k].at_ms <= elapsed) {
				if (sends[k].kind == EV_SEND && write(master, sends[k].bytes, sends[k].len) < 0)
					fprintf(stderr, "ptyrun: cannot send: %s\n", strerror(errno));
				if (sends[k].kind == EV_WINCH && ioctl(master, TIOCSWINSZ, &sends[k].ws) < 0)
					fprintf(stderr, "ptyrun: cannot resize: %s\n", strerror(errno));
				if (sends[k].kind == EV_SIGNAL)
					kill(child, sends[k].sig);
				if (sends[k].kind == EV_HANGUP && master >= 0) {
					/* The last master gone: the kernel hangs up the
					 * terminal, the slave held here with it. */
					close(master);
					master = -1;
					hung_up = true;
				}
				sends[k].done = true;
			} else if (!sends[k].done && events_from + sends[k].at_ms - elapsed < wait_ms) {
				wait_ms = events_from + sends[k].at_ms - elapsed;
			}
		}
		if (waitpid(child, &status, WNOHANG) == child)
			break;
		if (!timed_out && elapsed >= timeout_ms) {
			timed_out = true;
			kill(-child, SIGKILL);
			kill(child, SIGKILL);
		}
		if (master < 0) {
			poll(NULL, 0, (int)wait_ms);
			continue;
		}
		if (poll(&pfd, 1, (int)wait_ms) > 0)
			copy_out(master);
	}

	/* Output still in flight after the exit. */
	for (; master >= 0;) {
		struct pollfd pfd = { master, POLLIN, 0 };
		if (poll(&pfd, 1, DRAIN_QUIET_MS) <= 0)
			break;
		copy_out(master);
	}
	if (output_mid_line)
		putchar('\n');
	if (timed_out)
		printf("ptyrun: timeout\n");
	if (hung_up) {
		printf("ptyrun: hung up\n");
		goto status;
	}

	/* What the command left of the terminal: its mode (a raw mode not
	 * undone leaves the user's shell unusable) and line discipline. */
	if (tcgetattr(slave, &tio) == 0)
		printf("ptyrun: mode %s\n",
		       tio.c_iflag == start_tio.c_iflag && tio.c_oflag == start_tio.c_oflag &&
				       tio.c_cflag == start_tio.c_cflag && tio.c_lflag == start_tio.c_lflag &&
				       memcmp(tio.c_cc, start_tio.c_cc, sizeof(tio.c_cc)) == 0
			       ? "same"
			       : "changed");
	int ldisc = -1;
	if (ioctl(slave, TIOCGETD, &ldisc) == 0)
		printf("ptyrun: ldisc %d\n", ldisc);

	/* The shell's next read: non-canonical, so a partial line (no newline)
	 * counts too, and non-blocking. */
	if (tcgetattr(slave, &tio) == 0) {
		tio.c_lflag &= ~(tcflag_t)ICANON;
		tio.c_cc[VMIN] = 0;
		tio.c_cc[VTIME] = 0;
		tcsetattr(slave, TCSANOW, &tio);
	}
	fcntl(slave, F_SETFL, fcntl(slave, F_GETFL) | O_NONBLOCK);
	while (n_pending < sizeof(pending)) {
		ssize_t n = read(slave, pending + n_pending, sizeof(pending) - n_pending);
		if (n <= 0)
			break;
		n_pending += (size_t)n;
	}
	printf("ptyrun: pending input: ");
	if (n_pending)
		print_escaped(pending, n_pending);
	else
		fputs("none", stdout);
	putchar('\n');

status:
	if (WIFEXITED(status))
		printf("ptyrun: exit %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("ptyrun: signal SIG%s\n", sigabbrev_np(WTERMSIG(status)) ?: "?");
	fflush(stdout);
	return 0;
}
