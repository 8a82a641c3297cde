/* The connect supervisor of the landlock backend. Landlock governs
 * neither Unix sockets nor (below what the policy needs) loopback, so
 * every connect, bind and listen of the command comes to stockade by
 * seccomp user notification. stockade copies the address once, decides on
 * its copy (supervise_verdict, pure), takes the socket with pidfd_getfd,
 * carries the call out itself and answers with the result: the kernel
 * never reads the address again, so a second thread cannot swap it after
 * the check. No decision on an address is ever answered with CONTINUE
 * (a Unix socket file is bound by stockade too, by the name the command
 * gave where that is safe). The calls that name a process (processes.c)
 * are answered with CONTINUE, once their pid, held in a register and not
 * in memory, was checked. */
#pragma once

#include <fcntl.h>

#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "lib/netaddr.h"
#include "policy/policy.h"
#include "policy/report.h"
#include "policy/report.h"

struct seccomp_notif;


/* ---- the verdict: an address, the policy and what can be found out
 * about the address, to allow or refuse. Pure: every fact comes from the
 * callbacks, which the supervisor answers from the kernel and a unit test
 * from a table. */

/* What the supervisor answers when it refuses: not ECONNREFUSED, so that
 * "refused" and "nobody listening" can be told apart. */
#define SV_REFUSED EACCES

enum sv_call {
	SV_CONNECT,
	SV_BIND,
	SV_LISTEN,
	SV_SEND,		/* sendto, sendmsg, sendmmsg with an address */
};

enum sv_listener {
	SV_LISTENER_NONE,	/* nothing listens there (TCP), nobody has bound the port (UDP) */
	SV_LISTENER_OTHER,	/* a socket outside the run would take the connection */
	SV_LISTENER_RUN,	/* a socket of the run's would take it */
};

struct sv_facts {
	void *data;
	/* An address of one of this host's interfaces. */
	bool (*host_address)(void *data, const struct net_addr *a);
	/* Whose listener would take a connection to a (a local address):
	 * enum sv_listener, or -errno when stockade cannot tell. */
	int (*listener)(void *data, const struct net_addr *a);
	/* An abstract name a process of this run bound, and still holds. */
	bool (*run_abstract)(void *data, const struct net_addr *a);
	/* A socket file (its device and inode) that a socket of this run is
	 * bound to now: one the supervisor bound for the run. */
	bool (*run_socket_file)(void *data, dev_t dev, ino_t ino);
	/* Does a socket outside the run listen on an address and port that a
	 * bind to a would share (a wildcard, the other family's dual-stack
	 * socket, a mapped form): 1, 0, or -errno when stockade cannot tell.
	 * SO_REUSEPORT would let the run join it and take its connections. */
	int (*held_outside)(void *data, const struct net_addr *a);
	/* A datagram to a (a local address): which socket would receive it,
	 * enum sv_listener (NONE: nobody has bound that port), or -errno
	 * when stockade cannot tell. */
	int (*receiver)(void *data, const struct net_addr *a);
	/* Nobody has bound a's port: stockade binds it itself, with a socket
	 * that takes no datagram, so that none bound there later takes what
	 * the run sends, and the kernel answers as it would (ICMP port
	 * unreachable). lasting: for a connected socket, whose later
	 * datagrams go straight to the kernel. True when held. */
	bool (*hold)(void *data, const struct net_addr *a, bool lasting);
	/* The socket asks for its errors (IP_RECVERR, IPV6_RECVERR): asked
	 * only of a send to a port that could not be held. */
	bool (*asks_errors)(void *data);
};

struct sv_query {
	enum sv_call call;
	enum net_mode net;
	const struct policy *policy;	/* its places among its rules */
	/* connect and bind: the address given; listen: where the socket is
	 * bound. */
	struct net_addr addr;
	/* A Unix socket path, resolved by the supervisor where the command
	 * would find it: 0 or the errno that resolving met, and what it found
	 * (connect: the socket file; bind: the directory it goes in). */
	int path_err;
	const char *path_real;
	const char *path_name;	/* bind: the file's name in path_real */
	bool path_is_socket;	/* connect */
	dev_t path_dev;		/* connect: the socket file found */
	ino_t path_ino;
	/* listen: the socket is bound to the loopback device (SO_BINDTODEVICE
	 * "lo"), as stockade binds 0.0.0.0 and :: with loopback. */
	bool loopback_device;
	/* The socket is a datagram one (UDP, a Unix datagram): with
	 * loopback it reaches only a port a socket of the run has bound. */
	bool datagram;
};

enum sv_outcome {
	SV_ALLOW,		/* carry the call out */
	SV_REFUSE,		/* a refusal of stockade's, answered with err and reported */
	SV_ANSWER,		/* answered with err, as the kernel itself would answer */
};

