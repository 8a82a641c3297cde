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
 * (ENOTTY, EBADF). */
#include "supervise/internal.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441
#endif

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
	struct seccomp_notif_addfd add = {
		.id = req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)slave,
		.newfd_flags = (uint32_t)(flags & O_CLOEXEC),
	};
	/* The descriptor is the command's answer; an error (its table is
	 * full) is answered instead. */
	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT)
		sv_respond(sv, req->id, errno);
	close(slave);
	return true;
}
