/* The command's process, from fork to exec: one path for both backends,
 * one order of confinement. Any step that fails ends the process at once
 * with the setup exit code, after telling stockade which step failed and
 * why (struct child_error, over the error pipe): it never goes on
 * half-jailed. */
#pragma once

#include <linux/filter.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "forward/forward.h"
#include "jail/terminal.h"
#include "landlock/landlock.h"
#include "mount/mount.h"

enum child_step {
	CHILD_STEP_NONE,
	CHILD_STEP_WAIT,	/* stockade gave up before it said go */
	CHILD_STEP_CGROUP,
	CHILD_STEP_NETLINK,
	CHILD_STEP_MOUNT,
	CHILD_STEP_CHDIR,
	CHILD_STEP_CAPS,
	CHILD_STEP_NNP,
	CHILD_STEP_LANDLOCK,
	CHILD_STEP_SECCOMP,
	CHILD_STEP_HANDOVER,
	CHILD_STEP_INIT,
	CHILD_STEP_PGRP,
	CHILD_STEP_SESSION,
	CHILD_STEP_TERMINAL,
	CHILD_STEP_EXEC,
};

struct child_error {
	int step;		/* enum child_step */
	int err;
	int mount_step;		/* CHILD_STEP_MOUNT: enum mount_step */
	char path[512];
};


struct child {
	/* What runs, and where. */
	const char *cwd;
	const char *program;	/* canonical: what the policy granted */
	const char *exec_path;	/* the same by the name found on PATH; NULL: none other */
	char *const *argv;
	char *const *envp;
	bool own_pgrp;		/* a process group of the command's own */
	/* The jail's terminal: a session of the command's own, and each
	 * terminal among 0 to 2 replaced (NULL: --mode off, which keeps
	 * them). stand_in replaces them from the start: the pty's slave,
	 * or /dev/null in the jail's init, which makes its pty in the new
	 * root. close_fd: the master, never the command's. */
	const struct terminal_child *terminal;
	int tty_stand_in;
	int close_fd;
	const sigset_t *exec_mask;	/* the signal mask the command starts with */

	/* The namespace jail: this process is its init (pid 1), which builds
	 * the jail, confines itself, forks the command and reaps. */
	bool init;
	bool loopback;		/* bring lo up */
	bool responder;		/* and hand stockade the name responder's socket */
	/* --connect in the namespace jail: listeners bound in the jail's
	 * network namespace before the command starts, handed to stockade
	 * (after the responder's), which carries each connection out. */
	const struct child_listen *listens;
	size_t n_listens;
	/* Network allow in the namespace jail: the routes that bring every
	 * TCP connection to these ports to the jail's own listeners, and a
	 * listener of each family on each, handed to stockade after
	 * --connect's (an IPv6 one, or none where the kernel has no IPv6). */
	const unsigned short *allow_ports;
	size_t n_allow_ports;
	/* --publish in the namespace jail: init makes a socket of the jail's
	 * network for each byte stockade sends here ('4' or '6'), and sends
	 * it back; -1: none. */
	int factory;
	/* Network mode loopback: the way out that leads nowhere (netns/
	 * outside.c), its packet socket handed to stockade after the
	 * responder's (none where it cannot be made). */
	bool outside;
	const struct mount_plan *mounts;
	const char *root_dir;	/* where the new root is mounted */
	bool count_written;	/* hand stockade the run's tmpfs, once the root is built */

	/* The landlock backend: the run's cgroup, where clone3 could not put
	 * the process at birth (-1: none, or born there). */
	int cgroup_procs;
	/* Where the process joins the limits' groups (the host's cgroup v1
	 * pids and memory, as root), writing 0 there itself at once (v1's
	 * tasks: no RCU grace period, limits.c), while stockade makes the
	 * rest. */
	const int *join_procs;
	size_t n_join_procs;
	/* The namespace jail: init waits for a second go before it mounts
	 * the cgroup tree and starts the command (stockade makes the way
	 * out meanwhile). */
	bool join_go;
	/* A cgroup namespace of its own again, rooted at the limits' groups
	 * it joined (those it was cloned in are shared). */
	bool cgroupns_late;
	/* RLIMIT_NPROC, soft and hard, for every process of the run; 0: none;
	 * plus the user's tasks now, counted in the process (landlock). */
	unsigned long nproc;
	bool nproc_plus_user;

	/* Confinement; jail false for --mode off, which runs it plain. */
	bool jail;
	const struct landlock_plan *landlock;	/* to build here (the namespace jail); NULL: none, or stockade's */
	const struct sock_fprog *bpf;
	bool no_listener;	/* the filter loads alone: a parent's holds the listener */

	/* A session's: this process is its zygote (zygote.h), which starts
	 * each command the holder sends on requests. */
	bool zygote;
	int requests;

	int err_fd;		/* the error pipe's write end */
	int sock;		/* to stockade: go (and its Landlock ruleset), the listener, init's status */
};

/* The message stockade sends to say go; ruleset is the Landlock ruleset it
 * built (-1: none). */
int child_go(int sock, int ruleset);

/* The pipes to the command's process: its errors, and a socket for go,
 * the listener and (in the namespace jail) init's status. */
struct link {
	int err[2];
	int sock[2];
};
int link_open(struct link *l);
void link_close(struct link *l);
/* In the child, after the fork: only its ends stay. */
void link_child_side(struct link *l);
/* In stockade, after the fork: only its ends stay. */
void link_parent_side(struct link *l);
/* The landlock backend's process says its pid first thing on its socket
 * (it may be its keeper's vfork, which says nothing until it execs):
 * link_say_pid in it, link_read_pid in stockade (-errno; -EPIPE: it
 * ended first). */
void link_say_pid(int sock);
pid_t link_read_pid(int sock);
/* The landlock backend's listener: its number in the process pid, read
 * from sock, taken with pidfd_getfd (ours, O_CLOEXEC) before the go. */
int child_take_listener(int sock, pid_t pid, int *ret_fd);

_Noreturn void child_main(const struct child *c);
/* The landlock backend's command process forked (or, --mode off,
 * stockade's plain one), child_main in it: straight into cg's group where
 * there is one; in_keeper, by its keeper (keeper.h), as a vfork where it
 * may be one. Its pid, or -errno. */
struct run_cgroup;
pid_t child_start(const struct child *c, struct link *ln, const struct run_cgroup *cg, bool in_keeper);
/* --publish in the namespace jail: one request on the factory socket
 * answered; the socket, or -1 once stockade closed its end. */
int child_serve_factory(int sock);
