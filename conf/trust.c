/* Trust, as direnv's allow: a record per path, named by the hash of the
 * path, holding the hash of the exact contents trusted. An edited file
 * has another hash and needs trusting again; a file moved elsewhere too,
 * for its relative paths now name other places. The records live in the
 * state directory, which no jail can write (policy/build.c refuses a run
 * that could). */
#include "conf/conf.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/sha256.h"
#include "lib/util.h"

static char *record_path(const char *state_dir, const char *path)
{
	char name[65];
	sha256_hex(path, strlen(path), name);
	_cleanup_free_ char *dir = path_join(state_dir, "trust");
	return path_join(dir, name);
}

/* "HASH PATH\n": the hash and the path of one record. */
static int read_record(int dirfd, const char *name, struct conf_trusted *ret)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_file_at(dirfd, name, 8192, &text, &len);
	if (r < 0)
		return r;
	if (len < 67 || text[64] != ' ' || text[len - 1] != '\n' || memchr(text, '\0', len))
		return -EINVAL;
	for (size_t i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", text[i]))
			return -EINVAL;
	memcpy(ret->hash, text, 64);
	ret->hash[64] = '\0';
	ret->path = xstrndup(text + 65, len - 66);
	/* a record under another path's name is no record of it */
	char want[65];
	sha256_hex(ret->path, strlen(ret->path), want);
	if (!streq(want, name)) {
		free(ret->path);
		ret->path = NULL;
		return -EINVAL;
	}
	return 0;
}

bool conf_trust_check(const char *state_dir, struct conf_file *f)
{
	if (!state_dir)
		return false;
	_cleanup_free_ char *dir = path_join(state_dir, "trust");
	char name[65];
	sha256_hex(f->path, strlen(f->path), name);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return false;
	struct conf_trusted t = { 0 };
	if (read_record(dfd, name, &t) < 0)
		return false;
	bool same = streq(t.path, f->path) && streq(t.hash, conf_file_hash(f));
	free(t.path);
	return same;
}

int conf_trust_record(const char *state_dir, struct conf_file *f)
{
	_cleanup_free_ char *dir = path_join(state_dir, "trust");
	int r = mkdir_private(dir, getuid());
	if (r < 0)
		return r;
	_cleanup_free_ char *path = record_path(state_dir, f->path);
	_cleanup_free_ char *tmp = xstrcat3(path, ".new", "");
	_cleanup_free_ char *text = xasprintf("%s %s\n", conf_file_hash(f), f->path);
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	r = write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

int conf_trust_revoke(const char *state_dir, const char *path)
{
	_cleanup_free_ char *rec = record_path(state_dir, path);
	return unlink(rec) < 0 ? -errno : 0;
}

static int trusted_cmp(const void *a, const void *b)
{
	return strcmp(((const struct conf_trusted *)a)->path, ((const struct conf_trusted *)b)->path);
}

int conf_trust_list(const char *state_dir, struct conf_trusted **ret, size_t *ret_n)
{
	*ret = NULL;
	*ret_n = 0;
	_cleanup_free_ char *dir = path_join(state_dir, "trust");
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	_cleanup_strv_ char **names = NULL;
	int r = dir_list(dfd, &names);
	if (r < 0)
		return r;
	struct conf_trusted *v = NULL;
	size_t n = 0;
	for (size_t i = 0; names[i]; i++) {
		struct conf_trusted t = { 0 };
		if (strlen(names[i]) != 64 || read_record(dfd, names[i], &t) < 0)
			continue;	/* not a record: a half-written ".new", something else */
		v = xgrow(v, n, sizeof(*v));
		v[n++] = t;
	}
	if (n)
		qsort(v, n, sizeof(*v), trusted_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

void conf_trusted_free(struct conf_trusted *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}
