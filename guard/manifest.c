/* The manifest: the baseline on disk. */
#include <fcntl.h>
#include <sys/stat.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

/* ---------------------------------------------------------------------
 * The manifest: the baseline on disk. Binary and length-prefixed, so a
 * file name may hold any byte; a checksum at the end, so a torn write is
 * refused rather than believed.
 * ------------------------------------------------------------------ */

#define MANIFEST_VERSION 3
#define NO_STRING UINT32_MAX

void wbuf_put(struct wbuf *w, const void *data, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2 + 256;
		w->p = xrealloc(w->p, w->cap);
	}
	memcpy(w->p + w->n, data, n);
	w->n += n;
}

void wb_u8(struct wbuf *w, uint8_t v)
{
	wbuf_put(w, &v, 1);
}

void wb_u32(struct wbuf *w, uint32_t v)
{
	wbuf_put(w, &v, sizeof(v));
}

void wb_u64(struct wbuf *w, uint64_t v)
{
	wbuf_put(w, &v, sizeof(v));
}

void wb_str(struct wbuf *w, const char *s)
{
	if (!s) {
		wb_u32(w, NO_STRING);
		return;
	}
	size_t n = strlen(s);
	wb_u32(w, (uint32_t)n);
	wbuf_put(w, s, n);
}

static bool rb_get(struct rbuf *r, void *out, size_t n)
{
	if (r->bad || r->n - r->off < n) {
		r->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, r->p + r->off, n);
	r->off += n;
	return true;
}

uint8_t rb_u8(struct rbuf *r)
{
	uint8_t v;
	rb_get(r, &v, sizeof(v));
	return v;
}

uint32_t rb_u32(struct rbuf *r)
{
	uint32_t v;
	rb_get(r, &v, sizeof(v));
	return v;
}

uint64_t rb_u64(struct rbuf *r)
{
	uint64_t v;
	rb_get(r, &v, sizeof(v));
	return v;
}

char *rb_str(struct rbuf *r)
{
	uint32_t n = rb_u32(r);
	if (r->bad || n == NO_STRING)
		return NULL;
	if (r->n - r->off < n) {
		r->bad = true;
		return NULL;
	}
	const char *s = r->p + r->off;
	r->off += n;
	if (memchr(s, '\0', n)) {
		r->bad = true;
		return NULL;
	}
	return xstrndup(s, n);
}

static bool object_name_valid(const char *s)
{
	if (str_empty(s))
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || *s == '-'))
			return false;
	return true;
}

void manifest_render(const struct baseline *b, struct wbuf *w)
{
	wbuf_put(w, MANIFEST_MAGIC, strlen(MANIFEST_MAGIC));
	wb_u32(w, MANIFEST_VERSION);
	wb_str(w, b->workspace);
	wb_u64(w, (uint64_t)b->taken_ns);
	wb_u32(w, (uint32_t)b->roots.n);
	for (size_t i = 0; i < b->roots.n; i++) {
		wb_u8(w, (uint8_t)b->roots.v[i].kind);
		wb_str(w, b->roots.v[i].path);
	}
	wb_u64(w, b->n);
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];
		wb_str(w, e->path);
		wb_u8(w, e->type);
		wb_u8(w, e->flags);
		wb_u32(w, e->mode);
		wb_u64(w, e->fp.dev);
		wb_u64(w, e->fp.ino);
		wb_u64(w, e->fp.size);
		wb_u64(w, (uint64_t)e->fp.mtime_ns);
		wb_u64(w, (uint64_t)e->fp.ctime_ns);
		wb_u64(w, e->hash);
		wb_str(w, e->target);
		wb_str(w, e->object);
	}
	wb_u64(w, state_sum(w->p, w->n));
}

/* What follows the magic, the checksum already checked. */
int manifest_parse(struct rbuf r, struct baseline *ret)
{
	if (rb_u32(&r) != MANIFEST_VERSION)
		return -EBADMSG;

	struct baseline b = { 0 };
	int ret_r = -EBADMSG;
	b.workspace = rb_str(&r);
	b.taken_ns = (int64_t)rb_u64(&r);
	uint32_t nroots = rb_u32(&r);
	if (r.bad || !b.workspace || nroots > r.n)
		goto out_free;
	for (uint32_t i = 0; i < nroots; i++) {
		uint8_t kind = rb_u8(&r);
		char *path = rb_str(&r);
		if (r.bad || !path || handoff_relpath_shape(path) < 0 || kind > HANDOFF_SEQUENCE) {
			free(path);
			goto out_free;
		}
		handoffs_add(&b.roots, path, (enum handoff_kind)kind);
	}
	uint64_t nentries = rb_u64(&r);
	if (r.bad || nentries > r.n)
		goto out_free;
	for (uint64_t i = 0; i < nentries; i++) {
		struct entry *e = baseline_push(&b);
		e->path = rb_str(&r);
		e->type = rb_u8(&r);
		e->flags = rb_u8(&r);
		e->mode = rb_u32(&r);
		e->fp.dev = rb_u64(&r);
		e->fp.ino = rb_u64(&r);
		e->fp.size = rb_u64(&r);
		e->fp.mtime_ns = (int64_t)rb_u64(&r);
		e->fp.ctime_ns = (int64_t)rb_u64(&r);
		e->hash = rb_u64(&r);
		e->target = rb_str(&r);
		e->object = rb_str(&r);
		if (r.bad || !e->path || handoff_relpath_shape(e->path) < 0 || e->type < ENTRY_REG || e->type > ENTRY_OTHER ||
		    entry_type_of(e->mode) != e->type || (e->type == ENTRY_LNK && !e->target) ||
		    ((e->flags & ENTRY_COPIED) && (!object_name_valid(e->object) || e->type != ENTRY_REG)))
			goto out_free;
	}
	if (r.off != r.n)
		goto out_free;
	for (size_t i = 1; i < b.n; i++)
		if (path_cmp(b.v[i - 1].path, b.v[i].path) >= 0)
			goto out_free;
	*ret = b;
	b = (struct baseline){ 0 };
	ret_r = 0;
out_free:
	baseline_free(&b);
	return ret_r;
}

