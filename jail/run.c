/* The order of operations, one function per backend. Everything the
 * command's process does from fork to exec is child.c's, in one order for
 * both; what is planned is plan.c's; every message is say.c's. */
#include "jail/run.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgroup/cgroup.h"
#include "jail/child.h"
#include "jail/allow.h"
#include "forward/forward.h"
#include "jail/holder.h"
#include "jail/ids.h"
#include "jail/keeper.h"
#include "cgroup/limits.h"
#include "jail/notify.h"
#include "jail/owed.h"
#include "jail/plan.h"
#include "jail/say.h"
#include "jail/terminal.h"
#include "jail/wait.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/phase.h"
#include "netns/netns.h"
#include "supervise/supervise.h"

/* The namespace jail was refused by the host and auto may fall back to
 * the landlock backend; rep->fallback says why. Nothing of the command
 * ran. */
#define RUN_FALLBACK (-1)

/* --mode off: does stockade have its terminal in the foreground? Then
 * the command stays in stockade's process group, so the terminal's job
 * control and its signals reach it as they would without stockade. A
 * jailed command always has a session of its own (jail/terminal.h). */
static bool on_foreground_terminal(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetsid(fd) == getsid(0))
			return true;
	return false;
}

/* The exit status stockade ends with, from the command's. */
static int exit_status(int status, struct report *rep)
{
	rep->exited = true;
	if (WIFSIGNALED(status)) {
		rep->signal = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	rep->exit_code = WEXITSTATUS(status);
	return WEXITSTATUS(status);
}

/* The setup failure the command's process reported, if any: true and
 * *ret filled, or false when it exec'd (EOF). Until then its listener is
 * answered (listener -1: none yet), so that a call the filter refuses
 * during setup fails that step instead of waiting forever; the error
 * pipe first, so that a call of the command's own is the supervisor's.
 * Once the process says on sock that it is at its exec, the listener is
 * left to the supervisor: what the command calls waits for it. */
static bool setup_failed(int err_fd, int sock, int listener, const struct seccomp_plan *sc, struct report *rep,
			 struct child_error *ret)
{
	for (;;) {
		struct pollfd fds[3] = { { .fd = err_fd, .events = POLLIN },
					 { .fd = listener >= 0 ? sock : -1, .events = POLLIN },
					 { .fd = listener, .events = POLLIN } };
		if (poll(fds, 3, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (fds[1].revents) {
			char at_exec;
			(void)!recv(sock, &at_exec, 1, MSG_DONTWAIT);
			listener = -1;
			continue;
		}
		if (fds[2].revents & POLLIN) {
			struct notify nt;
			notify_init(&nt, listener, sc, NULL, NULL, rep);
			(void)notif_serve(&nt.svc);
		} else if (fds[2].revents) {
			listener = -1;
		}
	}
	size_t got = 0;
	return read_all(err_fd, ret, sizeof(*ret), &got) == 0 && got == sizeof(*ret);
}

/* The places made; said, and failed on. */
static int make_places(struct run *r, struct plan *pl)
{
	struct places_failure f;
	int e = places_make(&pl->places, r->p, &f);
	say_places_notes(&pl->places);
	if (e < 0)
		say_places_failure(&f);
	places_failure_free(&f);
	return e;
}

static int plan_landlock_said(struct run *r, struct plan *pl)
{
	int e = plan_landlock(pl, r->p, r->h);
	if (e < 0)
		log_error("cannot plan the Landlock rules: %s", strerror(-e));
	return e;
}

static int plan_filter_said(struct run *r, struct plan *pl)
{
	pl->watch_every_hide = log_verbosity > 0;
	int e = plan_filter(pl, r->p, r->h);
	if (e < 0)
		log_error("cannot build the seccomp filter: %s", strerror(-e));
	return e;
}

/* What the run enforces, and every part it does not, said; --mode
 * required refuses to run with any. */
static int say_enforced(struct run *r, const struct plan *pl, bool cgroup)
{
	struct report *rep = r->rep;
	plan_describe(pl, r->p, r->h, cgroup, rep);
	if (r->p->mode == MODE_REQUIRED && rep->n_gaps) {
		for (size_t i = 0; i < rep->n_gaps; i++)
			log_error("unenforced here: %s: %s", rep->gaps[i].what, rep->gaps[i].why);
		log_error("refusing to run with --mode required: %zu part(s) of the policy are unenforced here",
			  rep->n_gaps);
		return -EPERM;
	}
	/* What this host leaves out is the same on every run here: each
	 * line said once, as every such note (a switch of backend says only
	 * the lines the other had not). */
	bool said_any = false;
	for (size_t i = 0; pl->backend != BACKEND_NONE && i < rep->n_gaps; i++)
		said_any |= say_note_once(r->p, rep, "unenforced: %s: %s", rep->gaps[i].what, rep->gaps[i].why);
	if (said_any && log_verbosity < 1)
		log_note("said once while they stay the same; every report lists them, and -v says them each run");
	log_info("backend %s (%s), network %s, %zu Landlock rules, %zu mounts", backend_name(pl->backend), r->why,
		 net_mode_name(r->p->net), pl->landlock.n_rules, pl->mounts.n_entries);
	return 0;
}

static void set_fallback(struct report *rep, const char *what, int err)
{
	free(rep->fallback);
	const char *name = strerrorname_np(err);
	rep->fallback = xstrcat3(what, ": ", name ? name : "?");
}

/* May the namespace jail's failure at this step send auto to the landlock
 * backend? Only when the host refused a capability: never for something a
 * path in the workspace could cause (ENOENT, ELOOP, a mount point that
 * cannot be made), so that nothing in the workspace can push stockade onto
 * the weaker backend. */
static bool host_refused(const struct child_error *e)
{
	if (e->err != EPERM && e->err != EACCES && e->err != ENOSYS && e->err != EINVAL)
		return false;
	if (e->step == CHILD_STEP_NETLINK)
		return true;
	return e->step == CHILD_STEP_MOUNT && !mount_step_is_path((enum mount_step)e->mount_step);
}

static bool clone_refused(int err)
{
	return err == EPERM || err == EACCES || err == ENOSYS || err == EINVAL || err == ENOSPC || err == EUSERS;
}

/* A jailed command has a session of its own and the terminal its run
 * made; --mode off keeps the caller's. */
/* A session: the command is its zygote, which starts each of the
 * session's commands on the holder's word, on a socket of their own. */
static int zygote_link(struct child *c, int zs[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, zs) < 0) {
		log_error("cannot set up the session's zygote: %m");
		return -1;
	}
	c->zygote = true;
	c->requests = zs[1];
	return 0;
}

static struct child child_of(const struct policy *p, const struct plan *pl, const struct signals *sg,
			     const struct terminal *term)
{
	bool jail = pl->backend != BACKEND_NONE;
	return (struct child){
		.cwd = p->cwd,
		.program = p->program,
		.exec_path = p->exec_path,
		.argv = p->argv,
		.envp = pl->places.env.envp,
		.own_pgrp = jail || !on_foreground_terminal(),
		.terminal = jail ? &term->child : NULL,
		.tty_stand_in = term->slave,
		.close_fd = term->master,
		.exec_mask = &sg->old,
		.cgroup_procs = -1,
		.factory = -1,
		.jail = pl->backend != BACKEND_NONE,
		.bpf = pl->backend != BACKEND_NONE ? &pl->bpf : NULL,
		.no_listener = pl->seccomp.no_listener,
	};
}

/* What the keeper is given: how to fork the command's process (the
 * landlock backend), and the run, to end it should stockade die. */
struct kept {
	struct run *r;
	const struct child *c;
	struct link *ln;
	const struct run_cgroup *cg;
	struct places *places;
	bool in_keeper;		/* start_command is the keeper's */
};

/* The keeper's (the landlock backend), or stockade's (--mode off). */
static pid_t start_command(void *data)
{
	const struct kept *k = data;
	return child_start(k->c, k->ln, k->cg, k->in_keeper);
}

/* In the keeper, stockade gone and every process of the run with it:
 * what stockade had left of the run's end. Its places swept, the guard
 * begun anew (stockade's locks went with it, so the begin undoes what
 * the run changed, as the next run would) and ended, the report. */
static void keeper_finish(void *data, int command_status)
{
	struct kept *k = data;
	struct run *r = k->r;
	struct report *rep = r->rep;
	rep->ended = "stockade died during the run (killed or crashed): its keeper killed every process of the run, "
		     "undid what the run changed of the trust hand-offs and removed its places";
	log_error("stockade died during the run: its keeper ends it (every process of the run killed, the trust "
		  "hand-offs undone, the run's places removed)");
	int status = command_status >= 0 ? exit_status(command_status, rep) : 128 + SIGKILL;
	if (command_status < 0) {
		rep->exited = true;
		rep->signal = SIGKILL;
	}
	rep->supervisor = false;
	/* The hand-offs first: a planted hook is what a git commit outside
	 * would run next. stockade's guards hold descriptors the keeper
	 * closed. */
	r->n_guards = 0;
	status = run_begin_guard(r) < 0 ? EXIT_UNDO_FAILED : run_end_guard(r, status);
	places_sweep(k->places, r->p->uid);
	if (r->holder)
		holder_forget_files(r->holder);
	if (rep->out_fd >= 0) {
		rep->status = status;
		(void)report_write_fd(rep, rep->out_fd);
	}
}

static int run_namespaces(struct run *r)
{
	struct policy *p = r->p;
	struct report *rep = r->rep;
	_cleanup_strv_ char **bound = NULL;
	struct plan pl;
	struct signals sg = { .fd = -1 };
	struct link ln = { { -1, -1 }, { -1, -1 } };
	struct run_limits lim = RUN_LIMITS_INIT;
	struct run_cgroup cg = RUN_CGROUP_INIT;
	_cleanup_close_ int listener = -1;
	_cleanup_close_ int responder = -1, outside_nl = -1, shared = -1, init_pidfd = -1;
	int zs[2] = { -1, -1 };	/* a session's zygote: the holder's end, its end */
	int outside = -1, refusals = -1;
	pid_t unreaped = -1;	/* the jail's init, once it reported and let go */
	struct forwards fwd = { .pool.sock = -1, .factory_child = -1 };
	struct allowing al = { 0 };
	_cleanup_free_ char *net_source = NULL;
	_cleanup_close_ int null_fd = -1;
	struct terminal term;
	int status = EXIT_STOCKADE;
	plan_init(&pl, BACKEND_NAMESPACES);
	terminal_plan(&term);

	/* 1. The guard first: what it undoes of a killed run must not be in
	 *    the mounts. */
	if (run_begin_guard(r) < 0)
		goto out;
	/* 2. The places: the run directory the new root is mounted on; the
	 *    home and /tmp are tmpfs of the jail's own. */
	places_plan(p, pl.backend, r->environ, &pl.places);
	phase_mark("places_plan");
	if (make_places(r, &pl) < 0)
		goto out;
	phase_mark("places_make");
	/* 3. The filter, the new root, and Landlock on top of it. */
	if (plan_filter_said(r, &pl) < 0)
		goto out;
	phase_mark("plan_filter");
	plan_mounts(&pl, p);
	phase_mark("plan_mounts");
	if (plan_landlock_said(r, &pl) < 0)
		goto out;
	phase_mark("plan_landlock");
	/* 4. The limits, by the best mechanism here; what is enforced;
	 *    --mode required refuses the rest. */
	/*    A cgroup of the run's own where one can be made: the jail is
	 *    cloned into it, so that its cgroup namespace (and the tree it
	 *    mounts) is rooted there, and its limits go on it. */
	if (cgroup_create(&cg) < 0)
		cgroup_release(&cg);
	phase_mark("cgroup_create");
	limits_setup(p, BACKEND_NAMESPACES, cg.dir, &lim);
	phase_mark("limits_setup");
	limits_describe(&lim, p, NULL, rep);
	if (say_enforced(r, &pl, false) < 0)
		goto out;
	phase_mark("say_enforced");
	/* 5. Signals blocked, the pipes to the jail's init. */
	if (signals_block(&sg) < 0 || link_open(&ln) < 0) {
		log_error("cannot set up the pipes to the command's process: %m");
		goto out;
	}
	/* 5b. --publish's listeners on the host, and what --connect binds
	 *     inside. */
	if (forwards_begin(&fwd, p, BACKEND_NAMESPACES) < 0 || allowing_begin(&al, p, rep) < 0)
		goto out;
	phase_mark("signals_forwards");
	/* 6. The jail's init, cloned into new namespaces; it waits for go.
	 *    It makes the jail's pty itself, in the new root; until then
	 *    /dev/null stands in for the user's terminal. */
	if (terminal_wanted(&term) && (null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		log_error("cannot open '/dev/null': %m");
		goto out;
	}
	struct child c = child_of(p, &pl, &sg, &term);
	if (r->holder && zygote_link(&c, zs) < 0)
		goto out;
	c.tty_stand_in = null_fd;
	c.init = true;
	c.factory = fwd.factory_child;
	c.listens = fwd.listens;
	c.n_listens = fwd.n_listens;
	c.loopback = p->net == NET_LOOPBACK || p->net == NET_ALLOW;
	c.responder = c.loopback;
	c.allow_ports = al.ports;
	c.n_allow_ports = al.relay ? al.n_ports : 0;
	c.outside = c.loopback;
	c.mounts = &pl.mounts;
	c.root_dir = pl.places.run_dir;
	c.count_written = true;
	c.landlock = pl.landlock.abi ? &pl.landlock : NULL;
	c.err_fd = ln.err[1];
	c.sock = ln.sock[1];
	c.nproc = lim.nproc;
	c.join_procs = lim.procs;
	c.n_join_procs = lim.n_procs;
	/* init waits for a second go once its root is built: stockade makes
	 * the way out (loopback) and forks the keeper meanwhile, off the
	 * start's critical path, and the keeper is there before anything of
	 * the command's runs. */
	c.join_go = true;
	c.cgroupns_late = lim.n_procs > 0;
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
			      CLONE_NEWCGROUP | (p->net == NET_ON ? 0 : CLONE_NEWNET);
	pid_t pid = -1;
	if (cg.dir_fd >= 0) {
		struct clone_args args = { .flags = flags | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
					   .cgroup = (uint64_t)cg.dir_fd };
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	}
	if (pid < 0)
		pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		phase_mark("init:start");
		link_child_side(&ln);
		child_main(&c);
	}
	int clone_err = errno;
	phase_mark("clone");
	link_parent_side(&ln);
	if (zs[1] >= 0)
		close(TAKE_FD(zs[1]));
	if (fwd.factory_child >= 0) {
		close(fwd.factory_child);
		fwd.factory_child = -1;
	}
	if (pid < 0) {
		set_fallback(rep, "user namespaces refused: clone", clone_err);
		if (clone_refused(clone_err) && r->may_fall_back) {
			status = RUN_FALLBACK;
		} else if (clone_refused(clone_err)) {
			log_error("cannot build the namespace jail: %s", rep->fallback);
			if (r->h->seccomp_filters > 0)
				log_hint("this run is nested under a seccomp filter (another jail's, which refuses new user "
					 "namespaces): --backend landlock, or auto, runs here");
			else
				log_hint("stockade doctor says what this host can enforce; --backend auto falls back to the landlock backend");
		} else {
			log_error("cannot clone the jail's init: %s", strerror(clone_err));
		}
		goto out;
	}
	/* 7. Its uid and gid maps: the caller's own ids and nothing else;
	 *    then go. */
	int e = ids_map(pid, p->uid, p->gid);
	phase_mark("ids_map");
	if (e < 0) {
		kill_and_reap(pid);
		set_fallback(rep, "user namespaces refused: writing the uid and gid maps", -e);
		if ((e == -EPERM || e == -EACCES) && r->may_fall_back)
			status = RUN_FALLBACK;
		else
			log_error("cannot write the jail's uid and gid maps: %s", strerror(-e));
		goto out;
	}
	/* 7b. The keeper, before anything of the command's runs: should
	 *     stockade die, init dies with it (its death signal), and the
	 *     keeper ends the run (the guard's undo, the places). */
	init_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int report_fd = rep->out_fd;
	struct kept kept = { .r = r, .places = &pl.places };
	struct keeper_duty duty = {
		.cg = &cg,
		.init_pidfd = init_pidfd,
		.keep = &report_fd,
		.n_keep = report_fd >= 0,
		.finish = keeper_finish,
		.data = &kept,
	};
	/*     init waits for a second go before it starts the command: the
	 *     keeper is forked while init builds the root, and is there
	 *     before that go. */
	if (init_pidfd < 0) {
		log_error("cannot start stockade's keeper: %m");
		kill_and_reap(pid);
		goto out;
	}
	if (child_go(ln.sock[0], -1) < 0) {
		log_error("cannot start the jail's init: %m");
		kill_and_reap(pid);
		goto out;
	}
	if ((e = keeper_begin(&r->keeper, &duty)) < 0) {
		log_error("cannot start stockade's keeper: %s", strerror(-e));
		kill_and_reap(pid);
		goto out;
	}
	phase_mark("keeper_begin");
	/* 8. While init builds the root, and before it starts the command
	 *    on a second go: the way out that leads nowhere, made through the
	 *    sockets init hands over first. Then
	 *    what init hands over, in its order: the name responder's
	 *    socket, those two, --connect's listeners (before the new root),
	 *    the pty's master (once the root is built), the listener (once
	 *    it has loaded its filter); then EOF on the error pipe says the
	 *    command has exec'd. */
	phase_mark("go");
	bool failed = (c.responder && fd_recv(ln.sock[0], &responder) < 0) ||
		      (c.outside && (fd_recv(ln.sock[0], &outside_nl) < 0 || fd_recv(ln.sock[0], &outside) < 0 ||
				     fd_recv(ln.sock[0], &refusals) < 0));
	phase_mark("recv_netns");
	if (!failed && c.outside) {
		netns_outside_begin(&outside, outside_nl, rep);
		(void)netns_refusals_bind(&refusals);
	}
	phase_mark("netns_outside");
	if (!failed && child_go(ln.sock[0], -1) < 0)
		failed = true;
	failed = failed || forwards_take_listens(&fwd, ln.sock[0]) < 0 || allowing_take_listens(&al, ln.sock[0]) < 0 ||
		 fd_recv(ln.sock[0], &shared) < 0 ||
		 (terminal_wanted(&term) && fd_recv(ln.sock[0], &term.master) < 0) ||
		 (!c.no_listener && fd_recv(ln.sock[0], &listener) < 0);
	phase_mark("recv_root_listener");
	struct child_error ce;
	bool setup_err = setup_failed(ln.err[0], -1, listener, &pl.seccomp, rep, &ce);
	phase_mark("wait_exec");
	if (setup_err) {
		waitpid(pid, NULL, 0);
		if (r->may_fall_back && host_refused(&ce)) {
			/* 9. The host refused the namespace jail: nothing of the
			 *    command ran, and auto falls back. */
			_cleanup_free_ char *what = xstrcat3(
				ce.step == CHILD_STEP_NETLINK ? "netlink" : mount_step_name((enum mount_step)ce.mount_step), " '",
				ce.path);
			_cleanup_free_ char *head = xstrcat3("the namespace jail was refused: ", what, "'");
			set_fallback(rep, head, ce.err);
			status = RUN_FALLBACK;
			goto out;
		}
		say_child_error(&ce, p);
		status = ce.step != CHILD_STEP_EXEC ? EXIT_STOCKADE : exit_exec_failed(ce.err);
		goto out;
	}
	if (failed) {
		log_error("the command's process ended before it was confined");
		kill_and_reap(pid);
		goto out;
	}
	unsigned long long exec_us = now_usec();
	rep->setup_us = exec_us - r->start_us;
	/* 10. Serve the listener, forward signals, wait for init; it passed
	 *     on the command's own status before it went, having killed
	 *     everything the command left. */
	if (listener >= 0)
		seccomp_listener_sync(listener);
	bound = notify_bound_handoffs(&pl, p);
	struct watch w = { .policy = p, .workspace = p->workspace, .bound = bound };
	/* network allow: the relay answers the responder. */
	allowing_take_responder(&al, &responder);
	struct process pr = { .pid = pid, .own_pgrp = c.own_pgrp, .via_init = true, .listener = TAKE_FD(listener),
			      .responder = responder, .outside = outside, .refusals = refusals, .forward = fwd.fw,
			      .allowing = &al, .watch = &w, .term = &term, .init_sock = ln.sock[0], .init_status = -1 };
	net_source = source_text(&p->net_source);
	pr.net_source = net_source;
	if (r->holder) {
		/* the jail built: nothing of it holds the watch */
		run_watch_guard(r);
		holder_ready(r->holder, r, &pl.places, zs[0], "namespaces");
		pr.holder = r->holder;
	}
	terminal_start(&term);
	phase_mark("before_watch");
	bool broken = false;
	int st = wait_command(&sg, &pr, &pl.seccomp, rep, &broken);
	phase_mark("watch");
	/* init's own end, unless watch reaped it: waited for where its
	 * groups are removed, else let go (reap_init). */
	if (st == -1)
		unreaped = pid;
	if (pr.listener >= 0)
		close(pr.listener);
	/* The command's status, unless watch has read it already; a report
	 * of a stop that came last is passed over. */
	while (pr.init_sock >= 0 && pr.init_status == -1) {
		int v;
		size_t n = 0;
		if (read_all(ln.sock[0], &v, sizeof(v), &n) < 0 || n != sizeof(v))
			break;
		if (v != INIT_REPORT_STOPPED)
			pr.init_status = v;
	}
	if (pr.init_status != -1)
		st = pr.init_status;
	/* Otherwise init itself was killed: its status stands. Every
	 * process of the jail is gone: the rest of the pty's output, and
	 * the user's terminal as it was. */
	terminal_end(&term);
	rep->run_us = now_usec() - exec_us;
	limits_after(&lim, p, rep);
	owed_count_shared(p, rep, &pl, shared);
	allowing_finish(&al);
	rep->supervisor = !broken && !c.no_listener;
	status = st == -1 ? EXIT_STOCKADE : exit_status(st, rep);
	phase_mark("after_watch");
out:
	for (int i = 0; i < 2; i++)
		if (zs[i] >= 0)
			close(zs[i]);
	/* Their last close waits for a grace period: the keeper's at its
	 * end, or else a child's forked for it (the packet sockets), or
	 * stockade's own (the run's detached tmpfs, some 0.2 ms). */
	int held[3];
	size_t n_held = 0;
	if (outside >= 0)
		held[n_held++] = outside;
	if (refusals >= 0)
		held[n_held++] = refusals;
	if (shared >= 0)
		held[n_held++] = shared;
	if (n_held && keeper_hold(&r->keeper, held, n_held) == 0)
		outside = refusals = shared = -1;
	netns_outside_release(outside, refusals);
	phase_mark("netns_outside_release");
	allowing_end(&al);
	forwards_end(&fwd);
	terminal_end(&term);
	link_close(&ln);
	signals_restore(&sg);
	if (unreaped > 0)
		reap_init(unreaped, cg.dir || lim.n_dirs);
	limits_release(&lim);
	phase_mark("limits_release");
	cgroup_release(&cg);
	phase_mark("cgroup_release");
	plan_free(&pl);
	phase_mark("plan_free");
	return status;
}

static int run_landlock(struct run *r)
{
	struct policy *p = r->p;
	struct report *rep = r->rep;
	struct plan pl;
	struct signals sg = { .fd = -1 };
	struct link ln = { { -1, -1 }, { -1, -1 } };
	struct run_cgroup cg = RUN_CGROUP_INIT;
	struct run_limits lim = RUN_LIMITS_INIT;
	_cleanup_close_ int listener = -1, ruleset = -1;
	int zs[2] = { -1, -1 };	/* a session's zygote: the holder's end, its end */
	struct forwards fwd = { .pool.sock = -1, .factory_child = -1 };
	struct allowing al = { 0 };
	struct terminal term;
	pid_t pid = -1;
	int status = EXIT_STOCKADE;
	bool jail = r->backend != BACKEND_NONE;
	plan_init(&pl, r->backend);
	terminal_plan(&term);

	if (jail && r->h->landlock_abi == 0) {
		/* Only where the namespace jail was refused: the first choice
		 * of a backend never makes one Landlock cannot enforce. */
		log_error("nothing on this host can confine the command: %s, and Landlock is not enforced here (%s)",
			  rep->fallback ? rep->fallback : "the namespace jail was refused",
			  strerrorname_np(r->h->landlock_err));
		log_hint("stockade doctor says what this host can enforce; --mode off runs the command without a jail, on purpose");
		goto out;
	}
	/* 1. The places (where the jail's home and tmp go; its view of
	 *    /sys/fs/cgroup once its groups are made, in 2.) and the filter:
	 *    the command's process needs both, and neither depends on the
	 *    tree. */
	(jail ? places_plan_run : places_plan)(p, pl.backend, r->environ, &pl.places);
	phase_mark("places_plan");
	if (plan_filter_said(r, &pl) < 0)
		goto out;
	phase_mark("plan_filter");
	/* 2. A cgroup of the run's own where the host delegates one, so that
	 *    every process of the run can be killed with it, even if stockade
	 *    is; made first, so that the command's process is born in it. */
	if (jail && cgroup_create(&cg) < 0)
		cgroup_release(&cg);
	phase_mark("cgroup_create");
	/*    The limits: in that cgroup where the host gave it the
	 *    controllers, else by the best mechanism here. */
	limits_setup(p, r->backend, cg.dir, &lim);
	phase_mark("limits_setup");
	/*    What the command sees of /sys/fs/cgroup: the groups just made
	 *    for it, where they were made, and its own otherwise. */
	if (jail) {
		char *made[ARRAY_SIZE(lim.dirs) + 1];
		size_t n_made = 0;
		if (cg.dir)
			made[n_made++] = cg.dir;
		for (size_t i = 0; i < lim.n_dirs; i++)
			made[n_made++] = lim.dirs[i];
		places_view_cgroups(&pl.places, p, made, n_made);
	}
	/* 2b. --publish's listeners on the host, before the command starts.
	 *     The supervisor carries them out, and a nested run has none. */
	if (jail && pl.seccomp.no_listener && p->n_grants) {
		log_error("cannot give --publish or --connect here: this run is nested in another jail or sandbox whose "
			  "seccomp filter holds the only listener, and the landlock backend's supervisor needs one");
		log_hint("give --publish or --connect to the outer run instead");
		goto out;
	}
	if (jail && pl.seccomp.no_listener && p->net == NET_ALLOW) {
		log_error("cannot give network allow here: this run is nested in another jail or sandbox whose seccomp "
			  "filter holds the only listener, and the landlock backend's supervisor carries network allow's "
			  "connections");
		log_hint("give --allow to the outer run instead");
		goto out;
	}
	if (forwards_begin(&fwd, p, BACKEND_LANDLOCK) < 0 || (jail && allowing_begin(&al, p, rep) < 0))
		goto out;
	/* 2c. The run's own pty, from the host's devpts, its slave alone
	 *     granted; after the cgroup's watcher and --publish's factory,
	 *     which must not hold it. */
	if (jail && terminal_wanted(&term)) {
		int e = terminal_open_host_pty(&term);
		if ((e == -EACCES || e == -EPERM) && r->h->seccomp_filters > 0) {
			/* Nested in another jail's landlock backend, which grants
			 * its own pty's slave alone, never /dev/ptmx: the terminal
			 * here is that pty, which the outer stockade relays and
			 * keeps apart from the user's. */
			terminal_forgo(&term);
			report_gap(rep, "terminal",
				   "the command holds this run's own terminal descriptors, in a session of its own without "
				   "a controlling terminal: a pty cannot be opened here (/dev/ptmx refused: this run is "
				   "nested in another jail, whose own pty that terminal is)");
		} else if (e < 0) {
			log_error("cannot open a terminal for the command: %s", strerror(-e));
			goto out;
		}
		places_add_terminal(&pl.places, term.slave_path);
	}
	phase_mark("forwards_terminal");
	/* 3. Signals blocked, and the command's process forked: it drops its
	 *    capabilities and loads its filter while stockade makes the rest,
	 *    then waits for go. Orphans of the run come to stockade, which
	 *    kills and reaps them. */
	if (signals_block(&sg) < 0 || link_open(&ln) < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		log_error("cannot set up the command's process: %m");
		goto out;
	}
	struct child c = child_of(p, &pl, &sg, &term);
	if (r->holder && zygote_link(&c, zs) < 0)
		goto out;
	c.err_fd = ln.err[1];
	c.sock = ln.sock[1];
	c.nproc = lim.nproc;
	c.nproc_plus_user = lim.nproc_plus_user;
	c.join_procs = lim.procs;
	c.n_join_procs = lim.n_procs;
	struct kept kept = { .r = r, .c = &c, .ln = &ln, .cg = &cg, .places = &pl.places, .in_keeper = jail };
	int fork_err = 0;
	if (jail) {
		/* The keeper forks it: the run's subreaper, which outlives
		 * stockade. Its pid is read once it is needed (step 8). */
		int report_fd = rep->out_fd;
		struct keeper_duty duty = {
			.start = start_command,
			.command_pgrp = c.own_pgrp,
			.cg = &cg,
			/* the pty's session is the keeper's (terminal.h) */
			.ctty = term.child.controlling && !c.zygote && term.slave >= 0 ? &term.slave : NULL,
			.init_pidfd = -1,
			.keep = &report_fd,
			.n_keep = report_fd >= 0,
			.finish = keeper_finish,
			.data = &kept,
		};
		fork_err = -keeper_begin(&r->keeper, &duty);
		phase_mark("keeper_begin");
	} else {
		pid = start_command(&kept);
		fork_err = pid < 0 ? (int)-pid : 0;
	}
	link_parent_side(&ln);
	if (zs[1] >= 0)
		close(TAKE_FD(zs[1]));
	if (fork_err) {
		log_error("cannot fork: %s", strerror(fork_err));
		goto out;
	}
	/* The slave is the command's alone. A jailed command makes its own
	 * session, which a group made for it here would forbid. */
	if (term.slave >= 0)
		close(TAKE_FD(term.slave));
	if (!jail && c.own_pgrp)
		(void)setpgid(pid, pid);
	/* 4. The guard's baseline, a killed run undone first. */
	if (jail && run_begin_guard(r) < 0)
		goto out;
	phase_mark("guard_begin");
	/* 5. The places made; the fresh home linked to what it may read. */
	if (make_places(r, &pl) < 0)
		goto out;
	phase_mark("places_make");
	/* 6. The Landlock rules, with carve-outs, and their ruleset. */
	if (jail) {
		if (plan_landlock_said(r, &pl) < 0)
			goto out;
		const char *failing = NULL;
		phase_mark("plan_landlock");
		int e = landlock_build(&pl.landlock, &ruleset, &failing);
		if (e < 0) {
			if (failing)
				log_error("cannot apply the Landlock rule on '%s': %s", failing, strerror(-e));
			else
				log_error("cannot create the Landlock ruleset: %s", strerror(-e));
			goto out;
		}
		phase_mark("landlock_build");
	}
	/* 7. What is enforced here; --mode required refuses the rest. */
	if (jail)
		limits_describe(&lim, p, pl.places.run_dir, rep);
	if (say_enforced(r, &pl, cg.dir != NULL) < 0)
		goto out;
	phase_mark("say_enforced");
	/* 8. The listener, loaded long ago while stockade planned: taken
	 *    by its number before the go (the process closes its own once
	 *    it has the go). Then go, with the ruleset: the process
	 *    restricts itself and execs. A go that cannot be sent means the
	 *    process is gone; its error pipe says why; EOF on it says the
	 *    command has exec'd. */
	/* The process says its pid itself (the keeper's vfork says it only
	 * once the process has exec'd). */
	pid_t told = link_read_pid(ln.sock[0]);
	if (jail)
		pid = told;
	if (told < 0) {
		log_error("cannot fork: %s", told == -EPIPE ? "the command's process ended before it started" : strerror((int)-told));
		goto out;
	}
	phase_mark("keeper_command");
	int take_err = jail && !c.no_listener ? child_take_listener(ln.sock[0], pid, &listener) : 0;
	bool failed = take_err < 0;
	if (!failed)
		(void)child_go(ln.sock[0], ruleset);
	else if (take_err != -EPIPE) {
		/* It waits for a go that will not come. */
		kill(pid, SIGKILL);
		log_error("cannot take the seccomp listener from the command's process: %s", strerror(-take_err));
	}
	close(TAKE_FD(ruleset));
	phase_mark("take_listener_go");
	struct child_error ce;
	bool setup_err = setup_failed(ln.err[0], ln.sock[0], listener, &pl.seccomp, rep, &ce);
	phase_mark("wait_exec");
	if (setup_err) {
		say_child_error(&ce, p);
		status = ce.step != CHILD_STEP_EXEC ? EXIT_STOCKADE : exit_exec_failed(ce.err);
		goto out;
	}
	if (failed) {
		if (take_err == -EPIPE)
			log_error("the command's process ended before it was confined");
		goto out;
	}
	/* The keeper's word of it, which comes first on its socket. */
	if (jail && keeper_command(&r->keeper) != pid) {
		log_error("the run's keeper did not start the command's process");
		goto out;
	}
	unsigned long long exec_us = now_usec();
	rep->setup_us = exec_us - r->start_us;
	/* 10. Serve the listener and the connect supervisor (the only thing
	 *     between the command and a socket it was not given), forward
	 *     signals, wait; then kill whatever the command left. */
	if (listener >= 0)
		seccomp_listener_sync(listener);
	struct process pr = {
		.pid = pid,
		.own_pgrp = c.own_pgrp,
		.listener = TAKE_FD(listener),
		.responder = -1,
		.outside = -1,
		.refusals = -1,
		.super = NULL,
		.forward = fwd.fw,
		.allowing = &al,
		.term = &term,
		.init_sock = jail ? r->keeper.sock : -1,
		.init_status = -1,
		.keeper = jail,
	};
	struct watch w = { .policy = p, .run_dir = pl.places.run_dir };
	pr.watch = &w;
	/* The supervisor decides on the policy with the places: a socket in
	 * the jail's own tmp is the run's to make. */
	if (r->holder) {
		/* the command's process started: nothing of it holds the
		 * watch */
		run_watch_guard(r);
		holder_ready(r->holder, r, &pl.places, zs[0], "landlock");
		pr.holder = r->holder;
	}
	if (pr.listener >= 0) {
		pr.super = supervisor_new(p, pr.listener, rep);
		supervisor_set_root(pr.super, r->keeper.pid);
		supervisor_record_tmp(pr.super, keeper_record_fd(&r->keeper));
		/* What the run makes directly in /tmp goes in its own tmp
		 * (one /tmp for all of a session's commands), which the host
		 * never sees; should it not open, the host's, cleaned after. */
		if (pl.places.made && pl.places.tmpdir)
			(void)supervisor_set_tmp(pr.super, pl.places.tmpdir);
		for (size_t i = 0; i < fwd.n_published; i++)
			supervisor_own_listener(pr.super, fwd.published[i]);
	}
	if (pr.super && pl.seccomp.supervise_files)
		supervisor_set_carved(pr.super, pl.landlock.carved);
	allowing_supervise(&al, pr.super);
	terminal_start(&term);
	phase_mark("before_watch");
	bool broken = false;
	int st = wait_command(&sg, &pr, &pl.seccomp, rep, &broken);
	phase_mark("watch");
	/* The keeper killed what the command left before it reported its
	 * status; without one (--mode off), or once it is gone, stockade
	 * does, as their subreaper. */
	if (!jail || pr.init_status == -1)
		keeper_kill_children(&cg, c.own_pgrp ? pid : 0);
	else
		keeper_settled(&r->keeper);
	pid = -1;
	terminal_end(&term);
	rep->run_us = now_usec() - exec_us;
	limits_after(&lim, p, rep);
	if (jail)
		owed_count_run_dir(p, rep, &pl, pr.super);
	if (pr.super) {
		supervisor_drain(pr.super);
		if (!supervisor_whole_run(pr.super))
			broken = true;
		supervisor_free(pr.super);
	}
	if (pr.listener >= 0)
		close(pr.listener);
	allowing_finish(&al);
	rep->supervisor = jail && !broken && !c.no_listener;
	status = st == -1 ? EXIT_STOCKADE : exit_status(st, rep);
	phase_mark("after_watch");
out:
	for (int i = 0; i < 2; i++)
		if (zs[i] >= 0)
			close(zs[i]);
	if (pid > 0)
		kill_and_reap(pid);
	allowing_end(&al);
	forwards_end(&fwd);
	terminal_end(&term);
	link_close(&ln);
	signals_restore(&sg);
	limits_release(&lim);
	phase_mark("limits_release");
	cgroup_release(&cg);
	phase_mark("cgroup_release");
	plan_free(&pl);
	phase_mark("plan_free");
	return status;
}

int run_command(struct run *r)
{
	int status = r->backend == BACKEND_NAMESPACES ? run_namespaces(r) : run_landlock(r);
	if (status == RUN_FALLBACK) {
		/* The host refused the namespace jail: the landlock backend,
		 * said in one line and in the report. */
		/* Inside another jail its filter refuses new user namespaces:
		 * expected, and said as such. */
		bool said = say_note_once(r->p, r->rep, "the namespace jail is not available here (%s%s): using the landlock backend",
					  r->rep->fallback,
					  r->h->seccomp_filters > 0 ? "; this run is nested under a seccomp filter, as in another jail" : "");
		const char *aa = fit_apparmor_hint();
		if (aa && said)
			log_hint("%s", aa);
		report_reset_plan(r->rep);
		/* The namespace jail's keeper had nothing to keep. */
		keeper_end(&r->keeper);
		r->backend = BACKEND_LANDLOCK;
		r->why = "fallback from namespaces";
		r->may_fall_back = false;
		status = run_landlock(r);
	}
	status = run_end_guard(r, status);
	phase_mark("guard_end");
	/* Ended whole: the keeper goes. */
	keeper_end(&r->keeper);
	phase_mark("keeper_end");
	return status;
}
