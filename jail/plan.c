#include "jail/plan.h"

#include "guard/guard.h"
#include "policy/carried.h"

#include "lib/util.h"
#include "netns/netns.h"
#include "forward/forward.h"
#include "supervise/supervise.h"

void plan_init(struct plan *pl, enum backend backend)
{
	*pl = (struct plan){ .backend = backend };
}

int plan_filter(struct plan *pl, const struct policy *p, const struct host *h)
{
	if (pl->backend == BACKEND_NONE)
		return 0;
	seccomp_plan(pl->backend, p->net, h->landlock_abi, &pl->seccomp);
	if (h->listener_busy)
		seccomp_plan_without_listener(&pl->seccomp);
	/* A directory the command may write, carved by Landlock for a
	 * hidden or read-only entry in it: what is new there is made by the
	 * supervisor, which sees every open, creation and removal. Asked of
	 * the rules, before Landlock's plan (the filter is loaded while
	 * stockade makes the rest). */
	pl->seccomp.supervise_files = pl->backend == BACKEND_LANDLOCK && h->landlock_abi >= 3 &&
				      !pl->seccomp.no_listener && seccomp_can_supervise_files() &&
				      landlock_carves_writable(p);
	/* A hidden path the command can meet: each open of one is named
	 * with its rule (jail/notify.c), on either backend; the kernel
	 * refuses it as before. Only in such runs, or a run with -v (not
	 * explain's): every open of the run then takes a trip to stockade. */
	pl->seccomp.name_opens = !pl->seccomp.supervise_files && h->landlock_abi >= 3 &&
				 !pl->seccomp.no_listener && seccomp_can_supervise_files() &&
				 policy_hides_in_reach(p, pl->watch_every_hide);
	return seccomp_build(&pl->seccomp, &pl->bpf);
}

void plan_mounts(struct plan *pl, const struct policy *p)
{
	if (pl->backend != BACKEND_NAMESPACES)
		return;
	mount_plan(p, &pl->mounts);
	if (pl->places.policy_file) {
		_cleanup_free_ char *text = policy_carry(p, pl->backend);
		mount_plan_add_text(&pl->mounts, pl->places.policy_file, text, "default: the run's own policy (stockade why)");
	}
	/* Name lookups go to the jail's own responder (netns/): with no
	 * resolver configured, the C libraries ask 127.0.0.1. */
	if (p->net == NET_LOOPBACK)
		mount_plan_cover(&pl->mounts, NETNS_RESOLV_CONF, "network loopback: the name responder");
	else if (p->net == NET_ALLOW)
		mount_plan_cover(&pl->mounts, NETNS_RESOLV_CONF, "network allow: the name responder");
}

int plan_landlock(struct plan *pl, const struct policy *p, const struct host *h)
{
	if (pl->backend == BACKEND_NONE || h->landlock_abi <= 0)
		return 0;
	/* In the namespace jail the mounts hide and protect; Landlock on top
	 * grants each tree whole, and may list the root, which holds only
	 * mount points. */
	unsigned flags = pl->backend == BACKEND_NAMESPACES ? LANDLOCK_PLAN_NO_CARVE | LANDLOCK_PLAN_LIST_ROOT : 0;
	/* Nested without a supervisor in a network namespace that has only
	 * its loopback (an outer namespace jail's): that namespace keeps TCP
	 * on loopback, and the run's own servers work. */
	if (pl->seccomp.no_listener && h->netns_loopback_only && p->net == NET_LOOPBACK)
		flags |= LANDLOCK_PLAN_TCP_TO_NETNS;
	return landlock_plan(p, h->landlock_abi, flags, &pl->landlock);
}

void plan_free(struct plan *pl)
{
	places_remove(&pl->places);
	mount_plan_free(&pl->mounts);
	landlock_plan_free(&pl->landlock);
	seccomp_plan_free(&pl->seccomp);
	seccomp_bpf_free(&pl->bpf);
	*pl = (struct plan){ 0 };
}

/* The namespace jail's own parts: what jail/ asks of clone. */
static void describe_namespaces(const struct policy *p, struct report *rep)
{
	report_enforced(rep, p->net == NET_ON ? "namespaces: user, mount, pid, ipc, uts, cgroup"
					      : "namespaces: user, mount, pid, ipc, uts, cgroup, net");
	report_enforced(rep, "processes: only the run's own are visible; all die with stockade (pid namespace)");
	report_enforced(rep, "System V IPC and POSIX message queues of the jail's own (ipc namespace)");
	report_enforced(rep, "the host's /tmp: out of sight (a tmpfs of the jail's own)");
	/* Not a gap of this host's: no namespace jail can do more (it has
	 * no supervisor, and Landlock governs no Unix connect), and --mode
	 * required must still run here. stockade.1 and doctor say it. */
	report_enforced(rep, "unix sockets: only socket files inside the trees the run is granted; a socket of the "
			     "host's inside one (--read, --write, the workspace) is reachable, as no supervisor decides");
}

/* The landlock backend's process handling: jail/'s too. */
static void describe_processes(const struct policy *p, bool cgroup, struct report *rep)
{
	report_enforced(rep, cgroup ? "processes: all die with stockade, killed or not (its keeper, the run's subreaper, "
				      "kills them with the run's cgroup and ends the run)"
				    : "processes: all die with stockade, killed or not (its keeper, the run's subreaper, "
				      "kills them and ends the run)");
	if (p->uid != 0)
		report_enforced(rep, "bounding set kept (no CAP_SETPCAP to drop it): no_new_privs keeps exec from gaining anything");
}

/* A nested run: a filter of a parent holds the listener, and this run's
 * filter decides alone what stockade's listener and supervisor would
 * have. What a parent's layer still does is the parent's to say. */
