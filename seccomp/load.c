/* Loading a filter into the calling thread, and its listener. */
#include "seccomp/seccomp.h"

#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "lib/util.h"

/* Newer than the distribution's headers (Linux 6.6). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

int seccomp_probe_listener(bool *ret_killable)
{
	/* A filter of its own, by hand: getppid to the listener. */
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };
	*ret_killable = false;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	*ret_killable = fd >= 0;
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

int seccomp_load_no_inet(void)
{
	/* By hand: socket(AF_INET or AF_INET6, ...) refused with EACCES,
	 * everything else left to the filters below it. */
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };
	return seccomp_load_filter(&prog, NULL);
}

int seccomp_load_filter(const struct sock_fprog *prog, int *ret_listener)
{
	if (!ret_listener)
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0 ? -errno : 0;
	/* WAIT_KILLABLE_RECV (Linux 5.19): once the listener has taken a
	 * call, only a fatal signal interrupts the wait, so a call the
	 * supervisor already carried out is never restarted. */
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
	if (fd < 0 && errno == EINVAL) {
		flags &= ~(unsigned long)SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
	}
	if (fd < 0)
		return -errno;
	*ret_listener = (int)fd;
	return 0;
}


void seccomp_listener_sync(int listener)
{
	/* Synchronous wake-ups (Linux 6.6): the command and stockade hand
	 * the CPU to each other directly, halving a notification's round
	 * trip. An older kernel just does without. */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

void seccomp_describe(const struct seccomp_plan *plan, struct report *rep)
{
	report_enforced(rep, plan->no_listener ? "seccomp: an allowlist, refusals answered in the filter (a parent's "
						 "filter holds the only listener: they are not recorded)"
					       : "seccomp: an allowlist, refusals answered by stockade's listener");
	report_enforced(rep, "terminal ioctls: a list of those programs use; TIOCSTI, TIOCLINUX, TIOCSETD, TIOCCONS and the rest refused");
	if (plan->backend == BACKEND_LANDLOCK)
		report_enforced(rep, "System V IPC and POSIX message queues of the host refused");
	if (plan->net == NET_OFF)
		report_enforced(rep, "network off: seccomp gives no inet socket");
	if (!plan->no_listener && !strv_contains(rep->supervises, "refused system calls"))
		strv_add(&rep->supervises, "refused system calls");
}

