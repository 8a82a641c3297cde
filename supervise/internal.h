/* The supervisor's internals, shared by its files. */
#pragma once

#include <stdint.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "supervise/supervise.h"

#define DIAG_BUF 32768

struct pending {
	uint64_t id;
	int fd;			/* our copy of the command's socket */
	int flags;		/* its status flags before we made it non-blocking */
	int retry_unix;		/* a Unix connect to a full backlog: try again */
	int pinned;		/* the socket file addr names through /proc/self/fd, or -1 */
	struct sockaddr_storage addr;
	socklen_t len;
	/* A TCP handshake not made within the call: refused if not made
	 * by then (now_usec), and checked once made; 0 for a Unix connect. */
	unsigned long long deadline;
	/* network allow: a connect to the relay's listener, which is
	 * stockade's, and the one listener it may reach */
	bool relayed;
};

/* network allow (allow.c): a socket whose queries went to stockade's
 * resolver, and the address the command sent them to. */
struct sv_resolved {
	ino_t inode;
	struct sockaddr_storage given;
	socklen_t len;
};

/* A blocking receive on such a socket, waiting for the answer. */
struct pending_recv {
	uint64_t id;
	int fd;			/* our copy of the command's socket */
	pid_t pid;
	uint64_t args[6];
	unsigned long long deadline;	/* SO_RCVTIMEO's; 0: none */
};

/* A send the supervisor makes for the command, waiting for room in a
 * blocking socket's buffer: everything it needs, copied. */
struct pending_send {
	uint64_t id;
	int fd;			/* our copy of the command's socket */
	pid_t pid;
	struct msghdr msg;	/* name, one iovec and control: ours, on the heap */
	struct iovec iov;
	int flags;
	int *fds;		/* our copies of the descriptors SCM_RIGHTS passes */
	size_t n_fds;
	uint64_t msg_len_at;	/* sendmmsg: where its msg_len is written; 0: none */
	bool count_messages;	/* sendmmsg answers a count of messages */
	bool nosignal;		/* the command asked for MSG_NOSIGNAL */
};

struct abstract_name {
	char name[108];
	size_t len;
	ino_t inode;
};

/* A socket file a socket of the run was bound to by the supervisor. */
struct unix_bound {
	dev_t dev;
	ino_t ino;
	ino_t sock;		/* the socket's own inode */
};

/* A name the supervisor made in the host's /tmp for the run: removed when
 * the run ends, if it is still that file. */
struct sv_inode {
	dev_t dev;
	ino_t ino;
};

struct tmp_made {
	char *name;
	dev_t dev;
	ino_t ino;
};

/* A local address and UDP port the supervisor holds for the run
 * (holds.c): nobody had bound it when the run sent a datagram there. */
struct sv_hold {
	struct net_addr addr;
	int fd;
	ino_t inode;
	bool lasting;		/* for a connected socket: kept while the run goes on */
};

struct supervisor {
	const struct policy *p;
	int listener;
	struct report *rep;
	struct mnl_socket *diag;
	char *diag_buf;		/* DIAG_BUF bytes, made with diag */
	unsigned diag_seq;
	struct net_addr *host;
	size_t n_host;
	unsigned long long host_loaded;	/* when they were read (now_usec) */
	ino_t *bound;		/* inet sockets the run bound: their listeners are its own */
	size_t n_bound;
	ino_t *reuseport;	/* those of them that share their port (SO_REUSEPORT) */
	size_t n_reuseport;
	struct abstract_name *abstracts;
	size_t n_abstracts;
	struct unix_bound *unix_bound;
	size_t n_unix_bound;
	struct sv_hold *holds;
	size_t n_holds;
	int tmp_fd;		/* where the run's /tmp names go (O_PATH): its own tmp, else the host's /tmp; or -1 */
	char *tmp_path;		/* the run's own tmp, when tmp_fd is it; NULL: the host's /tmp */
	int pty_watch;		/* inotify: the slaves of ptys the run made (pty.c), or -1 */
	int *ptys;		/* their watches */
	size_t n_ptys;
	struct tmp_made *made;
	size_t n_made;
	int record_fd;		/* where each made is told (a keeper's socket), or -1 */
	pid_t root;		/* the run's processes come down from it: the keeper, or stockade */
	/* files.c: the carved directories the command may write, the
	 * directories made for it in them, and every inode made there */
	char **carved;
	char **made_dirs;
	struct sv_inode *made_inodes;
	size_t n_made_inodes;
	struct pending *pending;
	size_t n_pending;
	struct pending_send *sends;
	size_t n_sends;
	char *send_buf;		/* SEND_MAX bytes: a send's data, read once */
	/* A sendmmsg under way that has sent some: a refusal of a later
	 * message answers it with this count instead (send.c) */
	uint64_t mmsg_id;
	int64_t mmsg_sent;	/* 0: none under way */
	/* root: capabilities while stockade acts for the command (none
	 * effective) and while it does not; NULL for anyone else */
	cap_t caps_acting, caps_own;
	/* pidfds of the callers, by thread id (supervise.c caller_pidfd) */
	struct sv_pidfd {
		pid_t tid;	/* 0: empty */
		int fd;
	} pidfds[32];
	/* network allow */
	struct sv_relay relay;
	bool has_relay;
	struct sv_resolved *resolved;
	size_t n_resolved;
	struct pending_recv *recvs;
	size_t n_recvs;
	bool broken;
};

