/* One direction of a relayed connection: bytes moved from one socket to
 * another with splice(2) through a pipe, never copied through the
 * process's memory, never waited on (the caller polls). The --publish and
 * --connect forwards and network allow's relay both move their bytes
 * here. */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What poll said of a socket that a pump reads from, or writes to. */
#define PUMP_READY_IN (POLLIN | POLLRDHUP | POLLHUP | POLLERR)
#define PUMP_READY_OUT (POLLOUT | POLLHUP | POLLERR)

struct pump {
	int pipe[2];
	size_t queued;		/* bytes in the pipe */
	size_t cap;		/* what it holds */
	bool eof;		/* the source said it is done */
	bool shut;		/* and the destination was told */
	uint64_t moved;		/* bytes delivered to the destination */
};

/* Empty pipes of connections that ended, for the next: a short
 * connection (a request, a response) then makes none. */
#define PUMP_SPARES 8
struct pump_spares {
	int pipe[PUMP_SPARES][2];
	size_t cap[PUMP_SPARES];
	size_t n;
};

/* A direction with a pipe (a spare one where there is): 0 or -errno. */
int pump_open(struct pump *d, struct pump_spares *spares);
/* Its pipe back to the spares when empty and there is room; else closed. */
void pump_close(struct pump *d, struct pump_spares *spares);
void pump_spares_free(struct pump_spares *spares);
/* Moves what it can from src through d to dst, asking only the sockets
 * poll woke for (src_ready: what poll said of src; dst_ready: dst takes
 * more): false when the connection is broken. */
bool pump_move(struct pump *d, int src, int dst, short src_ready, bool dst_ready);
/* A direction that has reached its end, passed on: dst is told
 * (shutdown), unless the other direction is done too, when closing both
 * sockets tells it. */
void pump_pass_end(struct pump *d, const struct pump *other, int dst);
/* What poll is to wait for on a direction's source and destination. */
short pump_src_events(const struct pump *d);
short pump_dst_events(const struct pump *d);
