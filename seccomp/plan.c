/* The plan: which rows of the table a run's filter holds, the filter
 * itself (compiled at build time for every variant), what the listener
 * answers to a call the filter handed it, and printing. Pure. */
#include "seccomp/seccomp.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <stdint.h>

#include "lib/util.h"

static bool is_weak_backend(enum backend backend, int abi)
{
	/* Below ABI 3 the namespaces backend's read-only mounts refuse
	 * truncation already; Landlock alone does not. */
	return abi < 3 && backend == BACKEND_LANDLOCK;
}

static bool rule_applies(const struct sc_rule *r, enum backend backend, enum net_mode net, int abi)
{
	unsigned w = r->when;
	if ((w & SC_LANDLOCK) && backend != BACKEND_LANDLOCK)
		return false;
	if ((w & SC_NAMESPACES) && backend != BACKEND_NAMESPACES)
		return false;
	if (w & SC_NET_ANY) {
		unsigned bit = net == NET_OFF				 ? SC_NET_OFF
			       : net == NET_LOOPBACK || net == NET_ALLOW ? SC_NET_LOOPBACK
									 : SC_NET_ON;
		if (!(w & bit))
			return false;
	}
	if ((w & SC_NET_ALLOW) && net != NET_ALLOW)
		return false;
	bool weak = is_weak_backend(backend, abi);
	if ((w & SC_ABI_LT3) && !weak)
		return false;
	if ((w & SC_ABI_GE3) && weak)
		return false;
	return true;
}

/* Written at build time by tools/gen-filters from this very table with
 * libseccomp, so that no run pays for resolving names and compiling a
 * filter (about 1.5 ms); absent in gen-filters itself. */
extern const int seccomp_generated_nrs[] __attribute__((weak));
extern const char seccomp_generated_name_text[] __attribute__((weak));
extern const unsigned short seccomp_generated_name_at[] __attribute__((weak));
extern const size_t seccomp_generated_n_names __attribute__((weak));
/* In tools/gen-filters and the unit tests, where libseccomp is linked;
 * stockade itself runs on what they generated. */
extern int seccomp_compile(const struct seccomp_plan *plan, struct sock_fprog *ret) __attribute__((weak));
extern int seccomp_rule_nr(const struct sc_rule *r) __attribute__((weak));
extern const size_t seccomp_generated_n_nrs __attribute__((weak));
extern const struct seccomp_precompiled seccomp_generated_filters[] __attribute__((weak));
extern const size_t seccomp_generated_n_filters __attribute__((weak));

int seccomp_plan(enum backend backend, enum net_mode net, int landlock_abi,
		 struct seccomp_plan *ret)
{
	*ret = (struct seccomp_plan){
		.uid = getuid(),
		.gid = getgid(),
		.backend = backend,
		.net = net,
		.weak_landlock = is_weak_backend(backend, landlock_abi),
	};
	size_t n_table;
	const struct sc_rule *table = seccomp_table(&n_table);
	bool generated = &seccomp_generated_n_nrs && seccomp_generated_n_nrs == n_table;
	ret->rules = xcalloc(n_table, sizeof(*ret->rules));
	ret->nrs = xcalloc(n_table, sizeof(*ret->nrs));
	for (size_t i = 0; i < n_table; i++) {
		if (!rule_applies(&table[i], backend, net, landlock_abi))
			continue;
		ret->rules[ret->n_rules] = &table[i];
		ret->nrs[ret->n_rules++] = generated ? seccomp_generated_nrs[i]
				  : seccomp_rule_nr  ? seccomp_rule_nr(&table[i])
						     : table[i].nr;
	}
	return 0;
}

/* What supervise_files sends to the listener: the calls that open,
 * make, remove or rename a name. */
static const int file_calls[] = {
#ifdef SYS_open
	SYS_open, SYS_creat, SYS_mkdir, SYS_unlink, SYS_rmdir, SYS_rename, SYS_link, SYS_symlink, SYS_mknod,
#endif
	SYS_openat, SYS_openat2, SYS_mkdirat, SYS_unlinkat, SYS_renameat, SYS_renameat2, SYS_linkat, SYS_symlinkat,
	SYS_mknodat, SYS_truncate,
};

/* What name_opens sends: the opens alone. */
static const int open_calls[] = {
#ifdef SYS_open
	SYS_open, SYS_creat,
#endif
	SYS_openat, SYS_openat2,
};

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

bool seccomp_files_call(int nr)
{
	for (size_t i = 0; i < ARRAY_SIZE(file_calls); i++)
		if (file_calls[i] == nr)
			return true;
	return false;
}

