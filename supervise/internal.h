/* The supervisor's internals, shared by its files. */
#pragma once

#include <stdint.h>
#include <sys/capability.h>
#include <sys/types.h>

#include "supervise/supervise.h"

#define DIAG_BUF 32768

struct pending {
	uint64_t id;
	int fd;			/* our copy of the command's socket */
	int flags;		/* its status flags before we made it non-blocking */
	int retry_unix;		/* a Unix connect to a full backlog: try again */
	struct sockaddr_storage addr;
	socklen_t len;
};

struct abstract_name {
	char name[108];
	size_t len;
	ino_t inode;
};

struct supervisor {
	const struct policy *p;
	const struct rule *places;
	size_t n_places;
	int listener;
	struct report *rep;
	struct mnl_socket *diag;
	char *diag_buf;		/* DIAG_BUF bytes, made with diag */
	unsigned diag_seq;
	struct net_addr *host;
	size_t n_host;
	ino_t *bound;		/* inet sockets the run bound: their listeners are its own */
	size_t n_bound;
	ino_t *reuseport;	/* those of them that share their port (SO_REUSEPORT) */
	size_t n_reuseport;
	struct abstract_name *abstracts;
	size_t n_abstracts;
	struct pending *pending;
	size_t n_pending;
	/* root: capabilities while stockade acts for the command (none
	 * effective) and while it does not; NULL for anyone else */
	cap_t caps_acting, caps_own;
	bool broken;
};

/* The facts the verdict asks for. */
bool sv_host_address(struct supervisor *sv, const struct net_addr *a);
/* -1 when a listener that is not the run's own would take a connection
 * to dst, 0 when none would, -errno when stockade cannot tell. */
int sv_foreign_listener(struct supervisor *sv, const struct net_addr *dst);
/* 1 when a listener outside the run holds an address and port a bind to
 * b would share, 0 when none does, -errno when stockade cannot tell. */
int sv_held_outside(struct supervisor *sv, const struct net_addr *b);
/* The loopback device's index, in every network namespace. */
#define LOOPBACK_IFINDEX 1
/* The inode of the abstract socket bound to a's name now; 0 when none. */
ino_t sv_abstract_owner(const struct net_addr *a);
bool sv_run_abstract(const struct supervisor *sv, const struct net_addr *a, ino_t owner);
/* A socket of the run's, just bound: its name, its inode. */
void sv_remember_abstract(struct supervisor *sv, int fd);
void sv_remember_bound(struct supervisor *sv, int fd);

/* A process of the run: a descendant of stockade, not stockade itself. */
bool sv_in_run(pid_t pid);
/* A call that names a process (processes.c): 0 when it may go on to the
 * kernel as made, or the errno it is refused with; what is the call
 * and its target, for the report. */
int sv_process_call(const struct seccomp_notif *req, char *what, size_t size);
