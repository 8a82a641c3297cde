/* probe: the program the integration tests run inside (and outside) the jail.
 *
 *     probe OP [ARG]...
 *
 * It prints "probe: started OP" first, so that a test can tell a refusal
 * from a jail that never ran the command; then it tries exactly one thing
 * and prints exactly one result line:
 *
 *     probe: ok                 success, exit 0 (op output comes before it)
 *     probe: errno NAME         the call failed with errno NAME, exit 1
 *     probe: leaked N           (fds only) N descriptors leaked in, exit 1
 *
 * A usage error goes to stderr with exit status 2.
 *
 * The raw system call ops follow bubblewrap's tests/try-syscall.c: where a
 * real call could have side effects, they pass a bad descriptor or pointer,
 * so a call that reaches the kernel fails harmlessly (EBADF, EFAULT, ENOENT)
 * while a call a seccomp filter refuses returns the filter's errno. Each
 * op's answer outside any jail is its positive control.
 *
 * Deliberately plain: no libseccomp, no sanitizer, and every descriptor it
 * opens is O_CLOEXEC so that whatever it execs sees only what leaked in. */
#include "tests/helpers/probe/probe.h"

/* ------------------------------------------------------------- the table */

struct op {
	const char *name;
	int min_args, max_args; /* max -1: any number */
	int (*run)(char **args);
	const char *usage;
};

/* What the probe was called by, as exec handed it. */
static const char *called_as;

static int op_argv0(char **args)
{
	(void)args;
	printf("probe: argv0 %s\n", called_as);
	return 0;
}

