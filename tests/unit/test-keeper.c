/* keeper: the run ends whole however stockade ends. A process stands in
 * for stockade (its child, which forks the keeper): the keeper forks the
 * "command", which leaves an orphan in a session of its own and a child;
 * stockade is killed; the keeper kills every one of them, then runs its
 * finish, which says so in a file. And the usual end: the command's
 * status reported, its leftovers killed first, the keeper gone at done. */
#include "jail/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/util.h"
#include "tests/tap.h"

static char dir[] = "/tmp/stockade-test-keeper.XXXXXX";

static bool alive(pid_t pid)
{
	char path[64], state = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	int n = fscanf(f, "%*d (%*[^)]) %c", &state);
	fclose(f);
	return n == 1 && state != 'Z' && state != 'X';
}

static void write_pid(const char *name, pid_t pid)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	fprintf(f, "%d\n", (int)pid);
	fclose(f);
}

static pid_t read_pid(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(path, "re");
		int pid = 0;
		if (f && fscanf(f, "%d", &pid) == 1 && pid > 0) {
			fclose(f);
			return pid;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	return -1;
}

/* The command: a child of its own, and an orphan in a new session. */
static pid_t start(void *data)
{
	int code = *(int *)data;
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	write_pid("child", child);
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			write_pid("orphan", getpid());
			pause();
			_exit(0);
		}
		_exit(0);
	}
	if (code >= 0) {
		usleep(100000);
		_exit(code);
	}
	pause();
	_exit(0);
}

static void finish(void *data, int status)
{
	(void)data;
	char path[256];
	snprintf(path, sizeof(path), "%s/finished", dir);
	FILE *f = fopen(path, "we");
	fprintf(f, "%d\n", status);
	fclose(f);
}

/* stockade's stand-in: begins the keeper, reports the command's pid, then
 * either waits for the status and says done, or waits to be killed. */
static pid_t stand_in(int code, int report[2])
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	close(report[0]);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	static int c;
	c = code;
	struct keeper k;
	struct keeper_duty d = { .start = start, .data = &c, .command_pgrp = false, .init_pidfd = -1, .finish = finish };
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (keeper_begin(&k, &d) < 0)
		_exit(1);
	pid_t command = keeper_command(&k);
	int v[2] = { (int)command, (int)k.pid };
	(void)!write(report[1], v, sizeof(v));
	if (code < 0)
		pause();
	int st = -1;
	size_t n = 0;
	(void)read_all(k.sock, &st, sizeof(st), &n);
	(void)!write(report[1], &st, sizeof(st));
	keeper_end(&k);
	_exit(0);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	signal(SIGCHLD, SIG_DFL);

	/* stockade killed while the command runs. */
	int rp[2];
	(void)!pipe(rp);
	pid_t s = stand_in(-1, rp);
	close(rp[1]);
	int v[2] = { 0, 0 };
	size_t n = 0;
	(void)read_all(rp[0], v, sizeof(v), &n);
	pid_t command = v[0], keeper = v[1], child = read_pid("child"), orphan = read_pid("orphan");
	ok(command > 0 && keeper > 0 && child > 0 && orphan > 0 && alive(command) && alive(child) && alive(orphan),
	   "control: the command, its child and its orphan live");
	kill(s, SIGKILL);
	waitpid(s, NULL, 0);
	bool gone = false;
	for (int i = 0; i < 300 && !gone; i++) {
		gone = !alive(command) && !alive(child) && !alive(orphan);
		if (!gone)
			usleep(10000);
	}
	ok(gone, "stockade killed: the keeper kills the command, its child and its orphan");
	char path[256];
	snprintf(path, sizeof(path), "%s/finished", dir);
	bool finished = false;
	for (int i = 0; i < 300 && !finished; i++) {
		finished = access(path, F_OK) == 0;
		if (!finished)
			usleep(10000);
	}
	ok(finished, "and then runs its finish");
	for (int i = 0; i < 300 && alive(keeper); i++)
		usleep(10000);
	ok(!alive(keeper), "and goes");
	close(rp[0]);
	unlink(path);

	/* The usual end: the status, after the leftovers. */
	char stale[256];
	snprintf(stale, sizeof(stale), "%s/child", dir);
	unlink(stale);
	snprintf(stale, sizeof(stale), "%s/orphan", dir);
	unlink(stale);
	(void)!pipe(rp);
	s = stand_in(3, rp);
	close(rp[1]);
	(void)read_all(rp[0], v, sizeof(v), &n);
	command = v[0];
	keeper = v[1];
	unlink(path);
	int st = -1;
	(void)read_all(rp[0], &st, sizeof(st), &n);
	child = read_pid("child");
	orphan = read_pid("orphan");
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 3, "the command's status comes to stockade (exit 3)");
	ok(!alive(child) && !alive(orphan), "its child and orphan were killed before it came");
	waitpid(s, NULL, 0);
	ok(!alive(keeper), "at done, the keeper goes");
	ok(access(path, F_OK) < 0, "without running its finish");
	close(rp[0]);

	/* What it is given to hold (the namespace jail's packet socket): a
	 * pipe's writer here. Held to its end, not closed at once; anything
	 * else that comes with descriptors has them closed at once. */
	struct keeper k;
	struct keeper_duty d = { .init_pidfd = -1, .finish = finish };
	ok(keeper_begin(&k, &d) == 0 && k.settled, "a keeper with no command of its own: settled");
	int held[2], other[2];
	(void)!pipe(held);
	(void)!pipe(other);
	ok(keeper_hold(&k, &held[1], 1) == 0, "keeper_hold gives it a descriptor");
	ok(fcntl(held[1], F_GETFD) < 0 && errno == EBADF, "and closes stockade's own");
	struct pollfd pf = { .fd = held[0], .events = POLLIN };
	ok(poll(&pf, 1, 200) == 0, "the keeper holds it: no end of file while it lives");
	ok(fd_send_n(k.sock, 'X', &other[1], 1) == 0, "control: a descriptor sent with anything else");
	close(other[1]);
	pf.fd = other[0];
	ok(poll(&pf, 1, 3000) == 1 && (pf.revents & POLLHUP) && alive(k.pid), "is closed at once, the keeper alive");
	pid_t kp = k.pid;
	keeper_end(&k);
	pf.fd = held[0];
	ok(poll(&pf, 1, 3000) == 1 && (pf.revents & POLLHUP), "at done, the keeper closes what it held as it goes");
	for (int i = 0; i < 300 && alive(kp); i++)
		usleep(10000);
	keeper_reap();
	ok(!alive(kp) && waitpid(kp, NULL, WNOHANG) < 0 && errno == ECHILD, "and is gone, reaped");
	ok(access(path, F_OK) < 0, "without running its finish");
	close(held[0]);
	close(other[0]);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
	return tap_done();
}