/* The manifest parsed, and its bytes as they are on disk in *ret_raw,
 * for manifest_current(). */
int manifest_load(int dirfd, struct baseline *ret, struct wbuf *ret_raw)
{
	struct rbuf r;
	int e = state_file_load(dirfd, "manifest", MANIFEST_MAGIC, ret_raw, &r);
	if (e == 0)
		e = manifest_parse(r, ret);
	if (e < 0) {
		free(ret_raw->p);
		*ret_raw = (struct wbuf){ 0 };
	}
	return e;
}

/* Whether next is the baseline the manifest already holds, so that
 * nothing need be written: the same bytes but for the time it was taken,
 * which is then left as it was. An older time only makes more entries
 * racy (compared by content rather than trusted by fingerprint); when an
 * entry racy then is not racy now, the manifest is written after all, so
 * that the compare is not repeated run after run. */
bool manifest_current(const struct baseline *prev, const struct wbuf *raw, struct baseline *next)
{
	int64_t taken = next->taken_ns;
	next->taken_ns = prev->taken_ns;
	struct wbuf w = { 0 };
	manifest_render(next, &w);
	bool same = w.n == raw->n && memcmp(w.p, raw->p, w.n) == 0;
	free(w.p);
	for (size_t i = 0; same && i < next->n; i++) {
		const struct entry *e = &next->v[i];
		if (e->type == ENTRY_REG && entry_racy(prev, e) && e->fp.ctime_ns + RACY_NS < taken)
			same = false;
	}
	if (!same)
		next->taken_ns = taken;
	return same;
}

uint64_t state_sum(const void *data, size_t n)
{
	/* FNV-1a over words, then the tail: eight times fewer rounds than
	 * over bytes, for an index of a large tree read at every run */
	const unsigned char *p = data;
	uint64_t h = FNV_INIT;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	return fnv1a(h, p, n);
}

int state_file_store(int dirfd, const char *name, const struct wbuf *w)
{
	_cleanup_free_ char *tmp = xasprintf("%s.tmp-%d", name, (int)getpid());
	unlinkat(dirfd, tmp, 0);
	_cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, w->p, w->n);
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}

int state_file_load(int dirfd, const char *name, const char *magic, struct wbuf *ret_raw, struct rbuf *ret_r)
{
	*ret_raw = (struct wbuf){ 0 };
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADMSG;
	_cleanup_free_ char *data = xmalloc((size_t)st.st_size + 1);
	size_t len;
	int r = read_all(fd, data, (size_t)st.st_size, &len);
	if (r < 0)
		return r;
	size_t m = strlen(magic);
	uint64_t sum;
	if (len != (size_t)st.st_size || len < m + sizeof(sum) || memcmp(data, magic, m) != 0)
		return -EBADMSG;
	memcpy(&sum, data + len - sizeof(sum), sizeof(sum));
	if (state_sum(data, len - sizeof(sum)) != sum)
		return -EBADMSG;
	*ret_r = (struct rbuf){ .p = data, .n = len - sizeof(sum), .off = m };
	*ret_raw = (struct wbuf){ .p = TAKE_PTR(data), .n = len, .cap = len + 1 };
	return 0;
}

int manifest_store(int dirfd, const struct baseline *b)
{
	struct wbuf w = { 0 };
	manifest_render(b, &w);
	int r = state_file_store(dirfd, "manifest", &w);
	free(w.p);
	return r;
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Objects the new manifest does not name, and copies left half-written
 * by a killed run. */
void objects_collect(struct objdir *od, const struct baseline *b)
{
	/* not made here: none yet, nothing to collect */
	_cleanup_close_ int fd = od->fd >= 0 ? openat(od->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
					     : openat(od->dirfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_strv_ char **names = NULL;
	if (fd < 0 || dir_list(fd, &names) < 0)
		return;
	size_t n = 0;
	_cleanup_free_ const char **used = xcalloc(b->n + 1, sizeof(char *));
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].object)
			used[n++] = b->v[i].object;
	qsort(used, n, sizeof(char *), strcmp_ptr);
	for (size_t i = 0; names[i]; i++) {
		const char *key = names[i];
		if (!bsearch(&key, used, n, sizeof(char *), strcmp_ptr))
			unlinkat(fd, names[i], 0);
	}
}