struct sv_verdict {
	enum sv_outcome outcome;
	int err;
	bool undecided;		/* refused because stockade could not tell */
	/* bind or listen, allowed: the socket is bound to the loopback
	 * device first (0.0.0.0 or :: with loopback, or a listen with no
	 * bind before it: it serves this host, never the LAN). */
	bool on_loopback;
	/* bind, allowed: a new socket file directly in the host's /tmp, which
	 * the landlock backend does not grant: the supervisor's to make, and
	 * to remove when the run ends. */
	bool in_host_tmp;
	/* send, allowed: no socket on this host would take the datagram and
	 * its port could not be held, so the kernel would drop it and the
	 * sender, unconnected and not asking for errors, would never know:
	 * answered as sent, and nothing is sent (a socket bound there after
	 * the check gets nothing). */
	bool lost;
	/* connect (TCP), allowed: nobody listened at the check, so a
	 * listener that began since (a service of the host's starting up)
	 * could take the connection: once made, it is asked again, and a
	 * connection a listener outside the run took is torn down (a reset
	 * before any data) and refused. */
	bool recheck;
	/* network allow, a TCP connect off this host to an allowed port:
	 * carried to the relay (struct sv_relay), which reads the name the
	 * connection carries and decides. */
	bool relay;
	/* network allow, a datagram to port 53 (the run's name server,
	 * wherever resolv.conf says it is): carried to stockade's own. */
	bool resolver;
};

/* The host's /tmp, on the landlock backend: the command gets nothing of it
 * from Landlock; the supervisor makes its files and sockets there. */
#define SV_HOST_TMP "/tmp"

struct sv_verdict supervise_verdict(const struct sv_query *q, const struct sv_facts *facts);

/* ---- the supervisor ---- */

struct supervisor;

/* Network allow: where the supervisor carries the run's connections out
 * and its name lookups: stockade's relay (forward/), on this host's
 * loopback. jail/ wires it; the supervisor knows it by these alone. */
struct sv_relay {
	void *data;
	/* The relay's listener, or its resolver socket, for a socket of
	 * family: 0 and its address, or -errno. */
	int (*listener)(void *data, int family, struct sockaddr_storage *ret, socklen_t *ret_len);
	int (*resolver)(void *data, int family, struct sockaddr_storage *ret, socklen_t *ret_len);
	/* The connection the command's socket (its address: from) makes to
	 * the listener is the run's to dest. */
	void (*expect)(void *data, const struct sockaddr *from, socklen_t from_len, const struct sockaddr *dest,
		       socklen_t dest_len);
	/* An allowed name the relay handed out the address for, or NULL. */
	const char *(*name_of)(void *data, const struct net_addr *a);
};

/* ---- the notification service (notif.c): the one reader of a run's
 * listener ---- */

/* What a family did with a notification. */
enum notif_outcome {
	NOTIF_NOT_MINE,		/* the next family's */
	NOTIF_ANSWER,		/* the service answers with *ret_err (0: success) */
	NOTIF_CONTINUE,		/* the service lets it go on to the kernel as made */
	NOTIF_DONE,		/* the family answered it, or holds it pending */
};

typedef enum notif_outcome (*notif_take_fn)(void *data, const struct seccomp_notif *req, int *ret_err);
/* The calls a family may take (by number alone; its take looks at the
 * arguments): the service's table is keyed by them. */
typedef bool (*notif_calls_fn)(void *data, int nr);

struct notif_family {
	const char *name;
	notif_calls_fn calls;	/* NULL: every call */
	notif_take_fn take;
	void *data;
};

/* The call numbers the table keys; one above them goes to every family
 * in turn. */
#define NOTIF_CALLS 512

struct notif_service {
	int listener;
	struct notif_family families[10];
	size_t n;
	/* For each call number, the families that may take it, a bit each
	 * in the order they were added; NOTIF_KEYED once it is filled (the
	 * first time the call comes). */
	uint16_t by_call[NOTIF_CALLS];
};
#define NOTIF_KEYED 0x8000

void notif_service_init(struct notif_service *s, int listener);
/* Adds a family, asked after those added before, for the calls calls()
 * says it may take. */
void notif_service_add(struct notif_service *s, const char *name, notif_calls_fn calls, notif_take_fn take,
		       void *data);
/* The supervisor's families: the host's /tmp, ptys, what is new in the
 * carved directories (files: supervise_files), and the network. */
void notif_service_add_supervisor(struct notif_service *s, struct supervisor *sv, bool files);
/* Reads one notification and gives it to the first of the families keyed
 * for its call that takes it (none: ENOSYS). 0, or -errno when the
 * listener is broken. */
int notif_serve(struct notif_service *s);
/* What notif_serve does with req once read: the outcome of the family
 * that took it (*ret_family its name), or NOTIF_ANSWER with ENOSYS when
 * none did (*ret_family NULL). */
