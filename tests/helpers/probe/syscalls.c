/* probe: raw system calls: namespaces, mounts, io_uring, keyrings, IPC, other architectures. */
#include "tests/helpers/probe/probe.h"

/* --------------------------------------------------------- raw syscalls */


static const struct flag_name clone_flag_names[] = {
	{ "user", CLONE_NEWUSER }, { "mount", CLONE_NEWNS },	 { "net", CLONE_NEWNET },
	{ "pid", CLONE_NEWPID },   { "ipc", CLONE_NEWIPC },	 { "uts", CLONE_NEWUTS },
	{ "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME }, { "files", CLONE_FILES },
	{ "fs", CLONE_FS },	   { "sysvsem", CLONE_SYSVSEM }, { "none", 0 },
};

/* "user", "user,mount", "0x10000000": names or numbers, joined by , or |. */
static unsigned long parse_clone_flags(const char *s)
{
	char *copy = strdup(s), *save = NULL;
	unsigned long flags = 0;

	if (!copy)
		abort();

	for (char *tok = strtok_r(copy, ",|", &save); tok; tok = strtok_r(NULL, ",|", &save)) {
		size_t i;
		for (i = 0; i < sizeof(clone_flag_names) / sizeof(clone_flag_names[0]); i++)
			if (strcmp(tok, clone_flag_names[i].name) == 0)
				break;
		if (i < sizeof(clone_flag_names) / sizeof(clone_flag_names[0]))
			flags |= clone_flag_names[i].flag;
		else if (tok[0] >= '0' && tok[0] <= '9')
			flags |= (unsigned long)parse_long(tok, "clone flag");
		else
			usage_error("unknown namespace or clone flag '%s'", tok);
	}
	free(copy);
	return flags;
}

int op_unshare(char **a)
{
	return raw_result(unshare((int)parse_clone_flags(a[0])));
}

/* Wait for a child made by a raw clone; report how it ended if not cleanly. */
static int reap_clone_child(pid_t child)
{
	int status;

	while (waitpid(child, &status, __WALL) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_wait_status("child", status);
	return 0;
}

int op_clone(char **a)
{
	unsigned long flags = parse_clone_flags(a[0]);
	long child;

	fflush(stdout);
	/* x86_64 order: flags, stack (0 = share the parent's, copied as with
	 * fork), parent_tid, child_tid, tls. */
	child = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (child < 0)
		return errno;
	if (child == 0)
		_exit(0);
	return reap_clone_child((pid_t)child);
}

int op_clone3(char **a)
{
	/* struct clone_args as 11 u64s: flags, pidfd, child_tid, parent_tid,
	 * exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup. */
	uint64_t args[PROBE_CLONE_ARGS_SIZE / 8];
	long child;

	memset(args, 0, sizeof(args));
	args[0] = a[0] ? parse_clone_flags(a[0]) : 0;
	args[4] = SIGCHLD;
	fflush(stdout);
	child = syscall(SYS_clone3, args, sizeof(args));
	if (child < 0)
		return errno;
	if (child == 0)
		_exit(0);
	return reap_clone_child((pid_t)child);
}

int op_setns(char **a) { return raw_result(setns(-1, 0)); }

int op_mount(char **a)
{
	return raw_result(mount("none", a[0] ? a[0] : PROBE_NO_SUCH_PATH, "tmpfs", 0, NULL));
}

int op_umount2(char **a) { return raw_result(umount2(a[0], 0)); }

int op_pivot_root(char **a)
{
	return raw_result(syscall(SYS_pivot_root, PROBE_NO_SUCH_PATH, PROBE_NO_SUCH_PATH));
}

int op_chroot(char **a) { return raw_result(chroot(a[0])); }

int close_if_fd(long fd)
{
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

int op_fsopen(char **a)
{
	/* A filesystem context that is never mounted: harmless even for root. */
	return close_if_fd(syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
}

int op_fspick(char **a)
{
	return close_if_fd(syscall(SYS_fspick, PROBE_BAD_FD, "", FSPICK_CLOEXEC | FSPICK_EMPTY_PATH));
}

int op_fsconfig(char **a)
{
	return raw_result(syscall(SYS_fsconfig, PROBE_BAD_FD, PROBE_FSCONFIG_SET_FLAG, "ro", NULL, 0));
}

int op_fsmount(char **a)
{
	return close_if_fd(syscall(SYS_fsmount, PROBE_BAD_FD, FSMOUNT_CLOEXEC, 0));
}

int op_open_tree(char **a)
{
	/* A detached copy of the tree: gone when the descriptor closes. */
	return close_if_fd(syscall(SYS_open_tree, AT_FDCWD, a[0], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
}

int op_move_mount(char **a)
{
	return raw_result(syscall(SYS_move_mount, PROBE_BAD_FD, "", PROBE_BAD_FD, "",
				  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

int op_mount_setattr(char **a)
{
	/* A bad attr pointer of the first struct size (32). */
	return raw_result(syscall(SYS_mount_setattr, PROBE_BAD_FD, "", AT_EMPTY_PATH, (void *)1, 32));
}

int op_io_uring_setup(char **a)
{
	/* A real one-entry ring, closed at once: this is the positive control
	 * that io_uring works here at all (io_uring_disabled=0). */
	char params[120]; /* struct io_uring_params */

	memset(params, 0, sizeof(params));
	return close_if_fd(syscall(SYS_io_uring_setup, 1, params));
}

int op_io_uring_enter(char **a)
{
	return raw_result(syscall(SYS_io_uring_enter, PROBE_BAD_FD, 0, 0, 0, NULL, 0));
}

int op_io_uring_register(char **a)
{
	return raw_result(syscall(SYS_io_uring_register, PROBE_BAD_FD, 0, NULL, 0));
}

int op_keyctl(char **a)
{
	long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);

	if (id < 0)
		return errno;
	printf("keyring %ld\n", id);
	return 0;
}

int op_add_key(char **a)
{
	/* A bad type pointer: EFAULT from the kernel, no key made. */
	return raw_result(syscall(SYS_add_key, (char *)1, "probe", NULL, 0, KEY_SPEC_SESSION_KEYRING));
}

int op_request_key(char **a)
{
	return raw_result(syscall(SYS_request_key, (char *)1, "probe", NULL, 0));
}

int op_keyring_read(char **a)
{
	long ring = KEY_SPEC_SESSION_KEYRING;
	char desc[512];
	int32_t ids[256];
	long n;

	if (a[0] && strcmp(a[0], "user") == 0)
		ring = KEY_SPEC_USER_KEYRING;
	else if (a[0] && strcmp(a[0], "session") != 0)
		usage_error("keyring is 'session' or 'user', not '%s'", a[0]);
	n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, ring, desc, sizeof(desc));
	if (n < 0)
		return errno;
	desc[sizeof(desc) - 1] = '\0';
	printf("keyring %s\n", desc);

	/* Then every key in it, with its payload: a canary planted in a key
	 * outside the jail must never show up here. */
	n = syscall(SYS_keyctl, KEYCTL_READ, ring, ids, sizeof(ids));
	if (n < 0)
		return errno;
	for (long i = 0; i < n / (long)sizeof(ids[0]) && i < 256; i++) {
		char payload[1024];
		long len;

		if (syscall(SYS_keyctl, KEYCTL_DESCRIBE, (long)ids[i], desc, sizeof(desc)) < 0)
			snprintf(desc, sizeof(desc), "? (%s)", errno_name(errno));
		desc[sizeof(desc) - 1] = '\0';
		printf("key %d %s: ", (int)ids[i], desc);
		mid_line = true;
		if (strncmp(desc, "keyring;", 8) == 0) {
			/* a nested keyring's payload is binary key ids */
			printf("(keyring)\n");
			mid_line = false;
			continue;
		}
		len = syscall(SYS_keyctl, KEYCTL_READ, (long)ids[i], payload, sizeof(payload));
		if (len < 0)
			printf("(%s)", errno_name(errno));
		else
			emit_bytes(payload, (size_t)(len < (long)sizeof(payload) ? len : (long)sizeof(payload)));
		end_partial_line();
	}
	return 0;
}

int op_bpf(char **a)
{
	/* NULL attr with a nonzero size: the kernel's copy fails, EFAULT. */
	return raw_result(syscall(SYS_bpf, PROBE_BPF_PROG_LOAD, NULL, 64));
}

int op_perf_event_open(char **a)
{
	return raw_result(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}

int op_userfaultfd(char **a)
{
	/* User-mode-only faults are allowed to everyone (even with
	 * vm.unprivileged_userfaultfd=0), so this succeeds where it reaches
	 * the kernel. */
	return close_if_fd(syscall(SYS_userfaultfd, O_CLOEXEC | PROBE_UFFD_USER_MODE_ONLY));
}

int op_shmget(char **a)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

	if (id < 0)
		return errno;
	printf("shmid %d\n", id);
	shmctl(id, IPC_RMID, NULL);
	return 0;
}

int op_semget(char **a)
{
	int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);

	if (id < 0)
		return errno;
	printf("semid %d\n", id);
	semctl(id, 0, IPC_RMID);
	return 0;
}

int op_msgget(char **a)
{
	int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (id < 0)
		return errno;
	printf("msqid %d\n", id);
	msgctl(id, IPC_RMID, NULL);
	return 0;
}

int op_shmat(char **a)
{
	int id = (int)parse_long(a[0], "shm id");
	struct shmid_ds ds;
	size_t size = 4096;
	char *p;

	p = shmat(id, NULL, SHM_RDONLY);
	if (p == (void *)-1)
		return errno;
	if (shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_segsz < size)
		size = ds.shm_segsz;
	/* The segment's text up to its first NUL: where a canary would be. */
	emit_bytes(p, strnlen(p, size));
	end_partial_line();
	shmdt(p);
	return 0;
}

int op_mq_open(char **a)
{
	/* The raw call takes the name without glibc's leading slash. */
	return close_if_fd(syscall(SYS_mq_open, "probe", O_RDONLY, 0, NULL));
}

int op_personality(char **a)
{
	unsigned long persona = a[0] ? (unsigned long)parse_long(a[0], "persona") : 0xffffffffUL;
	long r = syscall(SYS_personality, persona);

	if (r < 0)
		return errno;
	printf("personality 0x%lx\n", (unsigned long)r);
	return 0;
}

int op_x32_getpid(char **a)
{
	long r = syscall(PROBE_X32_SYSCALL_BIT | PROBE_X86_64_GETPID);

	if (r < 0)
		return errno;
	printf("x32-getpid %ld\n", r);
	return 0;
}

int op_int80_getpid(char **a)
{
#if defined(__x86_64__)
	long ret = PROBE_I386_GETPID;

	fflush(stdout);
	/* The 32-bit entry zeroes r8-r15 on the way back; the i386 argument
	 * registers are preserved. A filter that does not check the arch sees
	 * nr 20 and takes it for x86_64's writev. */
	__asm__ volatile("int $0x80"
			 : "+a"(ret)
			 :
			 : "memory", "cc", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
	printf("int80 %ld\n", ret);
	if (ret < 0 && ret > -4096)
		return (int)-ret;
	return 0;
#else
	usage_error("only on x86_64");
#endif
}

int op_syscall(char **a)
{
	long nr = parse_long(a[0], "syscall number");
	long r = syscall(nr, 0, 0, 0, 0, 0, 0);

	if (r < 0)
		return errno;
	printf("ret %ld\n", r);
	return 0;
}
