/* notifyparent: run a command under a seccomp filter that already holds a
 * notification listener, as WSL2's mirrored networking and other sandboxes
 * leave one: the kernel then answers EBUSY to a second
 * SECCOMP_FILTER_FLAG_NEW_LISTENER anywhere below.
 *
 *     notifyparent [--count FILE] [--call connect] -- COMMAND [ARG]...
 *
 * The filter sends uname(2) (harmless, and one stockade makes) to the
 * listener and allows everything else; with --call connect, connect(2)
 * instead: make bench's floor for a supervisor of connects, the round
 * trip to a listener (with synchronous wake-ups, as stockade's) that
 * decides nothing. A process forked before the filter was loaded answers
 * every notification with CONTINUE, so the call goes on as made; with --count it writes the number it answered to FILE when the
 * last filtered process is gone. The command is exec'd in notifyparent's
 * own process, under the filter, with no_new_privs set. notifyparent's own
 * errors exit 125 with a message on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Newer than the distribution's headers (Linux 6.6); a helper includes
 * nothing of stockade's, so spelled here as in seccomp/load.c. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "notifyparent: %s: %s\n", what, strerror(errno));
	exit(125);
}

static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

static int send_fd(int sock, int fd)
{
	char byte = 'L';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* The answering process: CONTINUE to everything, until no filtered
 * process is left (the listener hangs up). */
static _Noreturn void answer(int sock, const char *count_file)
{
	int listener = recv_fd(sock);
	if (listener < 0)
		_exit(125);
	close(sock);
	unsigned long answered = 0;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	for (;;) {
		struct pollfd pfd = { .fd = listener, .events = POLLIN };
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!(pfd.revents & POLLIN))
			break;	/* POLLHUP: every filtered process is gone */
		struct seccomp_notif req;
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;	/* ENOENT: the caller was killed meanwhile */
		struct seccomp_notif_resp resp = { .id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
			answered++;
	}
	if (count_file) {
		FILE *f = fopen(count_file, "we");
		if (f) {
			fprintf(f, "%lu\n", answered);
			fclose(f);
		}
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	const char *count_file = NULL;
	int i = 1;
	long call = SYS_uname;
	for (;;) {
		if (i + 1 < argc && strcmp(argv[i], "--count") == 0)
			count_file = argv[i + 1];
		else if (i + 1 < argc && strcmp(argv[i], "--call") == 0 && strcmp(argv[i + 1], "connect") == 0)
			call = SYS_connect;
		else
			break;
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: notifyparent [--count FILE] [--call connect] -- COMMAND [ARG]...\n");
		return 125;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	/* Forked twice: the answering process is not the command's child,
	 * which a command that reaps or kills its children would find. */
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		pid_t again = fork();
		if (again == 0)
			answer(sv[1], count_file);
		_exit(again < 0 ? 125 : 0);
	}
	close(sv[1]);
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("forking the answering process");

	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)call, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("prctl(PR_SET_NO_NEW_PRIVS)");
	long listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0)
		die("seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)");
	if (send_fd(sv[0], (int)listener) < 0)
		die("handing the listener over");
	close((int)listener);
	close(sv[0]);
	execvp(argv[i], argv + i);
	fprintf(stderr, "notifyparent: cannot run '%s': %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
