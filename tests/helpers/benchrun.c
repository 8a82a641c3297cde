/* benchrun [-p FD [-l LABEL,...]] N CMD... [:: CMD...]...: runs each
 * command N times, the commands interleaved (forward, then backward) so
 * that a slow moment of a shared machine falls on all of them alike, and
 * prints for each the median and 90th percentile wall time in
 * microseconds, then the median and the largest of the runs' peak
 * resident memory (ru_maxrss from wait4: the command and what it waited
 * for), in KiB. Both: one run in two hundred that finds more of libc
 * mapped by fault-around moves the largest, not the median.
 * Output goes to /dev/null; a command that fails makes benchrun fail.
 *
 * A command may start with words that set up its process, in any order:
 *   FD<PATH     PATH opened on FD for each run (bwrap --seccomp FD reads
 *               its descriptor to the end);
 *   @UID:GID    the command runs as that user and group, with no
 *               supplementary groups (make bench as root measures a user
 *               too, with nothing in between: no su, no setpriv);
 *   NAME=VALUE  set in its environment (HOME for that user).
 *
 * -p FD: the phase marks of a stockade built with -DSTOCKADE_PHASES
 * (lib/phase.h), which writes "NAME NANOSECONDS" lines to descriptor FD:
 * a file is opened there for each run, and instead of the lines above
 * benchrun prints a table, one column per command (named by -l), one row
 * per phase: its median in microseconds and its share of the median
 * start-up. A mark ends the phase it names, in its own process; a plain
 * name is stockade's, its first phase measured from the fork before its
 * exec, and "exit" is from its last mark to the end of the wait; a
 * "who:what" name is another process's, whose first phase starts at the
 * last mark made before it (its fork). Those run beside stockade's, so
 * their shares do not add up with stockade's. */
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 16
#define MAX_PHASES 128

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

/* The phases, the rows of the table: names in the order first seen, and
 * for each command and run the phase's nanoseconds (-1: not in that run). */
static char *phase_names[MAX_PHASES];
static size_t n_phases;
static long long *phase_ns[MAX_PHASES][MAX_CMDS];

/* The row of name; a new one goes right after after's (the mark before
 * it in the same process), so that each process's phases stay in order
 * whichever command showed them first. */
static size_t phase_row(const char *name, const char *after, int n_runs)
{
	size_t at = n_phases;
	for (size_t i = 0; i < n_phases; i++) {
		if (strcmp(phase_names[i], name) == 0)
			return i;
		if (after && strcmp(phase_names[i], after) == 0)
			at = i + 1;
	}
	if (n_phases == MAX_PHASES) {
		fprintf(stderr, "benchrun: more than %d phases\n", MAX_PHASES);
		exit(1);
	}
	memmove(&phase_names[at + 1], &phase_names[at], (n_phases - at) * sizeof(phase_names[0]));
	memmove(&phase_ns[at + 1], &phase_ns[at], (n_phases - at) * sizeof(phase_ns[0]));
	phase_names[at] = strdup(name);
	for (int c = 0; c < MAX_CMDS; c++) {
		phase_ns[at][c] = malloc((size_t)n_runs * sizeof(long long));
		for (int i = 0; i < n_runs; i++)
			phase_ns[at][c][i] = -1;
	}
	n_phases++;
	return at;
}

static void add_phase(const char *name, const char *after, int c, int run, int n_runs, long long ns)
{
	size_t row = phase_row(name, after, n_runs);
	long long *v = &phase_ns[row][c][run];
	*v = (*v < 0 ? 0 : *v) + ns;
}

/* One run's marks, read from the file fd, into the rows. */
static void read_marks(int fd, int c, int run, int n_runs, long long forked, long long ended)
{
	char buf[1 << 16];
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return;
	buf[len] = '\0';
	/* Each process's last mark, by its "who:" prefix ("" for stockade). */
	char who[16][32], last_name[16][64];
	long long last[16];
	size_t n_who = 0;
	long long latest = forked;	/* the last mark of any process */
	long long main_last = forked;
	const char *main_name = NULL;
	for (char *line = buf, *next; *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break;
		*next++ = '\0';
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		long long t = atoll(sp + 1);
		char *colon = strchr(line, ':');
		size_t wl = colon ? (size_t)(colon - line) : 0;
		if (wl >= sizeof(who[0]))
			continue;
		size_t w = 0;
		while (w < n_who && !(strlen(who[w]) == wl && strncmp(who[w], line, wl) == 0))
			w++;
		if (w == n_who) {
			if (n_who == 16)
				continue;
			memcpy(who[w], line, wl);
			who[w][wl] = '\0';
			/* stockade's first phase starts at the fork; another
			 * process's at the mark before it */
			last[w] = wl ? latest : forked;
			last_name[w][0] = '\0';
			n_who++;
		}
		add_phase(line, last_name[w][0] ? last_name[w] : NULL, c, run, n_runs, t - last[w]);
		last[w] = t;
		size_t nl = strnlen(line, sizeof(last_name[w]) - 1);
		memcpy(last_name[w], line, nl);
		last_name[w][nl] = '\0';
		if (t > latest)
			latest = t;
		if (!wl) {
			main_last = t;
			main_name = last_name[w];
		}
	}
	add_phase("exit", main_name, c, run, n_runs, ended - main_last);
}

static long long median_of(long long *v, int n)
{
	long long *s = malloc((size_t)n * sizeof(long long));
	int k = 0;
	for (int i = 0; i < n; i++)
		if (v[i] >= 0)
			s[k++] = v[i];
	long long m = -1;
	if (k) {
		qsort(s, (size_t)k, sizeof(long long), cmp);
		m = s[k / 2];
	}
	free(s);
	return m;
}

