/* The notification service: the one place a run's listener is read and
 * answered. Each notification goes to the first family that takes it,
 * of those keyed for its call (a table by call number, each entry
 * filled the first time its call comes);
 * the family says what to answer (an errno, or go on to the kernel), or
 * that it answered itself (a call carried out, a descriptor handed over)
 * or holds the call while a connect is in progress. The supervisor's
 * families are here; a run adds its own (what it watches, and the
 * filter's table last). And the notification as the supervisor holds
 * it: checked still waiting, its caller's descriptors taken through the
 * caller's pidfd (kept for its next call). */
#include "supervise/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "lib/util.h"

/* ---- the service ---- */

void notif_answer(int listener, uint64_t id, int err)
{
	struct seccomp_notif_resp r = { .id = id, .error = err ? -err : 0 };
	/* ENOENT: the caller is gone (killed while it waited). */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

void notif_continue(int listener, uint64_t id)
{
	struct seccomp_notif_resp r = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

void notif_service_init(struct notif_service *s, int listener)
{
	*s = (struct notif_service){ .listener = listener };
}

void notif_service_add(struct notif_service *s, const char *name, notif_calls_fn calls, notif_take_fn take,
		       void *data)
{
	/* A run's families are fixed in number: one more is a bug of ours. */
	if (s->n == ARRAY_SIZE(s->families))
		abort();
	s->families[s->n++] = (struct notif_family){ .name = name, .calls = calls, .take = take, .data = data };
	/* Keyed afresh as calls come. */
	memset(s->by_call, 0, sizeof(s->by_call));
}

/* The families that may take call nr, a bit each. */
static unsigned families_of(struct notif_service *s, int nr)
{
	unsigned all = (1u << s->n) - 1;
	if (nr < 0 || nr >= NOTIF_CALLS)
		return all;
	uint16_t *key = &s->by_call[nr];
	if (!(*key & NOTIF_KEYED)) {
		unsigned m = 0;
		for (size_t i = 0; i < s->n; i++)
			if (!s->families[i].calls || s->families[i].calls(s->families[i].data, nr))
				m |= 1u << i;
		*key = (uint16_t)(m | NOTIF_KEYED);
	}
	return *key & all;
}

static bool calls_openat(void *data, int nr)
{
	return nr == SYS_openat;
}

static enum notif_outcome take_tmp(void *data, const struct seccomp_notif *req, int *ret_err)
{
	return supervisor_makes_in_tmp(data, req) ? NOTIF_DONE : NOTIF_NOT_MINE;
}

static bool calls_pty(void *data, int nr)
{
	return nr == SYS_ioctl || nr == SYS_openat;
}

static enum notif_outcome take_pty(void *data, const struct seccomp_notif *req, int *ret_err)
{
	return supervisor_opens_pty_peer(data, req) || supervisor_reopens_pty(data, req) ? NOTIF_DONE : NOTIF_NOT_MINE;
}

static bool calls_files(void *data, int nr)
{
	return supervise_files_call(nr);
}

static enum notif_outcome take_files(void *data, const struct seccomp_notif *req, int *ret_err)
{
	return supervisor_files(data, req) ? NOTIF_DONE : NOTIF_NOT_MINE;
}

static bool calls_attrs(void *data, int nr)
{
	return supervise_attrs_call(nr);
}

static enum notif_outcome take_attrs(void *data, const struct seccomp_notif *req, int *ret_err)
{
	/* a number past the table's keys comes to every family */
	if (!supervise_attrs_takes(req->data.nr, req->data.args)) {
		/* A request of the flag setters' types that sets nothing
		 * (FS_IOC_GETFLAGS): the kernel's, as made; nothing of the
		 * caller's is read to decide it. */
		if (req->data.nr == SYS_ioctl && supervise_flags_type((uint32_t)req->data.args[1])) {
			sv_continue(data, req->id);
			return NOTIF_DONE;
		}
		return NOTIF_NOT_MINE;
	}
	supervisor_attrs(data, req);
	return NOTIF_DONE;
}

static bool calls_net(void *data, int nr)
{
	return supervisor_handles(data, nr);
}

static enum notif_outcome take_net(void *data, const struct seccomp_notif *req, int *ret_err)
{
	struct supervisor *sv = data;
	if (!supervisor_handles(sv, req->data.nr))
		return NOTIF_NOT_MINE;
	supervisor_handle(sv, req);
	return NOTIF_DONE;
}

void notif_service_add_supervisor(struct notif_service *s, struct supervisor *sv, bool files)
{
	notif_service_add(s, "tmp", calls_openat, take_tmp, sv);
	notif_service_add(s, "pty", calls_pty, take_pty, sv);
	if (files)
		notif_service_add(s, "files", calls_files, take_files, sv);
	notif_service_add(s, "attrs", calls_attrs, take_attrs, sv);
	notif_service_add(s, "net", calls_net, take_net, sv);
}

enum notif_outcome notif_dispatch(struct notif_service *s, const struct seccomp_notif *req, int *ret_err,
				  const char **ret_family)
{
	unsigned mine = families_of(s, req->data.nr);
	*ret_err = 0;
	*ret_family = NULL;
	for (size_t i = 0; i < s->n; i++) {
		if (!(mine & (1u << i)))
			continue;
		enum notif_outcome o = s->families[i].take(s->families[i].data, req, ret_err);
		if (o != NOTIF_NOT_MINE) {
			*ret_family = s->families[i].name;
			return o;
		}
	}
	/* No family took it: a call nothing here knows. */
	*ret_err = ENOSYS;
	return NOTIF_ANSWER;
}

int notif_serve(struct notif_service *s)
{
	struct seccomp_notif req;
	memset(&req, 0, sizeof(req));
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		/* ENOENT: the caller was killed while waiting. */
		return errno == ENOENT || errno == EINTR ? 0 : -errno;
	int err;
	const char *family;
	switch (notif_dispatch(s, &req, &err, &family)) {
	case NOTIF_NOT_MINE:
	case NOTIF_DONE:
		break;
	case NOTIF_ANSWER:
		notif_answer(s->listener, req.id, err);
		break;
	case NOTIF_CONTINUE:
		notif_continue(s->listener, req.id);
		break;
	}
	return 0;
}

/* ---- the supervisor's answers ---- */

void sv_respond(struct supervisor *sv, uint64_t id, int err)
{
	/* A sendmmsg that sent some messages before this refusal returns
	 * their count, as the kernel's does (__sys_sendmmsg): the errno is
	 * the answer only when the first message fails. Every refusal's
	 * report is made as usual; only its answer changes. */
	if (err && sv->mmsg_sent > 0 && id == sv->mmsg_id)
		sv_respond_value(sv, id, sv->mmsg_sent);
	else
		notif_answer(sv->listener, id, err);
}

/* A call that goes on to the kernel as made, with the registers it was
 * made with (nothing of it is read again from the command's memory):
 * what the kernel and Landlock decide. */
void sv_continue(struct supervisor *sv, uint64_t id)
{
	notif_continue(sv->listener, id);
}

/* A call carried out, answered with what it returned (a send's count). */
void sv_respond_value(struct supervisor *sv, uint64_t id, int64_t val)
{
	struct seccomp_notif_resp r = { .id = id, .error = 0, .val = val };
	(void)ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

bool notif_id_valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool sv_id_valid(const struct supervisor *sv, uint64_t id)
{
	return notif_id_valid(sv->listener, id);
}

/* ---- the caller ---- */

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* The thread group of a thread, from /proc/TID/status; 0 when it cannot
 * be read (the thread is gone). */
static pid_t tgid_of(pid_t tid)
{
	char path[64], num[21], line[256];
	stpcpy(stpcpy(stpcpy(path, "/proc/"), fmt_u64(num, (uint64_t)tid)), "/status");
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	pid_t tgid = 0;
	while (f && !tgid && fgets(line, sizeof(line), f))
		if (strncmp(line, "Tgid:", 5) == 0)
			tgid = (pid_t)strtol(line + 5, NULL, 10);
	return tgid;
}

/* A new pidfd for the caller of a notification, which names a thread:
 * any thread of the run may bind or connect, not only a process's main
 * one (tornado's resolver threads, a Java server). A thread's own pidfd
 * where the kernel has PIDFD_THREAD (6.9); before that, the pidfd of its
 * thread group, found through /proc. */
static int open_pidfd(pid_t tid)
{
	/* A process's main thread, the usual caller: its group's pidfd. */
	int fd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0 || errno == ESRCH)
		return fd;
	/* Another thread: its own pidfd (6.9), or its group's. */
	fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd >= 0 || errno == ESRCH)
		return fd;
	pid_t tgid = tgid_of(tid);
	return tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
}

int notif_caller_fd(int listener, const struct seccomp_notif *req, int n)
{
	_cleanup_close_ int pidfd = open_pidfd((pid_t)req->pid);
	if (pidfd < 0)
		return -ESRCH;
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -EBADF;
	if (!notif_id_valid(listener, req->id)) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

/* The caller's pidfd, kept for its next call (a server connects and binds
 * again and again): stockade's, not to be closed; -1. *ret_kept says it
 * was kept from before. A kept pidfd names the process it was opened
 * for, never another that got its id later: once that one has been
 * reaped, the pidfd reaches nothing (ESRCH), and the caller's id is only
 * its own while it waits. */
int sv_caller_pidfd(struct supervisor *sv, pid_t tid, bool *ret_kept)
{
	struct sv_pidfd *slot = &sv->pidfds[(unsigned)tid % ARRAY_SIZE(sv->pidfds)];
	*ret_kept = slot->tid == tid;
	if (*ret_kept)
		return slot->fd;
	int fd = open_pidfd(tid);
	if (fd < 0)
		return -1;
	if (slot->tid)
		close(slot->fd);
	*slot = (struct sv_pidfd){ .tid = tid, .fd = fd };
	return fd;
}

void sv_pidfds_free(struct supervisor *sv)
{
	for (size_t i = 0; i < ARRAY_SIZE(sv->pidfds); i++)
		if (sv->pidfds[i].tid)
			close(sv->pidfds[i].fd);
}

static void forget_pidfd(struct supervisor *sv, pid_t tid)
{
	struct sv_pidfd *slot = &sv->pidfds[(unsigned)tid % ARRAY_SIZE(sv->pidfds)];
	if (slot->tid != tid)
		return;
	close(slot->fd);
	slot->tid = 0;
}

/* The caller's descriptor n, as stockade's own, through its pidfd (from
 * sv_caller_pidfd, before the notification was last checked valid). When a
 * kept pidfd's process is gone (ESRCH), the caller is another process
 * that has its id now: its new pidfd is checked to be the caller's (the
 * notification still valid once it is open). */
int sv_take_fd(struct supervisor *sv, uint64_t id, pid_t tid, bool kept, int n, int *pidfd)
{
	int fd = (int)syscall(SYS_pidfd_getfd, *pidfd, n, 0);
	if (fd >= 0 || !kept || errno != ESRCH)
		return fd;
	forget_pidfd(sv, tid);
	*pidfd = sv_caller_pidfd(sv, tid, &kept);
	if (*pidfd < 0 || !sv_id_valid(sv, id)) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_getfd, *pidfd, n, 0);
}

bool sv_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return true;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return true;
	if (n >= 0)
		errno = EFAULT;
	return false;
}

int sv_caller_fd(struct supervisor *sv, const struct seccomp_notif *req, int n)
{
	bool kept;
	int pidfd = sv_caller_pidfd(sv, (pid_t)req->pid, &kept);
	if (pidfd < 0)
		return -1;
	int fd = sv_take_fd(sv, req->id, (pid_t)req->pid, kept, n, &pidfd);
	/* Still waiting: the pidfd, opened since the notification came,
	 * names the caller and no process that took its id after it. */
	if (fd >= 0 && !sv_id_valid(sv, req->id)) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}
