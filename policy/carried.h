/* The run's policy as the jail carries it: a read-only file in the jail
 * (named by STOCKADE_POLICY in the command's environment), so that
 * `stockade why` inside a run answers from the very rules the run
 * enforces, with the backend's own places among them, not from a policy
 * built again from settings the jail may not see.
 *
 * A line a record, fields separated by tabs, a backslash, tab or newline
 * in a field escaped (\\, \t, \n):
 *   stockade-policy 1
 *   backend NAME
 *   workspace PATH
 *   cwd PATH
 *   net MODE SOURCE
 *   grant KIND HOST PORT JAIL_PORT PATH SOURCE
 *   allow WILDCARD PORT NAME LIST SOURCE
 *   rule ACCESS FLAGS PATH ORIGIN SOURCE
 * where SOURCE is KIND KEY FILE LINE. */
#pragma once

#include "policy/policy.h"

/* The text of p, its places among its rules. */
char *policy_carry(const struct policy *p, enum backend backend);

/* The policy back from that text: every rule the run had (its places
 * among them, flagged RULE_FRESH). 0, or -EINVAL with the line that is
 * wrong in *ret_line. */
int policy_uncarry(const char *text, struct policy *ret, enum backend *ret_backend, unsigned *ret_line);

/* The environment variable that names the file. */
#define POLICY_CARRIED_ENV "STOCKADE_POLICY"
/* Where the namespace jail's init writes it, in the jail's root. */
#define POLICY_CARRIED_NS_PATH "/.stockade-policy"