bool seccomp_open_call(int nr)
{
	for (size_t i = 0; i < ARRAY_SIZE(open_calls); i++)
		if (open_calls[i] == nr)
			return true;
	return false;
}

bool seccomp_can_supervise_files(void)
{
#ifdef NATIVE_AUDIT_ARCH
	return true;
#else
	return false;
#endif
}

/* The instructions put before a filter for supervise_files (or
 * name_opens): on the native architecture, each of calls goes to the
 * listener; every other call, and every call of another architecture,
 * goes on to the filter as compiled, whose jumps are relative and stay
 * as they were. Every one of these calls the compiled filter allows on
 * either backend with Landlock ABI 3 (or sends to the listener itself):
 * the supervisor lets what it does not make go on to the kernel. */
static int prefix_calls(struct sock_fprog *prog, const int *calls, unsigned k)
{
#ifdef NATIVE_AUDIT_ARCH
	unsigned l = 3 + k + 2;
	struct sock_filter *insns = xcalloc((size_t)prog->len + l, sizeof(*insns));
	insns[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	insns[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 0, (uint8_t)(l - 2));
	insns[2] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (unsigned j = 0; j < k; j++)
		insns[3 + j] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)calls[j], (uint8_t)(k - j), 0);
	insns[3 + k] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 1);
	insns[3 + k + 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	if ((size_t)prog->len + l > BPF_MAXINSNS) {
		free(insns);
		return -E2BIG;
	}
	memcpy(insns + l, prog->filter, prog->len * sizeof(*insns));
	free(prog->filter);
	prog->filter = insns;
	prog->len = (unsigned short)(prog->len + l);
	return 0;
#else
	return -ENOSYS;
#endif
}

static int build_compiled(const struct seccomp_plan *plan, struct sock_fprog *ret);

int seccomp_build(const struct seccomp_plan *plan, struct sock_fprog *ret)
{
	int r = build_compiled(plan, ret);
	if (r == 0 && (plan->supervise_files || plan->name_opens)) {
		r = plan->supervise_files ? prefix_calls(ret, file_calls, ARRAY_SIZE(file_calls))
					  : prefix_calls(ret, open_calls, ARRAY_SIZE(open_calls));
		if (r < 0)
			seccomp_bpf_free(ret);
	}
	return r;
}

static int build_compiled(const struct seccomp_plan *plan, struct sock_fprog *ret)
{
	size_t n_table;
	seccomp_table(&n_table);
	if (&seccomp_generated_n_filters && seccomp_generated_n_nrs == n_table) {
		for (size_t i = 0; i < seccomp_generated_n_filters; i++) {
			const struct seccomp_precompiled *f = &seccomp_generated_filters[i];
			if (f->backend != plan->backend || f->net != plan->net || f->weak_landlock != plan->weak_landlock ||
			    f->no_listener != plan->no_listener)
				continue;
			ret->len = (unsigned short)f->len;
			ret->filter = xmalloc(f->len * sizeof(struct sock_filter));
			memcpy(ret->filter, f->insns, f->len * sizeof(struct sock_filter));
			seccomp_patch_ids(ret, plan->uid, plan->gid);
			return 0;
		}
	}
	if (!seccomp_compile)
		return -ENOSYS;
	int r = seccomp_compile(plan, ret);
	if (r == 0)
		seccomp_patch_ids(ret, plan->uid, plan->gid);
	return r;
}

void seccomp_patch_ids(struct sock_fprog *prog, uid_t uid, gid_t gid)
{
	for (unsigned i = 0; i < prog->len; i++) {
		struct sock_filter *in = &prog->filter[i];
		if (BPF_CLASS(in->code) != BPF_JMP || BPF_OP(in->code) != BPF_JEQ || BPF_SRC(in->code) != BPF_K)
			continue;
		if (in->k == SC_OWN_UID)
			in->k = (uint32_t)uid;
		else if (in->k == SC_OWN_GID)
			in->k = (uint32_t)gid;
	}
}

void seccomp_plan_without_listener(struct seccomp_plan *plan)
{
	plan->no_listener = true;
}

enum sc_action seccomp_row_action(const struct seccomp_plan *plan, const struct sc_rule *r)
{
	if (!plan->no_listener || r->action != SC_SUPERVISE)
		return (enum sc_action)r->action;
	switch (r->why) {
	case WHY_WATCHED_RENAME:	/* the read-only binds refuse it */
	case WHY_WATCHED_CONNECT:	/* the mounts decide */
	case WHY_WATCHED_SHM:		/* Landlock refuses it */
	case WHY_SUPERVISED_CONNECT:	/* the parent's layer decides */
	case WHY_SUPERVISED_BIND:
	case WHY_SUPERVISED_LISTEN:
	case WHY_PTY_PEER:		/* Landlock refuses the slave's open */
	case WHY_SUPERVISED_ATTRS:	/* the parent's layer decides */
	case WHY_SETGID_BIT:
	case WHY_SUPERVISED_WATCH:
	case WHY_FLAGS_TYPE:
		return SC_ALLOW;
	default:			/* another process: nobody can vet it */
		return SC_REFUSE;
	}
}