/* The facts the verdict asks for. */
bool sv_host_address(struct supervisor *sv, const struct net_addr *a);
/* -1 when a listener that is not the run's own would take a connection
 * to dst, 0 when none would, 1 when the run's own would, -errno when
 * stockade cannot tell. */
int sv_foreign_listener(struct supervisor *sv, const struct net_addr *dst);
/* 1 when a listener outside the run holds an address and port a bind to
 * b would share, 0 when none does, -errno when stockade cannot tell. */
int sv_held_outside(struct supervisor *sv, const struct net_addr *b, int protocol);
/* Which socket would receive a UDP datagram from src (the sender's bound
 * address, or NULL) to dst: enum sv_listener, or -errno. */
int sv_udp_receiver(struct supervisor *sv, const struct net_addr *dst, const struct net_addr *src);
/* The loopback device's index, in every network namespace. */
#define LOOPBACK_IFINDEX 1
/* The inode of the abstract socket bound to a's name now; 0 when none. */
ino_t sv_abstract_owner(const struct net_addr *a);
bool sv_run_abstract(const struct supervisor *sv, const struct net_addr *a, ino_t owner);
/* A socket of the run's, just bound: its name, its inode. */
void sv_remember_abstract(struct supervisor *sv, int fd);
void sv_remember_bound(struct supervisor *sv, int fd);
/* A socket of the run's, just bound to name in the directory parent. */
void sv_remember_unix(struct supervisor *sv, int fd, int parent, const char *name);
/* Is a socket the supervisor bound for the run bound to the file (dev,
 * ino) now? */
bool sv_run_socket_file(struct supervisor *sv, dev_t dev, ino_t ino);

/* ---- ports held for the run (holds.c) ---- */

/* Holds a's address and port (0.0.0.0 and :: as the loopback), lasting
 * for a connected socket: true when it is held now. False when it cannot
 * be (a port below 1024 for a user's stockade, a socket bound there since
 * the check, every hold lasting). */
bool sv_hold(struct supervisor *sv, const struct net_addr *a, bool lasting);
/* Is the socket with this inode one of the holds? */
bool sv_is_hold(const struct supervisor *sv, ino_t inode);
/* A bind of the run's to a UDP port: the holds on that port are let go,
 * returned to be held again after the bind (sv_hold_again frees them). */
size_t sv_release_holds(struct supervisor *sv, unsigned short port, struct sv_hold **ret);
void sv_hold_again(struct supervisor *sv, struct sv_hold *released, size_t n);
void sv_holds_free(struct supervisor *sv);

/* ---- what the run may change (files.c), and attributes (attrs.c) ---- */

/* The policy lets the command write path, or it is a trust hand-off. */
bool sv_may_write(const struct supervisor *sv, const char *path);
/* A file the supervisor made for the run (in a carved directory or the
 * host's /tmp). */
bool sv_made_inode(const struct supervisor *sv, const struct stat *st);
/* Where descriptor fd of stockade's leads (readlink of /proc/self/fd). */
int sv_fd_path(int fd, char *buf, size_t size);
bool supervise_attrs_call(int nr);
/* The call is one supervisor_attrs carries out (an ioctl: one that
 * sets a file's flags). */
bool supervise_attrs_takes(int nr, const __u64 args[6]);
/* chmod, chown, setxattr, removexattr, utimes and their kin, carried out
 * on a file the run may write, else refused; always answered. */
void supervisor_attrs(struct supervisor *sv, const struct seccomp_notif *req);

/* ---- ptys the run made (pty.c) ---- */
void sv_ptys_free(struct supervisor *sv);
void sv_files_free(struct supervisor *sv);

/* ---- the host's /tmp (tmp.c) ---- */

/* Hands fd, stockade's, to the caller of notification id as its answer
 * (SECCOMP_IOCTL_NOTIF_ADDFD; O_CLOEXEC as flags ask), and closes it. */
void sv_hand_over(struct supervisor *sv, uint64_t id, int fd, int flags);

/* The command's privileges while stockade acts for it (a root stockade's
 * capabilities set aside): 0, or SV_REFUSED when they cannot be. */
int sv_acting(struct supervisor *sv);
void sv_acted(struct supervisor *sv);
/* A name made in /tmp for the run: the file (dev, ino) it names. */
void sv_tmp_remember(struct supervisor *sv, const char *name, dev_t dev, ino_t ino);
/* Removes each name made in /tmp that is still the file made. */
void sv_tmp_remove_made(struct supervisor *sv);
/* name in /tmp is a socket file the run made there, whose socket is gone
 * (or no longer holds it): removed, so that a bind can make it again as
 * an unlink by the command would have (Landlock refuses the command that
 * unlink). True when removed. */
