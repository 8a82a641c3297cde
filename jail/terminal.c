/* The terminal: a pty of the run's own, and the relay between it and the
 * user's terminal (terminal.h says why and how). */
#include "jail/terminal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* How long the end waits for output still in the pty once the run is
 * gone; every slave is closed by then, so the master says EIO at once
 * after the last byte, and this is only a bound. */
#define DRAIN_QUIET_MS 200

bool terminal_plan(struct terminal *t)
{
	/* Its buffers left as they are: 68 KiB of stack that a run without
	 * a terminal would otherwise fault in and clear. */
	memset(t, 0, offsetof(struct terminal, out));
	t->out_len = t->out_at = t->in_len = t->in_at = 0;
	t->user_in = t->user_out = t->master = t->slave = -1;
	int first = -1;
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd)) {
			t->child.tty_fds |= 1u << fd;
			if (first < 0)
				first = fd;
		}
	if (first < 0)
		return false;
	/* stdin decides: a command whose stdin is not the terminal is not
	 * meant to read what the user types. */
	t->child.controlling = t->child.tty_fds & 1;
	if (tcgetattr(first, &t->saved) < 0) {
		/* A terminal whose mode cannot be read: a sane default. */
		memset(&t->saved, 0, sizeof(t->saved));
		t->saved.c_iflag = ICRNL | IXON;
		t->saved.c_oflag = OPOST | ONLCR;
		t->saved.c_cflag = CS8 | CREAD;
		t->saved.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | IEXTEN;
	}
	t->child.tio = t->saved;
	/* Output only: the user's terminal, in its own mode, does the
	 * output processing, once. */
	if (!t->child.controlling)
		t->child.tio.c_oflag &= ~(tcflag_t)OPOST;
	if (ioctl(first, TIOCGWINSZ, &t->child.ws) < 0 || !t->child.ws.ws_row)
		t->child.ws = (struct winsize){ .ws_row = 24, .ws_col = 80 };
	return true;
}

bool terminal_wanted(const struct terminal *t)
{
	return t->child.tty_fds != 0;
}

static int setup_slave(int slave, const struct terminal_child *child)
{
	if (tcsetattr(slave, TCSANOW, &child->tio) < 0 || ioctl(slave, TIOCSWINSZ, &child->ws) < 0)
		return -errno;
	return 0;
}

/* The slave of master, opened through the master itself where the kernel
 * can (Linux 4.13), so that no path is looked up; else by name. */
static int open_slave(int master, const char *name)
{
	int s = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0 && name)
		s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	return s < 0 ? -errno : s;
}

int terminal_open_host_pty(struct terminal *t)
{
	_cleanup_close_ int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -errno;
	if (unlockpt(m) < 0 || ptsname_r(m, t->slave_path, sizeof(t->slave_path)) != 0)
		return -errno;
	int s = open_slave(m, t->slave_path);
	if (s < 0)
		return s;
	int r = setup_slave(s, &t->child);
	if (r < 0) {
		close(s);
		return r;
	}
	t->slave = s;
	t->master = TAKE_FD(m);
	return 0;
}

void terminal_forgo(struct terminal *t)
{
	t->child.tty_fds = 0;
	t->child.controlling = false;
}

int terminal_open_jail_pty(const struct terminal_child *child, int *ret_master, int *ret_slave)
{
	_cleanup_close_ int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -errno;
	int unlock = 0;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0)
		return -errno;
	int s = open_slave(m, NULL);
	if (s < 0)
		return s;
	int r = setup_slave(s, child);
	if (r < 0) {
		close(s);
		return r;
	}
	*ret_slave = s;
	*ret_master = TAKE_FD(m);
	return 0;
}

int terminal_leave(const struct terminal_child *child, int stand_in, bool own_session)
{
	if (own_session && setsid() < 0)
		return -errno;
	for (int fd = 0; fd <= 2; fd++)
		if ((child->tty_fds & (1u << fd)) && stand_in != fd && dup2(stand_in, fd) < 0)
			return -errno;
	return 0;
}

