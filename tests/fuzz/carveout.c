/* libFuzzer: the Landlock carve-out planner. The input picks rules (a
 * path of a small tree made once, and an access) into a policy; the plan
 * is made for ABI 7. Invariants: nothing a rule hides is reachable
 * through a granted tree (no rule at it or above it grants reading,
 * running or writing), nothing a rule makes read-only or protects is
 * writable (but a trust hand-off, which the guard keeps), and no rule
 * grants a right the ABI lacks. */
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock/landlock.h"
#include "lib/path.h"
#include "lib/util.h"

static const char *const rels[] = {
	"",	 "a",	  "a/b",   "a/b/c",	"a/b/c/f", "a/b/g", "a/d", "a/d/h",
	"a/.git", "a/.git/hooks", "a/.git/config", "e", "e/f", "e/s", "a/b/c/k",
};
static char root[64];

static void make_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/stockade-fuzz-carve-%d", (int)getpid());
	mkdir(root, 0700);
	static const char *const dirs[] = { "a", "a/b", "a/b/c", "a/d", "a/.git", "a/.git/hooks", "e", "e/s" };
	static const char *const files[] = { "a/b/c/f", "a/b/g", "a/d/h", "a/.git/config", "e/f", "a/b/c/k" };
	char path[256];
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		mkdir(path, 0700);
	}
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		FILE *f = fopen(path, "w");
		if (f)
			fclose(f);
	}
}

#define GRANTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE)
#define WRITES (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG)

/* The rights the plan gives path: the union of every rule at it or above
 * it (Landlock's own rule: a rule covers its whole tree). */
static uint64_t reach(const struct landlock_plan *plan, const char *path)
{
	uint64_t r = 0;
	for (size_t i = 0; i < plan->n_rules; i++)
		if (path_is_beneath(path, plan->rules[i].path))
			r |= plan->rules[i].access;
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0])
		make_tree();
	if (size > 32)
		return 0;
	struct policy p;
	policy_init(&p);
	for (size_t i = 0; i + 1 < size; i += 2) {
		const char *rel = rels[data[i] % ARRAY_SIZE(rels)];
		enum access a = (enum access)(data[i + 1] % 4);
		char *path = rel[0] ? path_join(root, rel) : xstrdup(root);
		/* a trust hand-off is a protect rule, kept by the guard */
		unsigned flags = a == ACCESS_PROTECT && (data[i + 1] & 0x10) ? RULE_HANDOFF : 0;
		policy_add_rule(&p, path, a, flags, SOURCE_DEFAULT_OF("fuzz"), "fuzz");
		free(path);
	}
	policy_sort(&p);
	struct landlock_plan plan;
	if (landlock_plan(&p, 7, 0, &plan) == 0) {
		for (size_t i = 0; i < plan.n_rules; i++)
			if (plan.rules[i].access & ~landlock_handled_fs(7))
				abort();
		for (size_t i = 0; i < ARRAY_SIZE(rels); i++) {
			char *path = rels[i][0] ? path_join(root, rels[i]) : xstrdup(root);
			enum effect e = policy_effect(&p, path);
			uint64_t r = reach(&plan, path);
			/* A hand-off in a writable tree is never carved out: the
			 * guard keeps it (DESIGN, path rules). */
			bool guarded = false;
			for (size_t k = 0; k < p.n_rules; k++)
				guarded |= (p.rules[k].flags & RULE_HANDOFF) && path_is_beneath(path, p.rules[k].path);
			if (e == EFFECT_NONE && (r & (GRANTS | WRITES)))
				abort();
			if (e == EFFECT_READ && (r & WRITES) && !guarded)
				abort();
			free(path);
		}
		landlock_plan_free(&plan);
	}
	policy_free(&p);
	return 0;
}
