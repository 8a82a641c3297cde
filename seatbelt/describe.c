/* What a run under sandbox-exec enforces and what it leaves out: the
 * lines explain prints, doctor says on macOS and --report writes. */
#include "seatbelt/seatbelt.h"

void seatbelt_describe(const struct policy *p, struct report *rep)
{
	rep->backend = backend_name(BACKEND_SEATBELT);
	rep->network = net_mode_name(p->net);
	report_enforced(rep, "seatbelt: deny by default for file reads and writes, exec, Mach services, IPC, sysctl writes and the network");
	report_enforced(rep, "path rules: the deepest wins; hide refuses reading, running, writing, and moving any folder above it");
	report_enforced(rep, "trust hand-offs: writes refused by the profile, existing or not");
	report_enforced(rep, "Unix sockets (the Docker socket, ssh-agent) reached only where a path rule grants them");
	switch (p->net) {
	case NET_OFF:
		report_enforced(rep, "network off: no address can be bound or reached");
		break;
	case NET_LOOPBACK:
		report_enforced(rep, "network loopback: binds and connects on localhost only; no name lookups");
		report_gap(rep, "outside services on loopback",
			   "Seatbelt's ip filter knows localhost, not whose listener it is: a local database on 127.0.0.1 is reachable");
		break;
	case NET_ALLOW:
		report_enforced(rep, "network allow, as loopback: binds and connects on localhost only; no name lookups");
		report_gap(rep, "allowed names",
			   "not reached on macOS: the seatbelt backend has no relay to check the name a connection carries "
			   "(stockade.1, NETWORK)");
		break;
	case NET_ON:
		break;
	}
	report_enforced(rep, "signals and process information: the run's own processes only");
	report_enforced(rep, "environment: credentials and agent sockets removed");
	report_gap(rep, "no_new_privs",
		   "macOS has none: a setuid program runs with its owner's rights, inside the same profile");
	report_gap(rep, "processes left behind",
		   "the command's process group is killed at the end; a process that made a session of its own outlives the run");
	report_gap(rep, "trust hand-offs after the run", "the guard does not run on macOS: nothing is undone or set aside, as the profile refused the writes");
	report_gap(rep, "other processes' names",
		   "kern.proc.pid.N answers for any pid: a process's name, owner and parent (never its arguments) can be read");
	report_gap(rep, "terminal", "the command shares the caller's terminal: no pty of its own on macOS yet");
	report_gap(rep, "limits", "no cgroup: processes and memory are not bounded");
	report_gap(rep, "metadata of hidden paths' folders",
		   "the folders above each granted path can be stat()ed, so that realpath works");
	report_gap(rep, "verified", "sandbox-exec has not run this profile in stockade's tests: they evaluate it on Linux");
}
