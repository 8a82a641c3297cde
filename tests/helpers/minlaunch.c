/* minlaunch exec|wait|ns|notify CMD...: the least a launcher can do, for
 * make bench to measure stockade against in the same run.
 *
 *   exec  execs CMD in place (a launcher that keeps nothing beside it)
 *   wait  forks, execs CMD in the child, waits, exits with its status
 *         (a launcher that stays beside the command, as stockade must to
 *         reap, forward signals and answer the seccomp listener)
 *   ns    the same, the child cloned into new user, mount, pid, network,
 *         ipc, uts and cgroup namespaces with the caller's ids mapped: no
 *         mount, no pivot_root, nothing confined
 *   notify  forks, the child under a seccomp filter that sends each
 *         connect(2) to a listener (with synchronous wake-ups, as
 *         stockade's), and answers every one at once by letting it go on
 *         (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the least a supervisor of
 *         connects costs, whatever it decides
 *
 * No policy, no Landlock, no seccomp: a floor, not a sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int wait_for(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int launch_ns(char **cmd)
{
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return 125;
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
			      CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD;
	pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (pid < 0) {
		perror("minlaunch: clone");
		return 125;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(125);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(go[0]);
	char path[64], map[64];
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	int r = write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	r |= write_file(path, "deny\n");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	r |= write_file(path, map);
	if (r < 0 || write(go[1], "g", 1) != 1) {
		perror("minlaunch: id maps");
		kill(pid, SIGKILL);
	}
	close(go[1]);
	return wait_for(pid);
}

/* The child's listener, to the parent over a socket pair. */
static int send_fd(int sock, int fd)
{
	char c = 'f', ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static int launch_notify(char **cmd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 125;
	pid_t pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0) {
		close(sv[0]);
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load(ctx) < 0)
			_exit(125);
		int fd = seccomp_notify_fd(ctx);
		if (fd < 0 || send_fd(sv[1], fd) < 0)
			_exit(125);
		close(fd);
		close(sv[1]);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(sv[1]);
	int listener = recv_fd(sv[0]);
	close(sv[0]);
	if (listener < 0) {
		fprintf(stderr, "minlaunch: no seccomp listener\n");
		return wait_for(pid);
	}
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	for (;;) {
		struct pollfd p = { .fd = listener, .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (p.revents & (POLLHUP | POLLERR))
			break;
		struct seccomp_notif req = { 0 };
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		struct seccomp_notif_resp resp = { .id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	close(listener);
	return wait_for(pid);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: minlaunch exec|wait|ns|notify CMD...\n");
		return 125;
	}
	char **cmd = &argv[2];
	if (strcmp(argv[1], "exec") == 0) {
		execvp(cmd[0], cmd);
		return 127;
	}
	if (strcmp(argv[1], "ns") == 0)
		return launch_ns(cmd);
	if (strcmp(argv[1], "notify") == 0)
		return launch_notify(cmd);
	if (strcmp(argv[1], "wait") != 0) {
		fprintf(stderr, "minlaunch: unknown mode '%s'\n", argv[1]);
		return 125;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	return wait_for(pid);
}
