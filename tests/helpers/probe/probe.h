/* The probe's parts: what every op shares, and each op. See main.c. */
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/errqueue.h>
#include <linux/keyctl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* Constants the C library may not have yet; the values are the kernel ABI. */
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSPICK_CLOEXEC
#define FSPICK_CLOEXEC 0x00000001
#endif
#ifndef FSPICK_EMPTY_PATH
#define FSPICK_EMPTY_PATH 0x00000008
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#define PROBE_FSCONFIG_SET_FLAG 0
#define PROBE_BPF_PROG_LOAD 5
#define PROBE_UFFD_USER_MODE_ONLY 1
#define PROBE_CLONE_ARGS_SIZE 88 /* struct clone_args, CLONE_ARGS_SIZE_VER2 */
#define PROBE_X32_SYSCALL_BIT 0x40000000
#define PROBE_X86_64_GETPID 39
#define PROBE_I386_GETPID 20

/* A path that cannot exist (nothing can create entries in /proc/self), for
 * calls whose real form would change the host when run as root outside a
 * jail: the kernel answers ENOENT once it gets as far as the lookup. */
#define PROBE_NO_SUCH_PATH "/proc/self/probe-no-such-dir"

/* A descriptor that is never open (fds stay below fs.nr_open, at most
 * 2^30), for calls that should fail with EBADF when they reach the kernel.
 * Not -1: some calls give -1 a meaning of its own and answer EINVAL. */
#define PROBE_BAD_FD INT_MAX

/* An op returns 0 (ok), a positive errno, or REPORTED when it has printed
 * its own failing result line. */
#define REPORTED (-1)

#define MAX_READ (64 * 1024)
#define MAX_SOCKET_READ 4096

struct flag_name {
	const char *name;
	unsigned long flag;
};

/* The op being run, for usage errors. */
extern const char *op_name;
/* Bytes printed that did not end a line: the result line starts one. */
extern bool mid_line;
/* Exits 2 after "probe: OP: ..." on stderr. */
__attribute__((noreturn, format(printf, 1, 2))) void usage_error(const char *fmt, ...);
int fill_sockaddr_un(struct sockaddr_un *sun, socklen_t *ret_len, const char *name, bool abstract);

const char *errno_name(int e);
void emit_bytes(const void *buf, size_t len);
void end_partial_line(void);
long parse_long(const char *s, const char *what);
double parse_seconds(const char *s);
double now_monotonic(void);
void sleep_seconds(double seconds);
int raw_result(long ret);
int parse_signal(const char *s);
void print_wait_status(const char *who, int status);
int close_if_fd(long fd);

/* The ops, one per line of the table in main.c. */
int op_add_key(char **a);
int op_append(char **a);
int op_bind_tcp(char **a);
int op_bpf(char **a);
int op_caps(char **a);
int op_chown(char **a);
int op_chroot(char **a);
int op_clone(char **a);
int op_clone3(char **a);
int op_connect_abstract(char **a);
int op_abstract_clients(char **a);
int op_connect_cycles(char **a);
int op_connect_race(char **a);
int op_thread_server(char **a);
int op_cycles(char **a);
int op_relay(char **a);
int op_sink(char **a);
int op_blast(char **a);
int op_resolve(char **a);
int op_listen_reuseport(char **a);
int op_http_serve(char **a);
int op_http_cycles(char **a);
int op_resolve_many(char **a);
int op_connect_tcp(char **a);
int op_connect_unix(char **a);
int op_session_hello(char **a);
int op_cwd(char **a);
int op_env(char **a);
int op_environ(char **a);
int op_exec(char **a);
int op_fastopen(char **a);
int op_fds(char **a);
int op_fsconfig(char **a);
int op_fsmount(char **a);
int op_fsopen(char **a);
int op_fspick(char **a);
int op_ftruncate(char **a);
int op_id(char **a);
int op_int80_getpid(char **a);
int op_io_uring_enter(char **a);
int op_io_uring_register(char **a);
int op_io_uring_setup(char **a);
int op_keyctl(char **a);
int op_keyring_read(char **a);
int op_kill(char **a);
int op_link(char **a);
int op_listen_abstract(char **a);
int op_listen_tcp(char **a);
int op_listen_unbound(char **a);
int op_bind_twice(char **a);
int op_unix_name(char **a);
int op_unix_bind_race(char **a);
int op_listen_unix(char **a);
int op_ls(char **a);
int op_mkdir(char **a);
int op_mkfifo(char **a);
int op_mknod_char(char **a);
int op_mksock(char **a);
int op_mount(char **a);
int op_mount_setattr(char **a);
int op_move_mount(char **a);
int op_mq_open(char **a);
int op_msgget(char **a);
int op_open_tree(char **a);
int op_open_trunc(char **a);
int op_on_process(char **a);
int op_orphan(char **a);
int op_spawn_many(char **a);
int op_alloc(char **a);
int op_perf_event_open(char **a);
int op_personality(char **a);
int op_pgrp(char **a);
int op_pidfd_getfd(char **a);
int op_pivot_root(char **a);
int op_ptrace(char **a);
int op_read(char **a);
int op_read_environ(char **a);
int op_read_mem(char **a);
int op_rename(char **a);
int op_request_key(char **a);
int op_rmdir(char **a);
int op_semget(char **a);
int op_sendmmsg_fastopen(char **a);
int op_sendmsg_fastopen(char **a);
int op_setgid(char **a);
int op_setgroups(char **a);
int op_setns(char **a);
int op_setuid(char **a);
int op_shmat(char **a);
int op_shmget(char **a);
int op_signals(char **a);
int op_sleep(char **a);
int op_socket(char **a);
int op_socketpair_dgram(char **a);
int op_spawn_wait(char **a);
int op_stat(char **a);
int op_attr(char **a);
int op_fsflags(char **a);
int op_inotify(char **a);
int op_symlink(char **a);
int op_syscall(char **a);
int op_tioclinux(char **a);
int op_tty_steal(char **a);
int op_read_fd(char **a);
int op_tiocsetd(char **a);
int op_winsize(char **a);
int op_tiocsti(char **a);
int op_tiocsti_high(char **a);
int op_truncate(char **a);
int op_udp_send(char **a);
int op_udp_send_how(char **a);
int op_udp_send_alone(char **a);
int op_connect_spray(char **a);
int op_connect_armed(char **a);
int op_udp_held(char **a);
int op_udp_mmsg(char **a);
int op_send_killed(char **a);
int op_connect_deferred(char **a);
int op_pipe_pingpong(char **a);
int op_udp_exchange(char **a);
int op_udp_race(char **a);
int op_udp_pingpong(char **a);
int op_dgram_pair(char **a);
int op_bind_udp(char **a);
int op_ip_options(char **a);
int op_ipv6_rthdr(char **a);
int op_unix_dgram_sendto(char **a);
int op_umount2(char **a);
int op_unlink(char **a);
int op_tmpfile(char **a);
int op_create_excl(char **a);
int op_plant_until_gone(char **a);
int op_mkstemp(char **a);
int op_unix_cycle(char **a);
int op_unshare(char **a);
int op_userfaultfd(char **a);
int op_write(char **a);
int op_x32_getpid(char **a);
