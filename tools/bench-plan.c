/* Times landlock_plan on a synthetic workspace: DIRS directories of FILES
 * files each, with HIDDEN of the files hidden, spread evenly. Prints the
 * rule count and the median of several plans in milliseconds. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "lib/fs.h"
#include "policy/policy.h"
#include "lib/util.h"
#include "landlock/landlock.h"

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bench-plan ROOT DIRS FILES HIDDEN\n");
		return 2;
	}
	const char *root = argv[1];
	int dirs = atoi(argv[2]), files = atoi(argv[3]), hidden = atoi(argv[4]);
	int abi = landlock_abi();
	if (abi <= 0)
		abi = 7;

	struct policy p;
	policy_init(&p);
	p.net = NET_OFF;
	policy_add_rule(&p, root, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "workspace");
	int total = dirs * files, step = total / (hidden ? hidden : 1);
	for (int i = 0; i < hidden; i++) {
		int k = i * step;
		_cleanup_free_ char *path = xasprintf("%s/d%04d/f%04d", root, k / files, k % files);
		policy_add_rule(&p, path, ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "--hide");
	}

	double ms[7];
	size_t rules = 0;
	for (int run = 0; run < 7; run++) {
		struct landlock_plan plan;
		unsigned long long t = now_usec();
		if (landlock_plan(&p, abi, 0, &plan) < 0) {
			fprintf(stderr, "bench-plan: planning failed\n");
			return 1;
		}
		ms[run] = (double)(now_usec() - t) / 1000.0;
		rules = plan.n_rules;
		landlock_plan_free(&plan);
	}
	for (int i = 0; i < 7; i++)
		for (int j = i + 1; j < 7; j++)
			if (ms[j] < ms[i]) {
				double x = ms[i];
				ms[i] = ms[j];
				ms[j] = x;
			}
	printf("%zu %.2f\n", rules, ms[3]);
	policy_free(&p);
	return 0;
}