int seccomp_row_errno(const struct seccomp_plan *plan, size_t i)
{
	const struct sc_rule *r = plan->rules[i];
	if (r->action == SC_ERRNO)
		return r->err;
	/* libseccomp lets a rule without conditions swallow the call's
	 * conditional ones, and has no per-call default: a refusal gets an
	 * errno of its own only as its call's first and only row. */
	if (r->action != SC_REFUSE || r->n_args)
		return ENOSYS;
	for (size_t j = 0; j < i; j++)
		if (plan->nrs[j] == plan->nrs[i])
			return ENOSYS;
	return r->err;
}

void seccomp_plan_free(struct seccomp_plan *plan)
{
	free(plan->rules);
	free(plan->nrs);
	*plan = (struct seccomp_plan){ 0 };
}

const char *seccomp_syscall_name(int nr)
{
	static char buf[32];
	size_t n_table;
	const struct sc_rule *table = seccomp_table(&n_table);
	for (size_t i = 0; i < n_table; i++)
		if (table[i].nr == nr)
			return table[i].name;
	if (&seccomp_generated_n_names && nr >= 0 && (size_t)nr < seccomp_generated_n_names &&
	    seccomp_generated_name_at[nr])
		return seccomp_generated_name_text + seccomp_generated_name_at[nr];
	char num[21];
	stpcpy(stpcpy(buf, "syscall "), nr < 0 ? "?" : fmt_u64(num, (uint64_t)nr));
	return buf;
}

/* The terminal requests by name: the refused ones for the report, the
 * listed ones for explain. */
static const struct {
	uint32_t nr;
	const char *name;
} ioctl_names[] = {
	{ 0x5401, "TCGETS" }, { 0x5402, "TCSETS" }, { 0x5403, "TCSETSW" }, { 0x5404, "TCSETSF" },
	{ 0x5405, "TCGETA" }, { 0x5406, "TCSETA" }, { 0x5407, "TCSETAW" }, { 0x5408, "TCSETAF" },
	{ 0x5409, "TCSBRK" }, { 0x540A, "TCXONC" }, { 0x540B, "TCFLSH" }, { 0x540C, "TIOCEXCL" },
	{ 0x540D, "TIOCNXCL" }, { 0x540E, "TIOCSCTTY" }, { 0x540F, "TIOCGPGRP" }, { 0x5410, "TIOCSPGRP" },
	{ 0x5411, "TIOCOUTQ" }, { 0x5412, "TIOCSTI" }, { 0x5413, "TIOCGWINSZ" }, { 0x5414, "TIOCSWINSZ" },
	{ 0x5418, "TIOCMSET" }, { 0x541B, "FIONREAD" }, { 0x541C, "TIOCLINUX" }, { 0x541D, "TIOCCONS" },
	{ 0x541E, "TIOCGSERIAL" }, { 0x541F, "TIOCSSERIAL" }, { 0x5420, "TIOCPKT" }, { 0x5421, "FIONBIO" },
	{ 0x5422, "TIOCNOTTY" }, { 0x5423, "TIOCSETD" }, { 0x5424, "TIOCGETD" }, { 0x5425, "TCSBRKP" },
	{ 0x5427, "TIOCSBRK" }, { 0x5428, "TIOCCBRK" }, { 0x5429, "TIOCGSID" }, { 0x802C542A, "TCGETS2" },
	{ 0x402C542B, "TCSETS2" }, { 0x402C542C, "TCSETSW2" }, { 0x402C542D, "TCSETSF2" },
	{ 0x80045430, "TIOCGPTN" }, { 0x40045431, "TIOCSPTLCK" }, { 0x80045432, "TIOCGDEV" },
	{ 0x40045436, "TIOCSIG" }, { 0x5437, "TIOCVHANGUP" }, { 0x80045438, "TIOCGPKT" },
	{ 0x80045439, "TIOCGPTLCK" }, { 0x80045440, "TIOCGEXCL" }, { 0x5441, "TIOCGPTPEER" },
	{ 0x5450, "FIONCLEX" }, { 0x5451, "FIOCLEX" }, { 0x5452, "FIOASYNC" }, { 0x5457, "TIOCSLCKTRMIOS" },
	{ 0x5460, "FIOQSIZE" },
};