bool sv_tmp_remove_stale_socket(struct supervisor *sv, const char *name);

/* ---- the notification (notif.c): every answer goes through here ---- */

/* Answered with err (0: success), as the kernel would for the call. */
void sv_respond(struct supervisor *sv, uint64_t id, int err);
/* The call goes on to the kernel as made: the kernel and Landlock decide. */
void sv_continue(struct supervisor *sv, uint64_t id);
/* A call carried out, answered with what it returned. */
void sv_respond_value(struct supervisor *sv, uint64_t id, int64_t val);
/* The caller still waits (nothing reused its id). */
bool sv_id_valid(const struct supervisor *sv, uint64_t id);

/* ---- shared by supervise.c and send.c ---- */

void sv_refuse(struct supervisor *sv, uint64_t id, const char *kind, const char *what, int err);
/* Names a datagram held back (UDP_CORK, MSG_MORE), which the caller refuses. */
void sv_refuse_held_back(struct supervisor *sv, const char *kind, const char *what);
/* The verdict on q, for a socket fd (its kind and bound address are
 * facts too): true when the caller is to carry it out; otherwise
 * answered (and a refusal reported). */
bool sv_decided(struct supervisor *sv, uint64_t id, const struct sv_query *q, int fd, const char *kind,
		struct sv_verdict *ret_v);
struct sv_query sv_query_of(const struct supervisor *sv, enum sv_call call, const struct net_addr *a);
/* A Unix socket file named by a, resolved where the command would find
 * it into q (path_err or path_real and path_is_socket); the pinned
 * descriptor, or -1. real holds 4096 bytes. */
int sv_resolve_socket_file(const struct supervisor *sv, pid_t pid, const struct net_addr *a, struct sv_query *q,
			   char *real);
bool sv_names_socket_file(const struct net_addr *a);
/* The caller's descriptor n, as stockade's own (pidfd_getfd), the
 * notification checked still valid after: -1 with errno. */
int sv_caller_fd(struct supervisor *sv, const struct seccomp_notif *req, int n);
/* The same in two steps, for a caller that reads the call's memory in
 * between: the caller's pidfd (kept: stockade's, not to be closed; -1),
 * then its descriptor n, which the caller checks sv_id_valid after. */
int sv_caller_pidfd(struct supervisor *sv, pid_t tid, bool *ret_kept);
int sv_take_fd(struct supervisor *sv, uint64_t id, pid_t tid, bool kept, int n, int *pidfd);
void sv_pidfds_free(struct supervisor *sv);
/* len bytes of the command's memory at addr, whole or not at all: false
 * with errno (EFAULT for a range that is not wholly mapped). */
bool sv_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Is the socket a datagram one (SOCK_DGRAM)? */
bool sv_is_datagram(int fd);

/* The sends (send.c): sendto with an address, sendmsg, sendmmsg. */
#define SEND_MAX (256 * 1024)
void sv_send(struct supervisor *sv, const struct seccomp_notif *req, int pidfd, int fd);
size_t sv_send_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max);
void sv_send_ready(struct supervisor *sv, const struct pollfd *fds, size_t n);
void sv_send_drain(struct supervisor *sv);

/* A process of the run: a descendant of stockade, not stockade itself. */
bool sv_in_run(const struct supervisor *sv, pid_t pid);
/* A call that names a process (processes.c): 0 when it may go on to the
 * kernel as made, or the errno it is refused with; what is the call
 * and its target, for the report. */
int sv_process_call(const struct supervisor *sv, const struct seccomp_notif *req, char *what, size_t size);

/* ---- network allow (allow.c) ---- */

/* A connect the verdict sent to the relay (v.relay) or the resolver
 * (v.resolver): carried out there, and answered. */
void sv_relay_connect(struct supervisor *sv, uint64_t id, int *fd, const struct sockaddr_storage *ss, socklen_t len,
		      bool resolver);
/* The TCP connect to the relay's listener, made as any other (the
 * command's blocking or not), its listener not checked; the address the
 * kernel gave the socket for it into ret_local (len 0: none), by which
 * the relay is told where it goes. (supervise.c) */
struct sv_local {
	struct sockaddr_storage addr;
	socklen_t len;
};
void sv_start_relayed_connect(struct supervisor *sv, uint64_t id, int *fd, const struct sockaddr_storage *to,
			      socklen_t len, struct sv_local *ret_local);
/* A datagram to port 53: its name replaced by stockade's resolver's.
 * False when there is none. */
bool sv_relay_datagram(struct supervisor *sv, int fd, struct sockaddr_storage *name, socklen_t *name_len);
/* recvfrom with an address (the filter sends those alone, with allow). */
void sv_recvfrom(struct supervisor *sv, const struct seccomp_notif *req);
size_t sv_recv_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max);
void sv_recv_ready(struct supervisor *sv, const struct pollfd *fds, size_t n);
void sv_relay_free(struct supervisor *sv);
