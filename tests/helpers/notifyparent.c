/* notifyparent: run a command under a seccomp filter that already holds a
 * notification listener, as WSL2's mirrored networking and other sandboxes
 * leave one: the kernel then answers EBUSY to a second
 * SECCOMP_FILTER_FLAG_NEW_LISTENER anywhere below.
 *
 *     notifyparent [--count FILE] [--call connect [--checked]] -- COMMAND [ARG]...
 *
 * The filter sends uname(2) (harmless, and one stockade makes) to the
 * listener and allows everything else; with --call connect, connect(2)
 * instead: make bench's floor for a supervisor of connects, the round
 * trip to a listener (with synchronous wake-ups, as stockade's) that
 * decides nothing. With --checked, each connect is carried out as a
 * supervisor must to be safe from a second thread, and no more: the
 * address read once from the caller's memory, the notification checked
 * still valid, the caller's socket copied (pidfd_getfd) and its type
 * asked, the one listener the kernel would hand the connection asked of
 * sock_diag, the connect made on the copy (non-blocking for the call,
 * its outcome from TCP_INFO, as a handshake not made within the call must
 * not be left to the kernel) and its result answered: make bench's floor
 * of a safe supervisor, beside stockade's, which also decides. A process
 * forked before the filter was loaded answers every notification with
 * CONTINUE, so the call goes on as made; with --count it writes the
 * number it answered to FILE when the last filtered process is gone. The
 * command is exec'd in notifyparent's own process, under the filter, with
 * no_new_privs set. notifyparent's own errors exit 125 with a message on
 * stderr. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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

/* --checked: the sock_diag question for the listener a TCP connection
 * to (family, addr, port) would reach, as an arriving SYN's look-up. */
static void ask_listener(int diag, const struct sockaddr_storage *ss)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} q = { .h = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (__u8)ss->ss_family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u } };
	q.r.id.idiag_if = 1;
	q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;
		q.r.id.idiag_sport = in->sin_port;
		q.r.id.idiag_src[0] = q.r.id.idiag_dst[0] = in->sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *in6 = (const void *)ss;
		q.r.id.idiag_sport = in6->sin6_port;
		memcpy(q.r.id.idiag_src, &in6->sin6_addr, 16);
		memcpy(q.r.id.idiag_dst, &in6->sin6_addr, 16);
	}
	char reply[1024];
	if (send(diag, &q, sizeof(q), 0) == (ssize_t)sizeof(q))
		(void)recv(diag, reply, sizeof(reply), 0);
}

/* --checked: one connect, carried out on a copy of the caller's socket;
 * its errno, or -1 to let the call go on as made (not an inet address). */
static int connect_for(int listener, const struct seccomp_notif *req, int diag, pid_t *pid, int *pidfd)
{
	struct sockaddr_storage ss;
	socklen_t len = (socklen_t)req->data.args[2];
	if (len > sizeof(ss))
		return -1;
	struct iovec local = { .iov_base = &ss, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)req->data.args[1], .iov_len = len };
	if (process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0) != (ssize_t)len ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return -1;
	if (*pid != (pid_t)req->pid) {
		if (*pidfd >= 0)
			close(*pidfd);
		*pid = (pid_t)req->pid;
		*pidfd = (int)syscall(SYS_pidfd_open, *pid, 0);
	}
	__u64 id = req->id;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
		return ESRCH;
	int fd = (int)syscall(SYS_pidfd_getfd, *pidfd, (int)req->data.args[0], 0);
	if (fd < 0)
		return -1;
	int type = 0;
	socklen_t tl = sizeof(type);
	(void)getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
	ask_listener(diag, &ss);
	int flags = fcntl(fd, F_GETFL);
	bool blocking = flags >= 0 && !(flags & O_NONBLOCK);
	if (blocking)
		(void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	int err = connect(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
	if (err == EINPROGRESS) {
		struct tcp_info ti;
		socklen_t il = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &il) == 0 && ti.tcpi_state == TCP_ESTABLISHED && blocking)
			err = 0;
	}
	if (blocking)
		(void)fcntl(fd, F_SETFL, flags);
	close(fd);
	return err;
}

/* The answering process: CONTINUE to everything (with checked, each
 * connect carried out and answered), until no filtered process is left
 * (the listener hangs up). */
static _Noreturn void answer(int sock, const char *count_file, bool checked)
{
	int diag = checked ? socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG) : -1;
	pid_t pid = 0;
	int pidfd = -1;
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
		int err = checked ? connect_for(listener, &req, diag, &pid, &pidfd) : -1;
		if (err >= 0)
			resp = (struct seccomp_notif_resp){ .id = req.id, .error = err ? -err : 0 };
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
	bool checked = false;
	int i = 1;
	long call = SYS_uname;
	for (;;) {
		if (i + 1 < argc && strcmp(argv[i], "--count") == 0)
			count_file = argv[i + 1];
		else if (i + 1 < argc && strcmp(argv[i], "--call") == 0 && strcmp(argv[i + 1], "connect") == 0)
			call = SYS_connect;
		else if (i < argc && strcmp(argv[i], "--checked") == 0 && call == SYS_connect) {
			checked = true;
			i++;
			continue;
		} else
			break;
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: notifyparent [--count FILE] [--call connect [--checked]] -- COMMAND [ARG]...\n");
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
			answer(sv[1], count_file, checked);
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