static void print_phases(int ncmd, int n, long long *times[], char *labels)
{
	char *label[MAX_CMDS] = { 0 };
	for (int c = 0; c < ncmd; c++) {
		label[c] = labels ? strsep(&labels, ",") : NULL;
		if (!label[c])
			label[c] = "";
	}
	long long total[MAX_CMDS];
	for (int c = 0; c < ncmd; c++)
		total[c] = times[c][n / 2];	/* sorted already */
	printf("%-32s", "phase (median us, share)");
	for (int c = 0; c < ncmd; c++)
		printf(" %16.16s", label[c]);
	printf("\n");
	/* stockade's own phases first, in their order, then each other
	 * process's, which run beside them */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t r = 0; r < n_phases; r++) {
			const char *colon = strchr(phase_names[r], ':');
			if ((pass == 0) != (colon == NULL))
				continue;
			printf("%-32.32s", phase_names[r]);
			for (int c = 0; c < ncmd; c++) {
				long long m = median_of(phase_ns[r][c], n);
				if (m < 0)
					printf(" %16s", "-");
				else
					printf(" %9.1f %5.1f%%", (double)m / 1000.0,
					       total[c] > 0 ? 100.0 * (double)m / (double)total[c] : 0.0);
			}
			printf("\n");
		}
		if (pass == 0) {
			printf("%-32s", "total (fork to end of wait)");
			for (int c = 0; c < ncmd; c++)
				printf(" %9.1f %6s", (double)total[c] / 1000.0, "100%");
			printf("\n");
		}
	}
}

/* In the child: the command's set-up words, then its exec. */
static _Noreturn void start(char **cmd, int devnull, int phase_fd, int phase_file)
{
	dup2(devnull, 1);
	dup2(devnull, 2);
	if (phase_fd >= 0 && dup2(phase_file, phase_fd) < 0)
		_exit(126);
	for (; *cmd; cmd++) {
		if (strchr(*cmd, '<') && **cmd >= '0' && **cmd <= '9') {
			int fd = open(strchr(*cmd, '<') + 1, O_RDONLY);
			if (fd < 0 || dup2(fd, atoi(*cmd)) < 0)
				_exit(126);
		} else if (**cmd == '@') {
			unsigned uid = 0, gid = 0;
			if (sscanf(*cmd, "@%u:%u", &uid, &gid) != 2 || setgroups(0, NULL) < 0 ||
			    setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
				_exit(126);
		} else if (strchr(*cmd, '=') && **cmd != '/' && **cmd != '.') {
			if (putenv(*cmd) < 0)
				_exit(126);
		} else {
			break;
		}
	}
	execvp(cmd[0], cmd);
	_exit(127);
}

int main(int argc, char **argv)
{
	int phase_fd = -1;
	char *labels = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "+p:l:")) != -1) {
		if (opt == 'p')
			phase_fd = atoi(optarg);
		else if (opt == 'l')
			labels = optarg;
		else
			return 2;
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc < 3) {
		fprintf(stderr, "usage: benchrun [-p FD [-l LABEL,...]] N CMD... [:: CMD...]...\n");
		return 2;
	}
	int n = atoi(argv[1]);
	char **cmds[MAX_CMDS];
	int ncmd = 0;
	cmds[ncmd++] = &argv[2];
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "::") == 0) {
			argv[i] = NULL;
			if (ncmd < MAX_CMDS && argv[i + 1])
				cmds[ncmd++] = &argv[i + 1];
		}
	long long *times[MAX_CMDS], *rss[MAX_CMDS];
	for (int c = 0; c < ncmd; c++) {
		times[c] = calloc((size_t)n, sizeof(long long));
		rss[c] = calloc((size_t)n, sizeof(long long));
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* The marks' file: each run's start it anew, appended to by every
	 * process of the run. */
	int phase_file = -1;
	if (phase_fd >= 0 && ((phase_file = memfd_create("benchrun-phases", MFD_CLOEXEC)) < 0 ||
			      fcntl(phase_file, F_SETFL, O_APPEND) < 0)) {
		perror("benchrun: memfd_create");
		return 1;
	}

	for (int i = 0; i < n; i++) {
		/* Forward on even rounds, backward on odd ones: no command
		 * always runs right after the same other one. */
		for (int k = 0; k < ncmd; k++) {
			int c = i % 2 ? ncmd - 1 - k : k;
			if (phase_file >= 0 && ftruncate(phase_file, 0) < 0)
				return 1;
			long long t = now_ns();
			pid_t pid = fork();
			if (pid == 0)
				start(cmds[c], devnull, phase_fd, phase_file);
			int status;
			struct rusage ru;
			if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				char **cmd = cmds[c];
				while (cmd[1] && (strchr(*cmd, '<') || **cmd == '@' || (strchr(*cmd, '=') && **cmd != '/')))
					cmd++;
				fprintf(stderr, "benchrun: '%s' failed\n", *cmd);
				return 1;
			}
			long long ended = now_ns();
			times[c][i] = ended - t;
			rss[c][i] = ru.ru_maxrss;
			if (phase_file >= 0)
				read_marks(phase_file, c, i, n, t, ended);
		}
	}
	for (int c = 0; c < ncmd; c++) {
		qsort(times[c], (size_t)n, sizeof(long long), cmp);
		qsort(rss[c], (size_t)n, sizeof(long long), cmp);
	}
	if (phase_file >= 0) {
		print_phases(ncmd, n, times, labels);
		return 0;
	}
	for (int c = 0; c < ncmd; c++)
		printf("%lld %lld %lld %lld\n", times[c][n / 2] / 1000, times[c][n * 9 / 10] / 1000, rss[c][n / 2],
		       rss[c][n - 1]);
	return 0;
}
