/* Compiling the filter with libseccomp: at build time by tools/gen-filters
 * for every variant a run can ask for, and at run time only when the
 * binary was built without them. */
#include "seccomp/seccomp.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "lib/fd.h"
#include "lib/util.h"

int seccomp_rule_nr(const struct sc_rule *r)
{
	int nr = seccomp_syscall_resolve_name(r->name);
	if (nr == __NR_SCMP_ERROR)
		return r->nr;
	return nr < 0 ? -1 : nr;	/* a pseudo-number: not a call of this architecture */
}

/* libseccomp lets an unconditional rule swallow the conditional ones of the
 * same call, and has no masked "not equal". So "allow ioctl except these
 * requests" becomes allow rules over every value of the masked bits but the
 * refused ones: split on one bit at a time until no refused value remains
 * in a branch (allow it whole) or the branch is one refused value (leave it
 * to the default action). */
static int add_complement(scmp_filter_ctx ctx, int nr, unsigned arg, uint64_t mask,
			  const uint64_t *values, size_t n_values, uint64_t fixed_mask,
			  uint64_t fixed_value)
{
	bool any = false;
	for (size_t i = 0; i < n_values && !any; i++)
		any = (values[i] & fixed_mask) == fixed_value;
	if (!any) {
		struct scmp_arg_cmp cmp = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, fixed_mask, fixed_value);
		return seccomp_rule_add_exact_array(ctx, SCMP_ACT_ALLOW, nr, 1, &cmp);
	}
	uint64_t rest = mask & ~fixed_mask;
	if (!rest)
		return 0;
	uint64_t bit = rest & -rest;
	int r = add_complement(ctx, nr, arg, mask, values, n_values, fixed_mask | bit, fixed_value);
	if (r < 0)
		return r;
	return add_complement(ctx, nr, arg, mask, values, n_values, fixed_mask | bit, fixed_value | bit);
}

/* Is refusal r inside refusal q's region (q's mask within r's, and r's
 * value agrees with q's on it)? Then q's complement leaves r out already. */
static bool refusal_within(const struct sc_rule *r, const struct sc_rule *q)
{
	const struct sc_arg *a = &r->args[0], *b = &q->args[0];
	return a->arg == b->arg && (sc_arg_mask(b) & sc_arg_mask(a)) == sc_arg_mask(b) && (a->value & b->mask) == b->value;
}

/* Does a row before row i of the plan hold exactly its arguments, with
 * another action? The first row that matches decides (the landlock
 * backend's TIOCGPTPEER goes to the listener, the namespace jail's is
 * allowed by the row after). */
static bool shadowed(const struct seccomp_plan *plan, size_t i)
{
	const struct sc_rule *r = plan->rules[i];
	for (size_t j = 0; j < i; j++) {
		const struct sc_rule *q = plan->rules[j];
		if (plan->nrs[j] != plan->nrs[i] || q->n_args != r->n_args ||
		    seccomp_row_action(plan, q) == seccomp_row_action(plan, r))
			continue;
		bool same = true;
		for (unsigned a = 0; a < r->n_args && same; a++)
			same = q->args[a].arg == r->args[a].arg && sc_arg_mask(&q->args[a]) == sc_arg_mask(&r->args[a]) &&
			       q->args[a].value == r->args[a].value;
		if (same)
			return true;
	}
	return false;
}