#define NESTED_WHY "a filter this run is nested in (another jail or sandbox) holds the only seccomp listener"

static void describe_no_listener(const struct plan *pl, const struct policy *p, int abi, struct report *rep)
{
	if (pl->backend == BACKEND_NAMESPACES) {
		report_enforced(rep, "a rename over a trust hand-off is refused by its read-only bind, and not named (" NESTED_WHY ")");
		return;
	}
	/* Landlock governs no connect to a socket file (and abstract names
	 * from ABI 6 only): the outer layer's vetting is all there is. */
	report_gap(rep, "unix sockets",
		   abi >= 6 ? "a connect to a socket file anywhere (the Docker socket, an agent's) is not checked by "
			      "stockade, which Landlock does not govern: " NESTED_WHY "; only what the outer layer refuses "
			      "is refused"
			    : "a connect to a socket file anywhere (the Docker socket, an agent's) or to an abstract name is "
			      "not checked by stockade, which Landlock does not govern: " NESTED_WHY "; only what the outer "
			      "layer refuses is refused");
	/* Landlock (ABI 4) refuses the command every TCP bind and connect
	 * in loopback, as ever: the supervisor made them. Without it none is
	 * made, but an outer stockade's supervisor still carries out what
	 * reaches it, by its own run's policy, outside this run's Landlock. */
	if (p->net == NET_LOOPBACK && (pl->landlock.flags & LANDLOCK_PLAN_TCP_TO_NETNS))
		report_gap(rep, "network loopback",
			   "TCP reaches every listener of this network namespace, which has only its loopback (an outer "
			   "jail's: its other servers too), not only the run's own: " NESTED_WHY);
	else if (p->net == NET_LOOPBACK && abi >= 4)
		report_gap(rep, "network loopback",
			   "TCP binds and connects are refused by Landlock, even to the run's own listeners, except those an "
			   "outer stockade's supervisor carries out, by the outer run's policy alone: " NESTED_WHY);
	else if (p->net == NET_LOOPBACK)
		report_gap(rep, "network loopback",
			   "connects and binds are not vetted (Landlock below ABI 4 has no TCP rules): the outer layer's "
			   "network policy alone applies: " NESTED_WHY);
	if (p->net != NET_OFF)
		report_gap(rep, "no squatting", "a bind on a port an outside socket listens on is not refused: " NESTED_WHY);
	report_enforced(rep, "other processes: a limit, priority, scheduler, affinity, I/O priority or pidfd of any "
			     "process but the caller is refused in the filter (no listener to vet it)");
}

/* The landlock backend's directories the command may write that hold a
 * hidden or read-only entry (Landlock carves them): what is new there is
 * the supervisor's to make, or nobody's. */
static void describe_carved(const struct plan *pl, struct report *rep)
{
	if (!pl->landlock.carved || !pl->landlock.carved[0])
		return;
	if (pl->seccomp.supervise_files) {
		report_enforced(rep, "a folder you may write that holds a hidden or read-only entry: what is new there "
				     "(files, folders, renames, removals) is made by the supervisor, which sees every open "
				     "of the run for it; the hidden entry stays refused by Landlock");
		report_gap(rep, "programs made in such a folder",
			   "cannot be run from there: Landlock grants no execute right in a carved folder (a subfolder "
			   "that exists before the run, or the namespace jail, runs them)");
	} else {
		report_gap(rep, "new files beside a hidden or read-only entry",
			   pl->seccomp.no_listener
				   ? "nothing new can be made in a folder you may write that holds one: Landlock carves it, "
				     "and no supervisor can make them (" NESTED_WHY ")"
				   : "nothing new can be made in a folder you may write that holds one: Landlock carves it, "
				     "and below Landlock ABI 3 the supervisor does not make them");
	}
}

void plan_describe(const struct plan *pl, const struct policy *p, const struct host *h, bool cgroup,
		   struct report *rep)
{
	rep->backend = backend_name(pl->backend);
	rep->network = net_mode_name(p->net);
	if (pl->backend == BACKEND_NONE) {
		report_gap(rep, "everything", "--mode off: the command runs without a jail");
		return;
	}
	unsigned flags = pl->backend == BACKEND_NAMESPACES ? LANDLOCK_PLAN_NO_CARVE : 0;
	guard_describe(pl->backend == BACKEND_NAMESPACES, rep);
	if (pl->backend == BACKEND_NAMESPACES) {
		describe_namespaces(p, rep);
		mount_describe(rep);
		landlock_describe(h->landlock_abi, flags, p->net, rep);
		netns_describe(p->net, rep);
	} else {
		landlock_describe(h->landlock_abi, flags, p->net, rep);
		if (!pl->seccomp.no_listener)
			supervise_describe(p->net, h->yama < 2, rep);
		describe_processes(p, cgroup, rep);
		describe_carved(pl, rep);
	}
	if (pl->seccomp.no_listener)
		describe_no_listener(pl, p, h->landlock_abi, rep);
	relay_describe(p, pl->backend, rep);
	seccomp_describe(&pl->seccomp, rep);
	if (pl->seccomp.name_opens)
		report_enforced(rep, "hidden paths the command can reach: an open of one is named with its rule (every "
				     "open of the run goes to stockade first, which names it and lets the kernel refuse it)");
	report_enforced(rep, "terminal: the command has a session of its own, and a pty of its own where stdin, stdout "
			     "or stderr is a terminal; the user's terminal is never one of its descriptors");
	report_enforced(rep, "capabilities dropped, no_new_privs");
	report_enforced(rep, "environment: credentials and agent sockets removed");
	report_enforced(rep, pl->backend == BACKEND_NAMESPACES
				     ? "trust hand-offs: bound read-only where they exist, kept by the guard otherwise"
				     : "trust hand-offs: kept by the guard, changes undone after the run");
}