enum notif_outcome notif_dispatch(struct notif_service *s, const struct seccomp_notif *req, int *ret_err,
				  const char **ret_family);
/* Answers with err (0: the call succeeds, as carried out for it). */
void notif_answer(int listener, uint64_t id, int err);
/* Lets the call go on to the kernel as made: only for a call watched,
 * never one decided (its arguments may have changed since they were
 * read). */
void notif_continue(int listener, uint64_t id);
/* Whether the notification id still waits on listener. */
bool notif_id_valid(int listener, uint64_t id);
/* The caller's descriptor n, as stockade's own (a new pidfd of the
 * calling thread's, or its thread group's), the notification checked
 * still waiting after: -errno (ESRCH: gone; EBADF: no such descriptor). */
int notif_caller_fd(int listener, const struct seccomp_notif *req, int n);

/* p, with its places (the backend's fresh home and tmp, writable like
 * its grants), must outlive the supervisor. */
struct supervisor *supervisor_new(const struct policy *p, int listener, struct report *rep);
void supervisor_free(struct supervisor *sv);

/* Is this system call the supervisor's to decide? */
bool supervisor_handles(const struct supervisor *sv, int nr);
/* Decides and carries out one call; answers it now, or once a connect
 * in progress has finished (supervisor_pollfds, supervisor_ready). Never
 * blocks. */
void supervisor_handle(struct supervisor *sv, const struct seccomp_notif *req);
size_t supervisor_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max);
void supervisor_ready(struct supervisor *sv, const struct pollfd *fds, size_t n);
/* Answers whatever is still in progress and removes what it made in the
 * host's /tmp for the run (the command is gone). */
void supervisor_drain(struct supervisor *sv);
/* An open of glibc's tmpfile() or mkstemp() in the host's /tmp (an
 * O_TMPFILE open of /tmp, an O_CREAT | O_EXCL one of a new name directly
 * in it), which Landlock refuses the command: carried out by the
 * supervisor and answered with the descriptor. False for any other open,
 * which is the caller's to answer (tmp.c). */
bool supervisor_makes_in_tmp(struct supervisor *sv, const struct seccomp_notif *req);
/* The carved directories the command may write (landlock/'s plan): what
 * is new in them the supervisor makes (files.c). */
void supervisor_set_carved(struct supervisor *sv, char *const *carved);
/* An open, creation, removal, rename or link that the filter sent for
 * supervise_files: carried out when it makes or touches what is new in
 * a carved directory, else let go on; true when answered. False for a
 * call that is not one of those, or an open the shm watch names. */
bool supervisor_files(struct supervisor *sv, const struct seccomp_notif *req);
/* The calls supervisor_files takes. */
bool supervise_files_call(int nr);
/* An open (the filter's name_opens) of a hidden path, named with its
 * rule; cover: the namespace jail's, where a hidden file is covered
 * read-only (a write to it is EROFS). The caller lets it go on. */
void supervise_name_hidden_open(const struct policy *p, struct report *rep, const struct seccomp_notif *req, bool cover);
/* TIOCGPTPEER on a pty the command made, whose slave Landlock would
 * refuse it (no /dev/pts name is granted): opened by the supervisor and
 * answered with the descriptor. False for any other call (pty.c). */
bool supervisor_opens_pty_peer(struct supervisor *sv, const struct seccomp_notif *req);
/* Such an open: of the slave of a pty the run made, by its name, carried
 * out by the supervisor and answered with the descriptor; any other goes
 * on to the kernel. False for any other call (pty.c). */
bool supervisor_reopens_pty(struct supervisor *sv, const struct seccomp_notif *req);
/* What the supervisor made for the run in the host's /tmp that is still
 * the file it made (supervisor_drain removes it): the regular files'
 * count, their bytes, and a few of their paths. */
unsigned long supervisor_tmp_written(struct supervisor *sv, unsigned long long *ret_bytes, char ***ret_paths);
/* Network allow: the relay the run's connections out and lookups go to. */
void supervisor_set_relay(struct supervisor *sv, const struct sv_relay *relay);
/* fd listens for the run (stockade's own for --publish): a port of the
 * run's, never another's that a bind of the run would take. */
void supervisor_own_listener(struct supervisor *sv, int fd);
/* False once the supervisor could not decide something it had to. */
bool supervisor_whole_run(const struct supervisor *sv);
/* The process the run's come down from (their subreaper; stockade
 * unless told): it and its ancestors are no process of the run. */