static int add_syscall(scmp_filter_ctx ctx, const struct seccomp_plan *plan, int nr)
{
	bool allow_all = false;
	const struct sc_rule *refusals[16];
	size_t n_refusals = 0;

	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct sc_rule *r = plan->rules[i];
		if (plan->nrs[i] != nr)
			continue;
		enum sc_action act = seccomp_row_action(plan, r);
		if (act == SC_ALLOW && r->n_args == 0)
			allow_all = true;
		if (act != SC_ALLOW && r->n_args > 0) {
			if (n_refusals == ARRAY_SIZE(refusals))
				return -E2BIG;
			refusals[n_refusals++] = r;
		}
	}

	if (allow_all && n_refusals) {
		/* The refusals that no wider one holds: TIOCSTI's row is
		 * within the terminal requests' for the filter, and only the
		 * listener's answer tells them apart. */
		uint64_t values[ARRAY_SIZE(refusals)];
		const struct sc_rule *first = NULL;
		size_t n_values = 0;
		for (size_t i = 0; i < n_refusals; i++) {
			const struct sc_rule *r = refusals[i];
			bool within = false;
			for (size_t j = 0; j < n_refusals && !within; j++)
				within = j != i && refusals[j]->n_args == 1 && refusal_within(r, refusals[j]) &&
					 (!refusal_within(refusals[j], r) || j < i);
			if (within)
				continue;
			/* One argument under one mask: what the table uses,
			 * and all the complement can express. */
			if (r->n_args != 1 || (first && (r->args[0].arg != first->args[0].arg ||
							 r->args[0].mask != first->args[0].mask)))
				return -EINVAL;
			first = first ? first : r;
			values[n_values++] = r->args[0].value;
		}
		if (!first)
			return -EINVAL;	/* cannot be: the widest refusal is within none */
		int ret = add_complement(ctx, nr, sc_arg_index(&first->args[0]), sc_arg_mask(&first->args[0]), values,
					 n_values, 0, 0);
		/* Then the exceptions the table allows inside what it refuses:
		 * the terminal requests on the list. */
		for (size_t i = 0; i < plan->n_rules && ret == 0; i++) {
			const struct sc_rule *r = plan->rules[i];
			if (plan->nrs[i] != nr || seccomp_row_action(plan, r) != SC_ALLOW || r->n_args == 0 ||
			    shadowed(plan, i))
				continue;
			struct scmp_arg_cmp cmp[3];
			for (unsigned a = 0; a < r->n_args; a++)
				cmp[a] = SCMP_CMP(sc_arg_index(&r->args[a]), SCMP_CMP_MASKED_EQ, sc_arg_mask(&r->args[a]),
						  r->args[a].value);
			ret = seccomp_rule_add_exact_array(ctx, SCMP_ACT_ALLOW, nr, r->n_args, cmp);
		}
		return ret;
	}

	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct sc_rule *r = plan->rules[i];
		if (plan->nrs[i] != nr)
			continue;
		uint32_t action;
		enum sc_action act = seccomp_row_action(plan, r);
		if (act == SC_ALLOW)
			action = SCMP_ACT_ALLOW;
		else if (act == SC_ERRNO)
			action = SCMP_ACT_ERRNO((uint32_t)r->err);
		else if (plan->no_listener && seccomp_row_errno(plan, i) != ENOSYS)
			action = SCMP_ACT_ERRNO((uint32_t)seccomp_row_errno(plan, i));
		else if (r->n_args == 0)
			break;	/* the default action, for every call left: the first whole row decides */
		else
			continue;	/* the default action: the listener, or ENOSYS */
		/* libseccomp refuses a rule that is the default (EACCES). */
		if (plan->no_listener && action == SCMP_ACT_ERRNO(ENOSYS)) {
			if (r->n_args == 0)
				break;
			continue;
		}
		struct scmp_arg_cmp cmp[3];
		for (unsigned a = 0; a < r->n_args; a++)
			cmp[a] = SCMP_CMP(sc_arg_index(&r->args[a]), SCMP_CMP_MASKED_EQ, sc_arg_mask(&r->args[a]),
					  r->args[a].value);
		int ret = seccomp_rule_add_exact_array(ctx, action, nr, r->n_args, cmp);
		if (ret < 0)
			return ret;
		if (r->n_args == 0)
			break;
	}
	return 0;
}

/* libseccomp 2.5 exports to a descriptor only: a memfd, read back. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
	_cleanup_close_ int fd = memfd_create("stockade-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EINVAL;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	_cleanup_free_ struct sock_filter *insns = xmalloc((size_t)size);
	size_t got;
	r = read_all(fd, insns, (size_t)size, &got);
	if (r < 0)
		return r;
	if (got != (size_t)size)
		return -EIO;
	ret->filter = TAKE_PTR(insns);
	ret->len = (unsigned short)((size_t)size / sizeof(struct sock_filter));
	return 0;
}

int seccomp_compile(const struct seccomp_plan *plan, struct sock_fprog *ret)
{
	*ret = (struct sock_fprog){ 0 };
	scmp_filter_ctx ctx = seccomp_init(plan->no_listener ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_NOTIFY);
	if (!ctx)
		return -ENOMEM;

	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

	/* Each call once, with all its rows. */
	for (size_t i = 0; i < plan->n_rules && r == 0; i++) {
		int nr = plan->nrs[i];
		if (nr < 0)
			continue;	/* not a call of this architecture */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = plan->nrs[j] == nr;
		if (!seen)
			r = add_syscall(ctx, plan, nr);
	}

	if (r == 0)
		r = export_bpf(ctx, ret);
	seccomp_release(ctx);
	return r;
}

