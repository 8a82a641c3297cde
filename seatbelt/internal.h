/* seatbelt/'s own: the base allowances, rendered before the rules. */
#pragma once

#include "lib/util.h"
#include "policy/policy.h"

/* A path every process on macOS needs, granted like a rule of the policy
 * (read, or write for a device), so that it goes through the same
 * deepest-wins order: a user's --hide beneath it still wins. */
struct seatbelt_base_path {
	const char *path;
	enum access access;
	const char *why;
};

const struct seatbelt_base_path *seatbelt_base_paths(size_t *ret_n);
/* The profile's head: version, deny default, and what is not a path
 * (processes, sysctls, Mach services, IPC, the network mode). */
void seatbelt_base_head(struct text *t, enum net_mode net);