void supervisor_set_root(struct supervisor *sv, pid_t root);
/* The run's own tmp (the backend's TMPDIR, removed with the run): the
 * names the run makes directly in /tmp through the supervisor (tmpfile(),
 * mkstemp(), the sockets it binds) are made there instead of in the
 * host's /tmp, so that no program outside the run sees them (a listener
 * planted at a name a tool of yours connects to, as /tmp/.s.PGSQL.5432),
 * and a connect to /tmp/NAME reaches the run's own socket NAME there.
 * 0, or -errno when dir cannot be opened (the host's /tmp stays). */
int supervisor_set_tmp(struct supervisor *sv, const char *dir);
/* Each name the supervisor makes in the host's /tmp is also sent, as one
 * message (struct supervise_tmp_record), on fd: a keeper's socket, so
 * that what a killed stockade made is still removed. */
void supervisor_record_tmp(struct supervisor *sv, int fd);
#define SUPERVISE_TMP_RECORD 'T'
struct supervise_tmp_record {
	char tag;		/* SUPERVISE_TMP_RECORD */
	uint64_t dev, ino;
	char name[256];		/* a name directly in the host's /tmp */
};
/* Removes name from the host's /tmp if it is still the file made (dev,
 * ino): 0, -ESTALE (another file now), or -errno. */
int supervise_tmp_remove(const char *name, dev_t dev, ino_t ino);


/* ---- a file's mode, flags and watches (attrs.c, setgid.c) ---- */

/* An ioctl that sets a file's flags (FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR,
 * FS_IOC_SETVERSION), with the size of what its argument points to. */
bool supervise_flags_ioctl(uint32_t request, size_t *ret_size);
/* A request of the setters' types ('f', 'X', 'v'), which the filter
 * sends to the listener as a whole. */
bool supervise_flags_type(uint32_t request);
/* Why a setgid bit on a file that is not a directory is refused. */
#define SUPERVISE_SETGID_RULE                                                  \
	"a setgid bit on a file: it would run with your group for every user of the host, after the run (a "  \
	"directory's is kept)"

/* The namespace jail's chmod with the setgid bit alone, which the filter
 * sends to the listener: carried out on a directory, refused on any
 * other file (named); the errno to answer (0: done). */
bool supervise_is_setgid_chmod(int nr, const uint64_t *args);
int supervise_setgid(int listener, const struct seccomp_notif *req, struct report *rep);

/* ---- renames in the namespace jail, watched (renames.c) ---- */

bool supervise_is_rename(int nr);
/* A path from the command's memory, NUL-terminated, or NULL. */
char *supervise_read_path(pid_t pid, uint64_t addr);
/* Where a path the command names lies, normalised: absolute, or against
 * its directory descriptor or working directory (from /proc); NULL when
 * that cannot be read. */
char *supervise_path_of(pid_t pid, int dirfd, const char *path);
/* The flags glibc's sem_open (its temporary file), shm_open with O_EXCL
 * and shm_open's create-or-attach open with; the seccomp table sends
 * openat with exactly these to the listener on the landlock backend. */
#define SHM_OPEN_SEM (O_RDWR | O_CREAT | O_EXCL)
#define SHM_OPEN_EXCL (O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
#define SHM_OPEN_ATTACH (O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC)
bool supervise_is_shm_open(int nr, const uint64_t *args);
/* Whether the open names a place in /dev/shm (*ret_path, to free). */
bool supervise_shm_path(const struct seccomp_notif *req, char **ret_path);
/* Both paths of a rename notification, as the command names them,
 * resolved against its directory descriptors or working directory. */
int supervise_rename_paths(const struct seccomp_notif *req, char **ret_old, char **ret_new);
/* A connect to a Unix socket file (not an abstract name): the path, as
 * the command names it, against its working directory; NULL for any
 * other connect. It decides nothing: the call goes on, and a path
 * swapped after the read changes only what is said. */
char *supervise_unix_connect_path(const struct seccomp_notif *req);
/* The trust hand-off rule that holds path (the deepest), or NULL. Pure. */
const struct rule *supervise_rename_handoff(const struct policy *p, const char *path);

/* ---- calls that name a process, on the landlock backend (processes.c) ---- */

enum sv_target {
	SV_TARGET_NONE,		/* a kind the kernel refuses (EINVAL) */
	SV_TARGET_PROCESS,	/* a pid or tid; 0 the caller */
	SV_TARGET_PGRP,		/* a process group; 0 the caller's */
	SV_TARGET_USER,		/* every process of a user */
};

struct sv_process_call {
	const char *name;
	enum sv_target kind;
	long id;
	bool changes;		/* sets something, rather than reads it */
};

/* What a call names: false when nr is not one of the calls that take a
 * pid, a process group or a user. Pure. */
bool supervise_process_call(int nr, const uint64_t args[6], struct sv_process_call *ret);

/* What the supervisor enforces and what it cannot on this host (pidfd_getfd
 * refused: it cannot act for the command), into the report. */
void supervise_describe(enum net_mode net, bool pidfd_getfd, struct report *rep);
