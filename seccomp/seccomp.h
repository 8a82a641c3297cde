/* The seccomp filter: a data table of (system call, argument test, action)
 * that unit tests read, a plan selecting the rows for one run, a build
 * step through libseccomp, and the raw load that hands back the listener.
 *
 * The filter is an allowlist. Everything it does not allow goes to the
 * listener outside the jail (SECCOMP_RET_USER_NOTIF), which records it for
 * the report and answers with the errno the table gives, or ENOSYS for a
 * call the table does not know (Docker's default profile answers
 * unknown calls the same way). */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

struct seccomp_notif;

enum sc_action {
	SC_ALLOW,
	SC_REFUSE,		/* to the listener: recorded, answered with err */
	SC_ERRNO,		/* answered in the filter: expected and not worth a record */
	SC_SUPERVISE,		/* to the listener, where the connect supervisor decides */
};

/* (args[arg] & mask) == value. Every argument the table tests is an int
 * or a set of flags below bit 32: the kernel ignores the upper half, so
 * the filter must too (TIOCSTI with high bits set, CVE-2019-10063), and
 * a mask of 32 bits says so. 9 bytes, not 24: the table is read at every
 * start. */
struct sc_arg {
	unsigned char arg;	/* the argument's index, | SC_ARG_WHOLE */
	uint32_t mask;
	uint32_t value;
} __attribute__((packed));

/* A pointer is tested over all 64 bits (sendto's address: NULL or not;
 * 0x100000000 is not NULL): the mask covers both halves. */
#define SC_ARG_WHOLE 0x80
static inline unsigned sc_arg_index(const struct sc_arg *a)
{
	return a->arg & ~SC_ARG_WHOLE;
}
static inline uint64_t sc_arg_mask(const struct sc_arg *a)
{
	return (a->arg & SC_ARG_WHOLE) ? (uint64_t)a->mask << 32 | a->mask : a->mask;
}

/* Which runs a row belongs to; 0 means every run. */
#define SC_LANDLOCK (1u << 0)	/* the landlock backend only */
#define SC_NAMESPACES (1u << 1)	/* the namespaces backend only */
#define SC_NET_OFF (1u << 2)
#define SC_NET_LOOPBACK (1u << 3)
#define SC_NET_ON (1u << 4)
#define SC_ABI_LT3 (1u << 5)	/* Landlock cannot govern truncation */
#define SC_ABI_GE3 (1u << 6)
#define SC_NET_ANY (SC_NET_OFF | SC_NET_LOOPBACK | SC_NET_ON)
/* Network allow is loopback (its rows are SC_NET_LOOPBACK's) and these
 * rows besides, which only it has. */
#define SC_NET_ALLOW (1u << 7)

/* Why a row refuses, supervises or answers in the filter; the words are
 * seccomp_why()'s. */
enum sc_why {
	WHY_NONE,
	WHY_TRUNCATE_READ_ONLY,
	WHY_OPENAT2_FLAGS,
	WHY_TRUNCATE_PATH,
	WHY_TIOCSTI,
	WHY_TIOCLINUX,
	WHY_TIOCSETD,
	WHY_TIOCCONS,
	WHY_TTY_SERIAL,
	WHY_TTY_IOCTL,
	WHY_NEW_NAMESPACE,
	WHY_CLONE3,
	WHY_SETNS,
	WHY_UNIX_DATAGRAM,
	WHY_LOOPBACK_TCP_ONLY,
	WHY_SOCKET_FAMILY,
	WHY_SUPERVISED_CONNECT,
	WHY_SUPERVISED_BIND,
	WHY_SUPERVISED_LISTEN,
	WHY_WATCHED_RENAME,
	WHY_WATCHED_CONNECT,
	WHY_WATCHED_SHM,
	WHY_SUPERVISED_TMP,
	WHY_FASTOPEN,
	WHY_SYSV_IPC,
	WHY_MQUEUE,
	WHY_UNMAPPED_OWNER,
	WHY_UNMAPPED_ID,
	WHY_IO_URING,
	WHY_KEYRING,
	WHY_ATTACK_SURFACE,
	WHY_MOUNT_TABLE,
	WHY_OTHER_PROCESS,
	WHY_SUPERVISED_SEND,
	WHY_SOURCE_ROUTE,
	WHY_PTY_PEER,
	WHY_HELD_DATAGRAM,
	WHY_DNS_REPLY,
	WHY_SUPERVISED_ATTRS,
	WHY_SETUID_BIT,
	WHY_SETGID_BIT,
	WHY_SUPERVISED_WATCH,
	WHY_FLAGS_TYPE,
};

struct sc_rule {
	char name[24];		/* inline: the table holds no pointer */
	short nr;		/* the number, for calls libseccomp 2.5 does not name; else -1 */
	unsigned char action;	/* enum sc_action */
	unsigned char n_args;
	unsigned char err;
	unsigned char when;
	unsigned char why;	/* enum sc_why */
	struct sc_arg args[3];
};

const char *seccomp_why(const struct sc_rule *r);
/* The option that would allow what a row refuses of the call nr with
 * args, in a run of network mode net, or NULL: nothing does (stockade.1,
 * BACKENDS, seccomp). */
const char *seccomp_fix(const struct sc_rule *r, enum net_mode net, int nr, const uint64_t args[6]);

