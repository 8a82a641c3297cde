/* The guard's cost per command of a session in each workspace given, the
 * workspaces interleaved round by round: guard_check with the watch (what
 * a session does after each command) and, beside it, guard_end then
 * guard_begin (what it did before, a refresh of the whole index). Prints
 * one line a workspace: its path, the median check and the median end
 * and begin, in microseconds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "guard/guard.h"
#include "jail/run.h"
#include "lib/fs.h"
#include "lib/util.h"

#define MAX_WS 8

static long usec_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000L + (b.tv_nsec - a->tv_nsec) / 1000;
}

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static int begin(const struct guard_options *o, struct guard **g)
{
	struct guard_report rep;
	int r = guard_begin(o, g, &rep, NULL);
	guard_report_free(&rep);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc - 3 > MAX_WS) {
		fprintf(stderr, "usage: bench-guard STATE_DIR ROUNDS WORKSPACE...\n");
		return 2;
	}
	const char *state = argv[1];
	int rounds = atoi(argv[2]), n = argc - 3;
	if (rounds < 1)
		rounds = 1;
	struct guard_options o[MAX_WS];
	char *ws[MAX_WS];
	struct guard *g[MAX_WS];
	long *check_us[MAX_WS], *again_us[MAX_WS];
	for (int i = 0; i < n; i++) {
		if (path_canonical(argv[3 + i], &ws[i]) < 0) {
			perror(argv[3 + i]);
			return 1;
		}
		o[i] = (struct guard_options){ .workspace = ws[i], .state_dir = state, .knows = &run_guard_knowledge };
		check_us[i] = xcalloc((size_t)rounds, sizeof(long));
		again_us[i] = xcalloc((size_t)rounds, sizeof(long));
		int r = begin(&o[i], &g[i]);
		if (r == 0)
			r = guard_watch(g[i]);
		if (r < 0) {
			fprintf(stderr, "bench-guard: cannot guard '%s': %s\n", ws[i], strerror(-r));
			return 1;
		}
	}
	for (int k = 0; k < rounds; k++)
		for (int i = 0; i < n; i++) {
			struct guard_report rep;
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			int r = guard_check(g[i], 0, &rep, NULL);
			check_us[i][k] = usec_since(&t);
			guard_report_free(&rep);
			if (r < 0) {
				fprintf(stderr, "bench-guard: guard_check '%s': %s\n", ws[i], strerror(-r));
				return 1;
			}
		}
	for (int i = 0; i < n; i++) {
		struct guard_report rep;
		(void)guard_end(g[i], &rep, NULL);
		guard_report_free(&rep);
		guard_free(g[i]);
		if (begin(&o[i], &g[i]) < 0)
			return 1;
	}
	for (int k = 0; k < rounds; k++)
		for (int i = 0; i < n; i++) {
			struct guard_report rep;
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			int r = guard_end(g[i], &rep, NULL);
			guard_report_free(&rep);
			guard_free(g[i]);
			if (r == 0)
				r = begin(&o[i], &g[i]);
			again_us[i][k] = usec_since(&t);
			if (r < 0) {
				fprintf(stderr, "bench-guard: guard_end and guard_begin '%s': %s\n", ws[i], strerror(-r));
				return 1;
			}
		}
	for (int i = 0; i < n; i++) {
		struct guard_report rep;
		(void)guard_end(g[i], &rep, NULL);
		guard_report_free(&rep);
		guard_free(g[i]);
		qsort(check_us[i], (size_t)rounds, sizeof(long), cmp);
		qsort(again_us[i], (size_t)rounds, sizeof(long), cmp);
		printf("%s %ld %ld\n", ws[i], check_us[i][rounds / 2], again_us[i][rounds / 2]);
		free(check_us[i]);
		free(again_us[i]);
		free(ws[i]);
	}
	return 0;
}