static const char *ioctl_known(uint32_t request)
{
	for (size_t i = 0; i < ARRAY_SIZE(ioctl_names); i++)
		if (ioctl_names[i].nr == request)
			return ioctl_names[i].name;
	return NULL;
}

const char *seccomp_ioctl_name(uint32_t request)
{
	static char buf[16];
	const char *name = ioctl_known(request);
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "%#x", request);
	return buf;
}

static void print_args(FILE *f, const struct sc_rule *r)
{
	for (unsigned i = 0; i < r->n_args; i++) {
		const struct sc_arg *a = &r->args[i];
		fprintf(f, "%s(arg%u & %#llx) == %#llx", i ? " && " : " if ", sc_arg_index(a),
			(unsigned long long)sc_arg_mask(a), (unsigned long long)a->value);
	}
}

void seccomp_plan_print(FILE *f, const struct seccomp_plan *plan)
{
	size_t allowed = 0;
	fputs(plan->no_listener ? "seccomp (native architecture only; others killed; no listener: a parent's filter holds "
				  "one; refusals and the default, ENOSYS, answered in the filter)\n"
				: "seccomp (native architecture only; others killed; default: to the listener, ENOSYS)\n",
	      f);
	if (plan->supervise_files)
		fputs("  first: every open, creation, removal and rename to the listener (a directory the command may "
		      "write holds a hidden or read-only entry: the supervisor makes what is new there)\n",
		      f);
	else if (plan->name_opens)
		fputs("  first: every open to the listener (a hidden path the command can reach: an open of one is "
		      "named with its rule, then goes on to the kernel, which refuses it)\n",
		      f);
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct sc_rule *r = plan->rules[i];
		enum sc_action act = seccomp_row_action(plan, r);
		if (act == SC_ALLOW && r->n_args == 0) {
			allowed++;
			continue;
		}
		fprintf(f, "  %-16s %s", r->name,
			act == SC_ALLOW ? "allow" : act == SC_ERRNO ? "errno" :
			act == SC_SUPERVISE ? "supervise" : "refuse");
		if (act != SC_ALLOW && act != SC_SUPERVISE)
			fprintf(f, " %s", strerrorname_np(plan->no_listener ? seccomp_row_errno(plan, i) : r->err));
		print_args(f, r);
		/* A listed terminal request, by name. */
		bool listed = r->action == SC_ALLOW && streq(r->name, "ioctl") && r->n_args == 1 &&
			      r->args[0].mask == 0xffffffffU;
		const char *req = listed ? ioctl_known(r->args[0].value) : NULL;
		if (req)
			fprintf(f, "  %s", req);
		if (r->why && r->action == SC_SUPERVISE && act != SC_SUPERVISE)
			fprintf(f, "  (with a listener: %s; without, %s)", seccomp_why(r),
				act == SC_ALLOW ? "left to the layers outside" : "refused");
		else if (r->why)
			fprintf(f, "  (%s)", seccomp_why(r));
		fputc('\n', f);
	}
	fprintf(f, "  allowed without condition: %zu calls:", allowed);
	size_t col = 80;
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct sc_rule *r = plan->rules[i];
		if (seccomp_row_action(plan, r) != SC_ALLOW || r->n_args)
			continue;
		if (col + strlen(r->name) > 76) {
			fputs("\n   ", f);
			col = 3;
		}
		fprintf(f, " %s", r->name);
		col += strlen(r->name) + 1;
	}
	fputc('\n', f);
}

static bool args_match(const struct sc_rule *r, const uint64_t args[6])
{
	for (unsigned i = 0; i < r->n_args; i++)
		if ((args[sc_arg_index(&r->args[i])] & sc_arg_mask(&r->args[i])) != r->args[i].value)
			return false;
	return true;
}

int seccomp_answer(const struct seccomp_plan *plan, int nr, const uint64_t args[6],
		   const struct sc_rule **ret_rule)
{
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct sc_rule *r = plan->rules[i];
		/* A row with no number on this architecture matches nothing:
		 * a call numbered -1 is the kernel's ENOSYS, not umount's. */
		if (r->action == SC_ALLOW || r->action == SC_SUPERVISE || plan->nrs[i] < 0 || plan->nrs[i] != nr ||
		    !args_match(r, args))
			continue;
		if (ret_rule)
			*ret_rule = r;
		return r->err;
	}
	if (ret_rule)
		*ret_rule = NULL;
	return ENOSYS;
}

void seccomp_bpf_free(struct sock_fprog *prog)
{
	free(prog->filter);
	*prog = (struct sock_fprog){ 0 };
}

