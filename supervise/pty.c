/* A pty's slave, for the landlock backend. The command may make ptys of
 * its own (tmux, script, pexpect, a test suite's openpty): Landlock grants
 * it the host's /dev/ptmx and no /dev/pts name, so that the user's other
 * terminals stay out of reach (THREATS 3). glibc's openpty opens a new
 * pty's slave with TIOCGPTPEER on its master, which the kernel opens as a
 * file beneath /dev/pts, and Landlock refuses that open as any other.
 * The filter shows that request to the listener, and the supervisor makes
 * it itself: on its copy of the command's master, with the command's
 * privileges, always O_NOCTTY (the terminal never becomes stockade's),
 * and hands the slave to the command (SECCOMP_IOCTL_NOTIF_ADDFD). A master
 * the command holds is one it made: the run's own pty's master is
 * stockade's, and the request on any other descriptor fails as it would
 * (ENOTTY, EBADF).
 *
 * A program may open that slave again by its name (libuv's uv_tty_init
 * does, for a descriptor of its own): the filter shows the opens made
 * with those flags, and where the name is the slave of a pty the run made,
 * the supervisor opens it and hands it over too. A pty's number passes to
 * another pty (one of yours) once it is gone, so the name alone proves
 * nothing: stockade watches each slave it opened (inotify, which holds
 * neither the pty nor its number, so a closed slave or master means what
 * it means outside), and the watch is on that pty's own inode, which no
 * later pty has; the name is the run's pty when it leads to a watched
 * inode. Every other open goes on to the kernel, and Landlock decides. */
#include "supervise/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441
#endif

static void fd_name(int fd, char name[static 40])
{
	char num[21];
	stpcpy(stpcpy(name, "/proc/self/fd/"), fmt_u64(num, (uint64_t)fd));
}

/* The watches of ptys that are gone (their master closed, the inode
 * let go: IN_IGNORED) are forgotten. */
static void forget_gone(struct supervisor *sv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while (sv->pty_watch >= 0 && (n = read(sv->pty_watch, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n; p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			if (!(e->mask & IN_IGNORED))
				continue;
			for (size_t i = 0; i < sv->n_ptys; i++)
				if (sv->ptys[i] == e->wd) {
					sv->ptys[i] = sv->ptys[--sv->n_ptys];
					break;
				}
		}
}

static bool is_run_watch(const struct supervisor *sv, int wd)
{
	for (size_t i = 0; i < sv->n_ptys; i++)
		if (sv->ptys[i] == wd)
			return true;
	return false;
}

static void watch_slave(struct supervisor *sv, int slave)
{
	if (sv->pty_watch < 0)
		sv->pty_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	char name[40];
	fd_name(slave, name);
	forget_gone(sv);
	int wd = sv->pty_watch < 0 ? -1 : inotify_add_watch(sv->pty_watch, name, IN_DELETE_SELF);
	if (wd < 0 || is_run_watch(sv, wd))
		return;
	sv->ptys = xgrow(sv->ptys, sv->n_ptys, sizeof(*sv->ptys));
	sv->ptys[sv->n_ptys++] = wd;
}

/* Is the inode at is a watched one: the slave of a pty the run made? */
static bool run_pty(struct supervisor *sv, int at)
{
	char name[40];
	fd_name(at, name);
	forget_gone(sv);
	int wd = inotify_add_watch(sv->pty_watch, name, IN_DELETE_SELF);
	if (wd < 0)
		return false;
	if (is_run_watch(sv, wd))
		return true;
	(void)inotify_rm_watch(sv->pty_watch, wd);
	return false;
}

static bool is_tty_reopen(int nr, uint32_t flags)
{
	/* libuv's: the access mode, O_NOCTTY, O_CLOEXEC (not gcc's header
	 * opens, O_RDONLY | O_NOCTTY, which must not pay a round trip). */
	return nr == SYS_openat && (flags == (O_RDWR | O_NOCTTY | O_CLOEXEC) || flags == (O_WRONLY | O_NOCTTY | O_CLOEXEC));
}

/* The slave of a pty the run made, named by path: the descriptor of it,
 * or -1 for any other path. */
static int run_pty_named(struct supervisor *sv, const struct seccomp_notif *req)
{
	if (sv->pty_watch < 0)
		return -1;
	pid_t pid = (pid_t)req->pid;
	_cleanup_free_ char *raw = supervise_read_path(pid, req->data.args[1]);
	_cleanup_free_ char *path = raw ? supervise_path_of(pid, (int)req->data.args[0], raw) : NULL;
	if (!path || !str_has_prefix(path, "/dev/pts/"))
		return -1;
	_cleanup_close_ int at = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (at < 0 || fstat(at, &st) < 0 || !S_ISCHR(st.st_mode) || !run_pty(sv, at))
		return -1;
	return TAKE_FD(at);
}

bool supervisor_reopens_pty(struct supervisor *sv, const struct seccomp_notif *req)
{
	if (!is_tty_reopen(req->data.nr, (uint32_t)req->data.args[2]))
		return false;
	int flags = (int)req->data.args[2];
	/* The path was the caller's own: it was alive all along. Anything
	 * else named goes on as made, for Landlock to decide. */
	_cleanup_close_ int at = run_pty_named(sv, req);
	if (at < 0 || !sv_id_valid(sv, req->id)) {
		sv_continue(sv, req->id);
		return true;
	}
	char again[40];
	fd_name(at, again);
	int err = sv_acting(sv), fd = -1;
	if (!err) {
		fd = open(again, (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
		err = fd < 0 ? errno : 0;
		sv_acted(sv);
	}
	if (fd < 0)
		sv_respond(sv, req->id, err);
	else
		sv_hand_over(sv, req->id, fd, flags);
	return true;
}

void sv_ptys_free(struct supervisor *sv)
{
	if (sv->pty_watch >= 0)
		close(sv->pty_watch);
	sv->pty_watch = -1;
	free(sv->ptys);
	sv->ptys = NULL;
	sv->n_ptys = 0;
}

bool supervisor_opens_pty_peer(struct supervisor *sv, const struct seccomp_notif *req)
{
	if (req->data.nr != SYS_ioctl || (uint32_t)req->data.args[1] != TIOCGPTPEER)
		return false;
	int flags = (int)req->data.args[2];
	int err = 0, slave = -1;
	_cleanup_close_ int master = sv_caller_fd(sv, req, (int)req->data.args[0]);
	if (master < 0)
		err = errno == ESRCH ? ESRCH : EBADF;
	else if ((err = sv_acting(sv)) == 0) {
		slave = ioctl(master, TIOCGPTPEER, (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
		err = slave < 0 ? errno : 0;
		sv_acted(sv);
	}
	if (slave < 0) {
		sv_respond(sv, req->id, err);
		return true;
	}
	watch_slave(sv, slave);
	sv_hand_over(sv, req->id, slave, flags);
	return true;
}
