/* A session's holder: the stockade process that holds one jail for many
 * commands (stockade.1, SESSIONS). It is an ordinary run whose command is
 * the zygote (zygote.h), and whose loop (run.c's watch) also serves the
 * session's control socket: each client's "exec" is checked (its working
 * directory inside the workspace, its environment scrubbed as the
 * session's policy says), sent to the zygote with the client's own
 * descriptors, and answered "started" and then "exit" once the guard has
 * undone what the jail planted meanwhile. */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

struct run;
struct places;
struct holder;

/* What `session start` decided: the session's name, its control socket
 * (listening already, or -1), and where it tells its starter that it is
 * ready (a pipe; -1: nobody waits). */
struct holder_setup {
	const char *id;
	const char *sock_path;
	const char *info_path;
	const char *log_path;	/* where the holder's stderr goes */
	int listen_fd;
	int ready_fd;
	unsigned idle_s;	/* 0: never idle out */
};

struct holder *holder_new(const struct holder_setup *s);
void holder_free(struct holder *h);

/* The jail is built and its zygote ready (zsock: the holder's end of its
 * socket): the starter is told (with how much of the log it says), the
 * info file written. */
void holder_ready(struct holder *h, struct run *r, const struct places *pl, int zsock, const char *backend);

/* the socket, the zygote, 128 clients, and the guard's 3 watches */
#define HOLDER_POLLFDS 133
size_t holder_pollfds(const struct holder *h, struct pollfd *fds, size_t max);
void holder_serve(struct holder *h, const struct pollfd *fds, size_t n);
/* Milliseconds until the idle timeout, or -1. */
int holder_timeout_ms(const struct holder *h);
/* Asked to stop, or idle: the jail goes. */
bool holder_done(const struct holder *h);
/* After the run's end: the files removed, a stop answered. */
void holder_finish(struct holder *h);
/* The keeper's, stockade gone: the files removed. */
void holder_forget_files(const struct holder *h);