static const struct op ops[] = {
	{ "read", 1, 1, op_read, "PATH" },
	{ "write", 1, 1, op_write, "PATH" },
	{ "append", 1, 1, op_append, "PATH" },
	{ "mkdir", 1, 1, op_mkdir, "PATH" },
	{ "rmdir", 1, 1, op_rmdir, "PATH" },
	{ "unlink", 1, 1, op_unlink, "PATH" },
	{ "rename", 2, 2, op_rename, "OLD NEW" },
	{ "link", 2, 2, op_link, "OLD NEW" },
	{ "symlink", 2, 2, op_symlink, "TARGET LINK" },
	{ "mkfifo", 1, 1, op_mkfifo, "PATH" },
	{ "mknod-char", 1, 1, op_mknod_char, "PATH" },
	{ "mksock", 1, 1, op_mksock, "PATH" },
	{ "truncate", 1, 1, op_truncate, "PATH" },
	{ "open-trunc", 1, 1, op_open_trunc, "PATH" },
	{ "ftruncate", 1, 1, op_ftruncate, "PATH" },
	{ "ls", 1, 1, op_ls, "PATH" },
	{ "stat", 1, 1, op_stat, "PATH" },
	{ "attr", 3, 3, op_attr, "chmod|fchmod|opath-chmod|setxattr|fsetxattr|acl|utimes PATH MODE" },
	{ "fsflags", 2, 2, op_fsflags, "get|set|fsget|xattr|verity|encrypt PATH" },
	{ "inotify", 1, 2, op_inotify, "PATH [NEW-NAME]" },
	{ "tmpfile", 0, 0, op_tmpfile, "" },
	{ "mkstemp", 1, 1, op_mkstemp, "TEMPLATE" },
	{ "create-excl", 1, 1, op_create_excl, "PATH" },
	{ "plant-until-gone", 2, 2, op_plant_until_gone, "PATH SECONDS" },
	{ "exec", 1, -1, op_exec, "PATH [ARG]..." },
	{ "cwd", 0, 0, op_cwd, "" },
	{ "argv0", 0, 0, op_argv0, "" },
	{ "env", 1, 1, op_env, "NAME" },
	{ "environ", 0, 0, op_environ, "" },
	{ "fds", 0, 0, op_fds, "" },
	{ "caps", 0, 0, op_caps, "" },

	{ "kill", 2, 2, op_kill, "PID SIG" },
	{ "ptrace", 1, 1, op_ptrace, "PID" },
	{ "pidfd-getfd", 2, 2, op_pidfd_getfd, "PID FD" },
	{ "read-mem", 1, 1, op_read_mem, "PID" },
	{ "read-environ", 1, 1, op_read_environ, "PID" },
	{ "sleep", 1, 1, op_sleep, "SECONDS" },
	{ "orphan", 2, 2, op_orphan, "FILE SECONDS" },
	{ "spawn-wait", 1, 1, op_spawn_wait, "SECONDS" },
	{ "pgrp", 0, 0, op_pgrp, "" },
	{ "spawn-many", 1, 2, op_spawn_many, "N [HOLD]" },
	{ "alloc", 1, 1, op_alloc, "MIB" },
	{ "on-process", 2, 2, op_on_process, "prlimit|setpriority|setpriority-pgrp|setpriority-user|affinity|ioprio|scheduler|pidfd PID|self|child|parent" },
	{ "signals", 1, 1, op_signals, "SECONDS" },

	{ "chown", 3, 3, op_chown, "PATH UID GID" },
	{ "setuid", 1, 1, op_setuid, "UID" },
	{ "setgid", 1, 1, op_setgid, "GID" },
	{ "setgroups", 0, 0, op_setgroups, "" },
	{ "id", 0, 0, op_id, "" },

	{ "tiocsti", 0, 1, op_tiocsti, "[TEXT]" },
	{ "tiocsti-high", 0, 1, op_tiocsti_high, "[TEXT]" },
	{ "tioclinux", 0, 0, op_tioclinux, "" },
	{ "tty-steal", 1, 1, op_tty_steal, "SECONDS" },
	{ "read-fd", 2, 2, op_read_fd, "FD SECONDS" },
	{ "tiocsetd", 2, 2, op_tiocsetd, "FD LDISC" },
	{ "winsize", 1, 1, op_winsize, "SECONDS" },

	{ "io_uring_setup", 0, 0, op_io_uring_setup, "" },
	{ "io_uring_enter", 0, 0, op_io_uring_enter, "" },
	{ "io_uring_register", 0, 0, op_io_uring_register, "" },
	{ "keyctl", 0, 0, op_keyctl, "" },
	{ "add_key", 0, 0, op_add_key, "" },
	{ "request_key", 0, 0, op_request_key, "" },
	{ "keyring-read", 0, 1, op_keyring_read, "[session|user]" },
	{ "bpf", 0, 0, op_bpf, "" },
	{ "perf_event_open", 0, 0, op_perf_event_open, "" },
	{ "userfaultfd", 0, 0, op_userfaultfd, "" },
	{ "unshare", 1, 1, op_unshare, "FLAGS" },
	{ "clone", 1, 1, op_clone, "FLAGS" },
	{ "clone3", 0, 1, op_clone3, "[FLAGS]" },
	{ "setns", 0, 0, op_setns, "" },
	{ "mount", 0, 1, op_mount, "[TARGET]" },
	{ "umount2", 1, 1, op_umount2, "PATH" },
	{ "pivot_root", 0, 0, op_pivot_root, "" },
	{ "chroot", 1, 1, op_chroot, "PATH" },
	{ "fsopen", 0, 0, op_fsopen, "" },
	{ "fspick", 0, 0, op_fspick, "" },
	{ "fsconfig", 0, 0, op_fsconfig, "" },
	{ "fsmount", 0, 0, op_fsmount, "" },
	{ "open_tree", 1, 1, op_open_tree, "PATH" },
	{ "move_mount", 0, 0, op_move_mount, "" },
	{ "mount_setattr", 0, 0, op_mount_setattr, "" },
	{ "shmget", 0, 0, op_shmget, "" },
	{ "semget", 0, 0, op_semget, "" },
	{ "msgget", 0, 0, op_msgget, "" },
	{ "shmat", 1, 1, op_shmat, "ID" },
	{ "mq_open", 0, 0, op_mq_open, "" },
	{ "personality", 0, 1, op_personality, "[PERSONA]" },
	{ "x32-getpid", 0, 0, op_x32_getpid, "" },
	{ "int80-getpid", 0, 0, op_int80_getpid, "" },
	{ "syscall", 1, 1, op_syscall, "NR" },

	{ "socket", 3, 3, op_socket, "FAMILY TYPE PROTO" },
	{ "socketpair-dgram", 0, 0, op_socketpair_dgram, "" },
	{ "connect-tcp", 2, 2, op_connect_tcp, "HOST PORT" },
	{ "connect-unix", 1, 1, op_connect_unix, "PATH" },
	{ "session-hello", 1, 1, op_session_hello, "PATH" },
	{ "connect-abstract", 1, 1, op_connect_abstract, "NAME" },
	{ "abstract-clients", 2, 2, op_abstract_clients, "NAME N" },
	{ "bind-tcp", 2, 2, op_bind_tcp, "HOST PORT" },
	{ "listen-tcp", 3, 3, op_listen_tcp, "HOST PORT SECONDS" },
	{ "connect-cycles", 2, 2, op_connect_cycles, "HOST ROUNDS" },
	{ "pipe-pingpong", 1, 1, op_pipe_pingpong, "ROUNDS" },
	{ "listen-unbound", 0, 1, op_listen_unbound, "[SECONDS]" },
	{ "bind-twice", 0, 0, op_bind_twice, "" },
	{ "unix-name", 1, 1, op_unix_name, "PATH" },
	{ "unix-bind-race", 3, 3, op_unix_bind_race, "GOOD BAD N" },
	{ "listen-unix", 2, 2, op_listen_unix, "PATH SECONDS" },
	{ "listen-abstract", 2, 2, op_listen_abstract, "NAME SECONDS" },
	{ "unix-cycle", 1, 1, op_unix_cycle, "PATH" },
	{ "udp-send", 2, 2, op_udp_send, "HOST PORT" },
	{ "udp-send-alone", 2, 3, op_udp_send_alone, "HOST PORT [recverr|connect]" },
	{ "udp-send-how", 3, 3, op_udp_send_how, "sendto|sendmsg|sendmmsg|connect HOST PORT" },
	{ "udp-exchange", 2, 2, op_udp_exchange, "HOST sendto|sendmsg|sendmmsg|connect" },
	{ "udp-race", 5, 5, op_udp_race, "HOST1 PORT1 HOST2 PORT2 N" },
	{ "udp-pingpong", 3, 3, op_udp_pingpong, "HOST ROUNDS sendto|connected" },
	{ "udp-held", 3, 3, op_udp_held, "HOST PORT cork|more" },
	{ "udp-mmsg", 3, 3, op_udp_mmsg, "HOST own|PORT own|PORT" },
	{ "send-killed", 0, 0, op_send_killed, "" },
	{ "dgram-pair", 0, 0, op_dgram_pair, "" },
	{ "bind-udp", 2, 2, op_bind_udp, "HOST PORT" },
	{ "ip-options", 1, 1, op_ip_options, "HOP" },
	{ "ipv6-rthdr", 1, 1, op_ipv6_rthdr, "SEGMENT" },
	{ "unix-dgram-sendto", 1, 1, op_unix_dgram_sendto, "PATH" },
	{ "fastopen", 2, 2, op_fastopen, "HOST PORT" },
	{ "sendmsg-fastopen", 2, 2, op_sendmsg_fastopen, "HOST PORT" },
	{ "sendmmsg-fastopen", 2, 2, op_sendmmsg_fastopen, "HOST PORT" },
	{ "connect-race", 5, 5, op_connect_race, "HOST1 PORT1 HOST2 PORT2 N" },
	{ "connect-spray", 3, 3, op_connect_spray, "HOST PORT SECONDS" },
	{ "connect-armed", 3, 4, op_connect_armed, "HOST PORT SECONDS [CROWD]" },
	{ "connect-deferred", 3, 3, op_connect_deferred, "HOST PORT SECONDS" },
	{ "thread-server", 1, 1, op_thread_server, "HOST" },
	{ "cycles", 3, 3, op_cycles, "HOST PORT N" },
	{ "relay", 2, 3, op_relay, "PORT TPORT [THOST]" },
	{ "sink", 2, 2, op_sink, "HOST PORT" },
	{ "blast", 3, 3, op_blast, "HOST PORT MIB" },
	{ "resolve", 1, 1, op_resolve, "NAME" },
	{ "listen-reuseport", 3, 3, op_listen_reuseport, "HOST PORT SECONDS" },
	{ "http-serve", 2, 2, op_http_serve, "HOST PORT" },
	{ "http-cycles", 4, 4, op_http_cycles, "HOST PORT NAME N" },
	{ "resolve-many", 2, 3, op_resolve_many, "SUFFIX N [same]" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: probe OP [ARG]...\nops:\n");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		fprintf(out, "  %s%s%s\n", ops[i].name, *ops[i].usage ? " " : "", ops[i].usage);
}

int main(int argc, char **argv)
{
	const struct op *op = NULL;
	int nargs, r;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, argv[1]) == 0)
			op = &ops[i];
	if (!op) {
		fprintf(stderr, "probe: unknown op '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	op_name = op->name;
	called_as = argv[0];
	nargs = argc - 2;
	if (nargs < op->min_args || (op->max_args >= 0 && nargs > op->max_args))
		usage_error("usage: probe %s %s", op->name, op->usage);

	/* Line-buffered even into a pipe, so lines and the signal handler's
	 * raw writes interleave in order. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("probe: started %s\n", op->name);
	fflush(stdout);

	errno = 0;
	r = op->run(argv + 2);
	if (r == REPORTED)
		return 1;
	end_partial_line();
	if (r == 0) {
		printf("probe: ok\n");
		return 0;
	}
	printf("probe: errno %s\n", errno_name(r));
	return 1;
}
