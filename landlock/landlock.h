/* Landlock: the ABI probe, the rule plan with carve-outs, and applying it.
 * landlock_plan() reads the tree it enumerates but changes nothing;
 * landlock_apply() is the short part that runs in the command's process. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

/* The highest ABI this kernel enforces; 0 when Landlock is missing or
 * compiled in but not enforced (ENOSYS, EOPNOTSUPP). */
int landlock_abi(void);

/* The one table mapping an effect to Landlock rights for an ABI; a file
 * gets only the rights that apply to files. make-char and make-block are
 * never granted. */
uint64_t landlock_rights(enum effect e, bool dir, int abi);
/* Every filesystem right the ABI knows: all of them are handled. */
uint64_t landlock_handled_fs(int abi);
/* Writes the names of the rights in mask, separated by commas. */
void landlock_rights_print(FILE *f, uint64_t mask);

struct landlock_rule {
	char *path;
	uint64_t access;
	bool dir;
	bool carve;		/* an enumerated sibling or a listing right */
	const char *origin;	/* the policy rule it renders (borrowed) */
};

struct landlock_plan {
	int abi;
	unsigned flags;		/* LANDLOCK_PLAN_* it was made with */
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
	struct landlock_rule *rules;
	size_t n_rules;
	size_t n_enumerated;	/* directories enumerated for carve-outs */
	/* Those of them the policy lets the command write: Landlock grants
	 * them their listing alone, so that nothing new can be made in them
	 * but by the supervisor (supervise/files.c). */
	char **carved;
};

/* Leave carve-outs to someone else (the mount namespace covers hidden
 * paths and binds read-only holes): grant each rule's tree whole,
 * skipping hide and protect, never enumerating. */
#define LANDLOCK_PLAN_NO_CARVE (1u << 0)
/* Let the command list "/": the namespace jail's root holds only mount
 * points. */
#define LANDLOCK_PLAN_LIST_ROOT (1u << 1)
/* TCP left to the network namespace: a nested run whose namespace has
 * only its loopback, and no supervisor to bind and connect for it. */
#define LANDLOCK_PLAN_TCP_TO_NETNS (1u << 2)

/* The rules of the policy and of its places (RULE_FRESH), rendered for
 * abi. */
int landlock_plan(const struct policy *p, int abi, unsigned flags, struct landlock_plan *ret);
void landlock_plan_free(struct landlock_plan *plan);
/* Whether a plan of this policy would carve a directory the policy lets
 * the command write (a hide, read or protect in it, on something that
 * exists): the run then needs the supervisor to make what is new there.
 * Asked before the plan is made, by the rules alone. */
bool landlock_carves_writable(const struct policy *p);
void landlock_plan_print(FILE *f, const struct landlock_plan *plan);

/* What Landlock of this ABI (0: none) enforces of the policy, and what it
 * leaves out, with the flags a plan is made with, into the report. */
void landlock_describe(int abi, unsigned flags, enum net_mode net, struct report *rep);

/* Builds the ruleset and restricts the calling process. Every path is
 * opened without following symlinks; on failure ret_failing_path names the
 * path that failed, if any. */
int landlock_apply(const struct landlock_plan *plan, const char **ret_failing_path);
/* The same in two steps: the ruleset, built wherever the paths are seen
 * (stockade, before the command's process needs it), and restricting the
 * calling process with it. */
int landlock_build(const struct landlock_plan *plan, int *ret_fd, const char **ret_failing_path);
int landlock_restrict(int ruleset);
