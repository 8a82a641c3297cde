/* The connect supervisor of the landlock backend. Landlock governs
 * neither Unix sockets nor (below what the policy needs) loopback, so
 * every connect, bind and listen of the command comes to stockade by
 * seccomp user notification. stockade copies the address once, decides on
 * its copy, takes the socket with pidfd_getfd, carries the call out itself
 * and answers with the result: the kernel never reads the address again,
 * so a second thread cannot swap it after the check. No decision is ever
 * answered with CONTINUE. */
#pragma once

#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>

#include "policy/policy.h"
#include "policy/report.h"

struct supervisor;

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
/* Answers whatever is still in progress (the command is gone). */
void supervisor_drain(struct supervisor *sv);
/* False once the supervisor could not decide something it had to. */
bool supervisor_whole_run(const struct supervisor *sv);