struct seccomp_plan {
	const struct sc_rule **rules;
	int *nrs;		/* each row's number on this architecture, or -1 */
	size_t n_rules;
	enum backend backend;
	enum net_mode net;
	bool weak_landlock;	/* Landlock below ABI 3 on the landlock backend */
	/* A filter of a parent holds a listener already (another jail, a
	 * sandbox of WSL2's): the kernel gives no second one (EBUSY), and
	 * nothing outside answers. What would go to the listener is decided
	 * in the filter then (seccomp_row_action). */
	bool no_listener;
	/* The landlock backend, where a directory the command may write is
	 * carved (a hidden or read-only entry in it): every open, creation,
	 * removal and rename goes to the listener first, for the supervisor
	 * to make what is new there (supervise/files.c); a few instructions
	 * put before the filter compiled for the variant
	 * (seccomp_supervise_files). */
	bool supervise_files;
	/* A run with a hidden path the command can reach (policy_hides_in_
	 * reach): every open goes to the listener first, to be named when
	 * it is of a hidden path, then on to the kernel, which refuses it
	 * (the same instructions, for the opens alone). Landlock ABI 3 or
	 * later, where the compiled filter lets every open go on or sends
	 * it to the listener itself. */
	bool name_opens;
	uid_t uid;		/* the caller's own ids, patched in for SC_OWN_* */
	gid_t gid;
};

/* Stand-ins for the caller's ids in the table, replaced in the compiled
 * filter: values no system call argument the table tests would take. */
#define SC_OWN_UID 0x5a0de001U
#define SC_OWN_GID 0x5a0de002U

/* A filter compiled at build time for one variant of the plan. */
struct seccomp_precompiled {
	enum backend backend;
	enum net_mode net;
	bool weak_landlock;
	bool no_listener;
	const struct sock_filter *insns;
	size_t len;
};

/* The whole table, for unit tests. */
const struct sc_rule *seccomp_table(size_t *ret_n);

int seccomp_plan(enum backend backend, enum net_mode net, int landlock_abi,
		 struct seccomp_plan *ret);
/* The same plan for a filter loaded without a listener. */
void seccomp_plan_without_listener(struct seccomp_plan *plan);
void seccomp_plan_free(struct seccomp_plan *plan);
/* What a row does in this plan's filter. With a listener, its own
 * action. Without one: a watch (a rename over a hand-off, an shm open)
 * and the network calls the supervisor would vet are allowed (a parent's
 * layer still applies: filters stack, and the parent's supervisor still
 * sees them); a call on another process is refused; a refusal is
 * answered in the filter (its own errno where the row is the call's
 * only one, else ENOSYS, the filter's default). */
enum sc_action seccomp_row_action(const struct seccomp_plan *plan, const struct sc_rule *r);
/* Without a listener: the errno the filter itself answers for the plan's
 * row i, which seccomp_row_action refuses. */
int seccomp_row_errno(const struct seccomp_plan *plan, size_t i);
void seccomp_plan_print(FILE *f, const struct seccomp_plan *plan);

/* The system call number of a row on this architecture, or -1. */
int seccomp_rule_nr(const struct sc_rule *r);

/* The BPF program for the plan: the one compiled at build time for its
 * variant, or compiled now. */
int seccomp_build(const struct seccomp_plan *plan, struct sock_fprog *ret);
/* Writes the caller's ids over SC_OWN_UID and SC_OWN_GID in a compiled
 * program's comparisons. */
void seccomp_patch_ids(struct sock_fprog *prog, uid_t uid, gid_t gid);
/* The calls that plan->supervise_files sends to the listener, and
 * whether this architecture has them (false: the run cannot have it). */
bool seccomp_files_call(int nr);
/* The calls plan->name_opens sends to the listener: the opens. */
bool seccomp_open_call(int nr);
bool seccomp_can_supervise_files(void);
/* Compiles the plan with libseccomp into a BPF program (native
 * architecture only; any other is killed). */
int seccomp_compile(const struct seccomp_plan *plan, struct sock_fprog *ret);
void seccomp_bpf_free(struct sock_fprog *prog);

/* Loads a built program into the calling thread, with a listener waited
 * on killably where the kernel has it; returns the listener (NULL: a
 * program built without one, loaded alone). Needs no_new_privs. */
int seccomp_load_filter(const struct sock_fprog *prog, int *ret_listener);

/* One more filter on the calling thread, loaded alone: no socket of
 * AF_INET or AF_INET6 (EACCES), so no network at all; what the filters
 * below it allow otherwise stands (a session's command's --net off). */
int seccomp_load_no_inet(void);

/* Tries, in a process that may be changed for good, whether a listener can
 * be had, and whether its wait is killable. */
int seccomp_probe_listener(bool *ret_killable);

/* The listener: synchronous wake-ups where the kernel has them. It is
 * read and answered by supervise/'s notification service alone. */
void seccomp_listener_sync(int listener);

/* What the filter enforces, into the report. */
void seccomp_describe(const struct seccomp_plan *plan, struct report *rep);

/* What the listener answers to a call the filter handed it: the errno of
 * the first refusing row that matches, or ENOSYS. */
int seccomp_answer(const struct seccomp_plan *plan, int nr, const uint64_t args[6],
		   const struct sc_rule **ret_rule);

/* A terminal request's name for the report ("TIOCSETD"), or its number in
 * hex (static buffer). */
const char *seccomp_ioctl_name(uint32_t request);

/* The name of a system call number on this architecture (static buffer
 * for unknown ones). */
const char *seccomp_syscall_name(int nr);
