#include "lib/pump.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A pipe starts at its own size (64 KiB: nothing to allocate for a short
 * request) and grows once a direction fills it (a bulk transfer moves a
 * megabyte a splice). */
#define PUMP_PIPE (64 * 1024)
#define PUMP_PIPE_BULK (1024 * 1024)

int pump_open(struct pump *d, struct pump_spares *spares)
{
	if (spares && spares->n) {
		size_t k = --spares->n;
		*d = (struct pump){ .pipe = { spares->pipe[k][0], spares->pipe[k][1] }, .cap = spares->cap[k] };
		return 0;
	}
	*d = (struct pump){ .pipe = { -1, -1 }, .cap = PUMP_PIPE };
	if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

void pump_close(struct pump *d, struct pump_spares *spares)
{
	if (d->pipe[0] >= 0 && !d->queued && spares && spares->n < PUMP_SPARES) {
		spares->pipe[spares->n][0] = d->pipe[0];
		spares->pipe[spares->n][1] = d->pipe[1];
		spares->cap[spares->n++] = d->cap;
		d->pipe[0] = d->pipe[1] = -1;
		return;
	}
	for (int i = 0; i < 2; i++)
		if (d->pipe[i] >= 0)
			close(d->pipe[i]);
	d->pipe[0] = d->pipe[1] = -1;
}

void pump_spares_free(struct pump_spares *spares)
{
	for (size_t i = 0; i < spares->n; i++) {
		close(spares->pipe[i][0]);
		close(spares->pipe[i][1]);
	}
	spares->n = 0;
}

/* A read or a write shorter than asked is not tried again at once (it
 * would answer EAGAIN: poll says when there is more), except to find the
 * end a peer that shut down (POLLRDHUP) has after its bytes. */
bool pump_move(struct pump *d, int src, int dst, short src_ready, bool dst_ready)
{
	while ((src_ready & PUMP_READY_IN) && !d->eof && d->queued < d->cap) {
		size_t want = d->cap - d->queued;
		ssize_t n = splice(src, NULL, d->pipe[1], NULL, want, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0) {
			d->queued += (size_t)n;
			dst_ready = true;
			if (d->queued == d->cap && d->cap < PUMP_PIPE_BULK) {
				int size = fcntl(d->pipe[1], F_SETPIPE_SZ, PUMP_PIPE_BULK);
				if (size > 0)
					d->cap = (size_t)size;
			}
			if ((size_t)n < want && !(src_ready & (POLLRDHUP | POLLHUP | POLLERR)))
				break;
			continue;
		}
		if (n == 0)
			d->eof = true;
		else if (errno != EAGAIN && errno != EINTR)
			return false;
		break;
	}
	while (dst_ready && d->queued) {
		size_t want = d->queued;
		ssize_t n = splice(d->pipe[0], NULL, dst, NULL, want, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0) {
			d->queued -= (size_t)n;
			d->moved += (uint64_t)n;
			if ((size_t)n < want)
				break;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		return false;
	}
	return true;
}

void pump_pass_end(struct pump *d, const struct pump *other, int dst)
{
	if (!d->eof || d->queued || d->shut)
		return;
	/* With nothing unread on either socket, closing both sends the
	 * same FIN, and one call is saved. */
	if (!(other->eof && !other->queued && other->shut))
		(void)shutdown(dst, SHUT_WR);
	d->shut = true;
}

short pump_src_events(const struct pump *d)
{
	return !d->eof && d->queued < d->cap ? POLLIN | POLLRDHUP : 0;
}

short pump_dst_events(const struct pump *d)
{
	return d->queued ? POLLOUT : 0;
}
