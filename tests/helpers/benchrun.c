/* benchrun N CMD... [:: CMD...]...: runs each command N times, the
 * commands interleaved (forward, then backward) so that a slow moment of a
 * shared machine falls on all of them alike, and prints for each the median and 90th percentile
 * wall time in microseconds, then the median and the largest of the runs'
 * peak resident memory (ru_maxrss from wait4: the command and what it
 * waited for), in KiB. Both: one run in two hundred that finds more of
 * libc mapped by fault-around moves the largest, not the median.
 * Output goes to /dev/null; a command that fails makes benchrun fail.
 * A command may start with FD<PATH words: PATH opened on FD in the child
 * for each run (bwrap --seccomp FD reads its descriptor to the end). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: benchrun N CMD... [:: CMD...]...\n");
		return 2;
	}
	int n = atoi(argv[1]);
	char **cmds[16];
	int ncmd = 0;
	cmds[ncmd++] = &argv[2];
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "::") == 0) {
			argv[i] = NULL;
			if (ncmd < 16 && argv[i + 1])
				cmds[ncmd++] = &argv[i + 1];
		}
	long long *times[16], *rss[16];
	for (int c = 0; c < ncmd; c++) {
		times[c] = calloc((size_t)n, sizeof(long long));
		rss[c] = calloc((size_t)n, sizeof(long long));
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int i = 0; i < n; i++) {
		/* Forward on even rounds, backward on odd ones: no command
		 * always runs right after the same other one. */
		for (int k = 0; k < ncmd; k++) {
			int c = i % 2 ? ncmd - 1 - k : k;
			long long t = now_ns();
			pid_t pid = fork();
			if (pid == 0) {
				dup2(devnull, 1);
				dup2(devnull, 2);
				char **cmd = cmds[c];
				for (; *cmd && strchr(*cmd, '<'); cmd++) {
					int fd = open(strchr(*cmd, '<') + 1, O_RDONLY);
					if (fd < 0 || dup2(fd, atoi(*cmd)) < 0)
						_exit(126);
				}
				execvp(cmd[0], cmd);
				_exit(127);
			}
			int status;
			struct rusage ru;
			if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				fprintf(stderr, "benchrun: '%s' failed\n", cmds[c][0]);
				return 1;
			}
			times[c][i] = now_ns() - t;
			rss[c][i] = ru.ru_maxrss;
		}
	}
	for (int c = 0; c < ncmd; c++) {
		qsort(times[c], (size_t)n, sizeof(long long), cmp);
		qsort(rss[c], (size_t)n, sizeof(long long), cmp);
		printf("%lld %lld %lld %lld\n", times[c][n / 2] / 1000, times[c][n * 9 / 10] / 1000, rss[c][n / 2],
		       rss[c][n - 1]);
	}
	return 0;
}
