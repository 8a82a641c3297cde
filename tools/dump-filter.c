/* Writes the seccomp filter stockade loads for BACKEND (namespaces or
 * landlock) and NET (off, loopback, on) to standard output as raw BPF, for
 * make bench to hand bwrap (--seccomp FD): the peer then loads the same
 * filter the jail does. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "seccomp/seccomp.h"
#include "lib/fd.h"
#include "lib/util.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: dump-filter namespaces|landlock off|loopback|on\n");
		return 2;
	}
	enum backend backend = streq(argv[1], "landlock") ? BACKEND_LANDLOCK : BACKEND_NAMESPACES;
	enum net_mode net = streq(argv[2], "off") ? NET_OFF : streq(argv[2], "on") ? NET_ON : NET_LOOPBACK;
	struct seccomp_plan plan;
	struct sock_fprog prog;
	seccomp_plan(backend, net, 7, &plan);
	int r = seccomp_build(&plan, &prog);
	if (r < 0) {
		fprintf(stderr, "dump-filter: %s\n", strerror(-r));
		return 1;
	}
	r = write_all(STDOUT_FILENO, prog.filter, prog.len * sizeof(prog.filter[0]));
	seccomp_bpf_free(&prog);
	seccomp_plan_free(&plan);
	return r < 0;
}
