/* minlaunch exec|wait|ns CMD...: the least a launcher can do, for make
 * bench to measure stockade against in the same run.
 *
 *   exec  execs CMD in place (a launcher that keeps nothing beside it)
 *   wait  forks, execs CMD in the child, waits, exits with its status
 *         (a launcher that stays beside the command, as stockade must to
 *         reap, forward signals and answer the seccomp listener)
 *   ns    the same, the child cloned into new user, mount, pid, network,
 *         ipc, uts and cgroup namespaces with the caller's ids mapped: no
 *         mount, no pivot_root, nothing confined
 *
 * No policy, no Landlock, no seccomp: a floor, not a sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: minlaunch exec|wait|ns CMD...\n");
		return 125;
	}
	char **cmd = &argv[2];
	if (strcmp(argv[1], "exec") == 0) {
		execvp(cmd[0], cmd);
		return 127;
	}
	if (strcmp(argv[1], "ns") == 0)
		return launch_ns(cmd);
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