int terminal_lead(int slave)
{
	return ioctl(slave, TIOCSCTTY, 0) < 0 ? -errno : 0;
}

int terminal_enter(const struct terminal_child *child)
{
	if (!child->controlling)
		return getsid(0) != getpid() && setsid() < 0 ? -errno : 0;
	/* The session's leader (the jail's init, the keeper) holds the pty
	 * as its controlling terminal, its own group the foreground: the
	 * command's group is made the foreground instead, as a shell makes
	 * a job's. SIGTTOU blocked: the group asking is not the foreground
	 * yet. */
	if (setpgid(0, 0) < 0)
		return -errno;
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	int r = tcsetpgrp(0, getpid()) < 0 ? -errno : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* A descriptor of the user's terminal of stockade's own: nonblocking
 * without changing the one it shares with the user's shell. Where it
 * cannot be reopened (a terminal of another user's, after su), the
 * descriptor itself, whose reads poll says are ready. */
static int reopen(int fd, int flags, bool *ret_own)
{
	char path[32];
	char buf[21];
	stpcpy(stpcpy(path, "/proc/self/fd/"), fmt_u64(buf, (uint64_t)fd));
	int r = open(path, flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	*ret_own = r >= 0;
	return r >= 0 ? r : fd;
}

static void set_raw(struct terminal *t)
{
	struct termios raw = t->saved;
	cfmakeraw(&raw);
	/* TCSADRAIN: what the user typed ahead stays, for the command. */
	if (tcsetattr(0, TCSADRAIN, &raw) == 0)
		t->raw = true;
}

void terminal_start(struct terminal *t)
{
	if (t->master < 0)
		return;
	(void)fcntl(t->master, F_SETFL, fcntl(t->master, F_GETFL) | O_NONBLOCK);
	unsigned m = t->child.tty_fds;
	int out = (m & 2) ? 1 : (m & 4) ? 2 : 0;
	t->user_out = reopen(out, out == 0 ? O_RDWR : O_WRONLY, &t->own_out);
	if (t->child.controlling) {
		t->user_in = reopen(0, O_RDONLY, &t->own_in);
		/* Started in the background (&): as terminal_resume says, until
		 * fg; a raw mode set now would stop stockade (SIGTTOU) where
		 * the command, a build or a server, would go on outside. */
		pid_t fg = tcgetpgrp(0);
		t->background = fg > 0 && fg != getpgrp();
		if (!t->background)
			set_raw(t);
		t->no_ctty = tcgetsid(0) != getsid(0);
	}
	/* The user may have resized the terminal while the jail was built. */
	terminal_winch(t);
}

void terminal_resume(struct terminal *t)
{
	if (t->master < 0)
		return;
	/* Continued in the background (the shell's bg): the terminal is the
	 * shell's, its mode left as the shell has it and nothing read from
	 * it (a read would stop stockade with SIGTTIN) until a SIGCONT in
	 * the foreground (fg). Output still goes out, as a background
	 * job's does (stopped with SIGTTOU where the terminal says tostop). */
	pid_t fg = t->child.controlling ? tcgetpgrp(0) : -1;
	t->background = fg > 0 && fg != getpgrp();
	if (t->child.controlling && !t->background)
		set_raw(t);
	terminal_winch(t);
}

void terminal_winch(struct terminal *t)
{
	struct winsize ws;
	if (t->master < 0)
		return;
	int fd = (t->child.tty_fds & 1) ? 0 : (t->child.tty_fds & 2) ? 1 : 2;
	/* The kernel signals the pty's foreground group when it changes. */
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row)
		(void)ioctl(t->master, TIOCSWINSZ, &ws);
}

size_t terminal_pollfds(const struct terminal *t, struct pollfd *fds)
{
	size_t n = 0;
	if (t->master < 0)
		return 0;
	if (!t->master_done) {
		short ev = (t->out_len < sizeof(t->out) ? POLLIN : 0) | (t->in_at < t->in_len ? POLLOUT : 0);
		if (ev)
			fds[n++] = (struct pollfd){ .fd = t->master, .events = ev };
	}
	if (t->user_in >= 0 && !t->in_done && !t->background && t->in_at == t->in_len)
		fds[n++] = (struct pollfd){ .fd = t->user_in, .events = POLLIN };
	if (t->out_at < t->out_len && t->user_out >= 0)
		fds[n++] = (struct pollfd){ .fd = t->user_out, .events = POLLOUT };
	return n;
}

/* As much of buf[*at, *len) as fd takes now. A descriptor gone (the
 * user's terminal hung up: EIO) takes everything, into nothing: the
 * command must not block on output nobody can read. */
static void flush(int fd, const char *buf, size_t *at, size_t *len)
{
	while (*at < *len) {
		ssize_t n = write(fd, buf + *at, *len - *at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		*at += (size_t)n;
	}
	*at = *len = 0;
}

static void flush_out(struct terminal *t)
{
	flush(t->user_out, t->out, &t->out_at, &t->out_len);
}

static void flush_in(struct terminal *t)
{
	flush(t->master, t->in, &t->in_at, &t->in_len);
}

static void read_master(struct terminal *t)
{
	if (t->out_at && t->out_at == t->out_len)
		t->out_at = t->out_len = 0;
	if (t->out_at > sizeof(t->out) / 2) {
		memmove(t->out, t->out + t->out_at, t->out_len - t->out_at);
		t->out_len -= t->out_at;
		t->out_at = 0;
	}
	while (t->out_len < sizeof(t->out)) {
		ssize_t n = read(t->master, t->out + t->out_len, sizeof(t->out) - t->out_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			/* EIO: every slave is closed. */
			t->master_done = true;
			break;
		}
		t->out_len += (size_t)n;
	}
}

void terminal_ready(struct terminal *t, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd == t->master) {
			if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				read_master(t);
			if (fds[i].revents & POLLOUT)
				flush_in(t);
		} else if (fds[i].fd == t->user_in && (fds[i].events & POLLIN)) {
			/* (By what was asked: the user's terminal on fd 0 alone,
			 * not reopened, is both ends.) */
			ssize_t r = read(t->user_in, t->in, sizeof(t->in));
			if (r > 0) {
				t->in_at = 0;
				t->in_len = (size_t)r;
				if (t->no_ctty)
					terminal_winch(t);
			} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
				/* Hung up, or a background stockade's EIO. */
				t->in_done = true;
				/* A hangup reaches stockade as SIGHUP only from its
				 * controlling terminal; else the caller passes one
				 * on (terminal_hung_up). */
				if (t->no_ctty && (fds[i].revents & POLLHUP))
					t->hung_up = true;
			}
		}
	}
	/* Each way at once, before waiting again: the common case is one
	 * write that takes it all. */
	if (t->out_at < t->out_len)
		flush_out(t);
	if (t->in_at < t->in_len)
		flush_in(t);
}

void terminal_restore(struct terminal *t)
{
	if (!t->raw)
		return;
	(void)tcsetattr(0, TCSADRAIN, &t->saved);
	t->raw = false;
}

void terminal_end(struct terminal *t)
{
	if (t->master >= 0 && t->user_out >= 0) {
		/* Blocking now: the rest goes out whole. */
		if (t->own_out)
			(void)fcntl(t->user_out, F_SETFL, fcntl(t->user_out, F_GETFL) & ~O_NONBLOCK);
		while (!t->master_done) {
			struct pollfd p = { .fd = t->master, .events = POLLIN };
			if (poll(&p, 1, DRAIN_QUIET_MS) <= 0)
				break;
			read_master(t);
			flush_out(t);
		}
		flush_out(t);
	}
	terminal_restore(t);
	if (t->own_in)
		close(t->user_in);
	if (t->own_out)
		close(t->user_out);
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	t->user_in = t->user_out = t->master = t->slave = -1;
	t->own_in = t->own_out = false;
}
