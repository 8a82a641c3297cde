/* The terminal: the command never holds a descriptor of the user's
 * terminal (CVE-2016-2779: a process that holds one, or has it as its
 * controlling terminal, can make itself the foreground, read what the
 * user types next, or set a line discipline that outlives the run).
 *
 * Every command runs out of the user's session. Where any of stdin, stdout
 * and stderr is a terminal, the command gets a pty of its own instead,
 * and stockade relays between its master and the user's terminal:
 *
 * - stdin a terminal: the pty is the controlling terminal of a session
 *   whose leader is the jail's init (the namespace jail) or the keeper
 *   (the landlock backend), the command's process group, another, in its
 *   foreground: a group with a parent in the same session is not
 *   orphaned, so that a Ctrl-Z stops the command, and stockade with it
 *   (jail/wait.c), back to the user's shell; the user's terminal is in raw mode
 *   while the command runs, so that Ctrl-C, Ctrl-Z and the rest go
 *   through the pty's line discipline to the jailed foreground group;
 *   each SIGWINCH sets the pty's window size; the user's mode is restored
 *   at every end stockade sees.
 * - stdin not a terminal: the command has no controlling terminal; its
 *   stdout or stderr that were the terminal are the pty, whose output is
 *   relayed (its own output processing off: the user's terminal does it),
 *   and nothing the user types reaches the run.
 *
 * Only the descriptors among 0, 1 and 2 that are terminals are replaced;
 * a stdout redirected to a file or a pipe stays as it was, as it would
 * without stockade.
 *
 * The landlock backend's pty comes from the host's /dev/ptmx, opened
 * here, and its slave alone is granted by path. The namespace jail's
 * comes from the jail's own devpts: its init opens it after the new root
 * is built and before it confines itself, hands the master over and
 * keeps only the slave, so the host's devpts is never in the jail and a
 * program in it finds its terminal under /dev/pts. */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <termios.h>

#define TERMINAL_POLLFDS 3
#define TERMINAL_BUF 65536

/* What the command's process does with its terminal, set in stockade
 * before the fork. */
struct terminal_child {
	unsigned tty_fds;	/* bit n: descriptor n (0, 1, 2) is a terminal, replaced */
	bool controlling;	/* the pty is the command's controlling terminal */
	struct termios tio;	/* the pty's mode at the start */
	struct winsize ws;	/* and its size */
};

struct terminal {
	struct terminal_child child;
	int user_in;		/* the user's terminal, reopened: read (-1: not relayed) */
	int user_out;		/* written */
	bool own_in, own_out;	/* reopened here: closed here */
	int master;		/* the run's pty (-1: none) */
	int slave;		/* held until the command's process has it */
	char slave_path[64];	/* the landlock backend's, on the host's devpts */
	struct termios saved;	/* the user's mode, restored */
	bool raw;		/* the user's terminal is in raw mode */
	/* The user's terminal is not stockade's controlling terminal (su -c
	 * and setsid start it in a session of its own): neither SIGWINCH
	 * nor SIGHUP comes from it. Its size is looked at as the user
	 * types, and its hangup seen on the descriptor. */
	bool no_ctty;
	bool hung_up;		/* and it hung up: for terminal_hung_up, once */
	bool background;	/* continued in the background (bg): not read, its mode the shell's */
	bool master_done;	/* every slave is closed and the output drained */
	bool in_done;
	char out[TERMINAL_BUF];	/* from the pty to the user */
	size_t out_len, out_at;
	char in[4096];		/* from the user to the pty */
	size_t in_len, in_at;
};

/* Looks at descriptors 0 to 2: which are terminals, and the user's
 * terminal's mode and size. Nothing is changed. false: no pty is needed. */
bool terminal_plan(struct terminal *t);
bool terminal_wanted(const struct terminal *t);

/* The landlock backend's pty, from the host's devpts, its slave set up
 * as child says. */
int terminal_open_host_pty(struct terminal *t);

/* No pty after all: the command keeps its descriptors as they are, in a
 * session of its own without a controlling terminal. */
void terminal_forgo(struct terminal *t);

/* In the namespace jail's init, in the new root: a pty of the jail's own
 * devpts, set up as child says. */
int terminal_open_jail_pty(const struct terminal_child *child, int *ret_master, int *ret_slave);

/* The command's process, before it is confined: out of the user's
 * session (own_session: a session of its own; else it is in the
 * keeper's already), and each terminal among 0 to 2 replaced by stand_in
 * (the slave, or /dev/null until the jail's init has its slave). */
int terminal_leave(const struct terminal_child *child, int stand_in, bool own_session);
/* The session's leader, the jail's init or the landlock backend's
 * keeper: the pty (its slave) as its controlling terminal, so that the
 * command's process group, the foreground, has a parent in another group
 * of the same session. A group without one is orphaned, and the kernel
 * discards the SIGTSTP of a Ctrl-Z (and SIGTTIN, SIGTTOU) sent to it:
 * the command could not be suspended back to the user's shell. */
int terminal_lead(int slave);
/* Just before exec: with the pty as controlling terminal, a process
 * group of its own in the leader's session, made the pty's foreground;
 * without, a session of its own (the jail's init's child is not yet a
 * session leader). */
int terminal_enter(const struct terminal_child *child);

/* Once the command has exec'd: the relay starts, the user's terminal in
 * raw mode where the command reads it. */
void terminal_start(struct terminal *t);
/* After SIGCONT (stockade was stopped, and its shell may have set its
 * own mode): raw again, and the size. */
void terminal_resume(struct terminal *t);
/* SIGWINCH: the user's terminal's size to the pty. */
void terminal_winch(struct terminal *t);

size_t terminal_pollfds(const struct terminal *t, struct pollfd *fds);
void terminal_ready(struct terminal *t, const struct pollfd *fds, size_t n);
/* The user's terminal hung up where its hangup sends stockade no SIGHUP
 * (no_ctty): true once, for the caller to pass SIGHUP on to the command
 * as it would the signal. */
static inline bool terminal_hung_up(struct terminal *t)
{
	bool h = t->hung_up;
	t->hung_up = false;
	return h;
}

/* Once every process of the run is gone: what is left in the pty goes
 * out, the user's mode comes back, and every descriptor closes. Safe to
 * call more than once, and on a terminal never started. */
void terminal_end(struct terminal *t);
/* The user's mode only: for an exit that cannot wait for the drain. */
void terminal_restore(struct terminal *t);
