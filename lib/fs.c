#include "lib/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

int path_canonical(const char *path, char **ret)
{
#ifdef __linux__
	/* Most paths have no symlink on the way: one openat2 that refuses
	 * symlinks proves it, where realpath(3) would readlink every
	 * component. Without symlinks, ".." means what it says. */
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	if (path[0] == '/') {
		int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
		if (fd >= 0) {
			close(fd);
			*ret = path_normalize(path);
			return 0;
		}
		if (errno != ELOOP && errno != EXDEV && errno != ENOSYS && errno != EPERM)
			return -errno;
		/* The path itself a symlink (/bin -> usr/bin on merged-usr
		 * systems, /usr/local/cuda -> cuda-13.0) under a parent with
		 * none: follow that one link and try again. */
		_cleanup_free_ char *parent = errno == ELOOP ? path_normalize(path) : NULL;
		/* Only a path already in normal form: a ".." after a symlink
		 * means something else than it reads. */
		if (parent && streq(parent, path)) {
			char target[PATH_MAX];
			char *slash = strrchr(parent, '/');
			ssize_t n = readlink(path, target, sizeof(target) - 1);
			if (n > 0 && slash) {
				target[n] = '\0';
				*slash = '\0';
				int pfd = (int)syscall(SYS_openat2, AT_FDCWD, *parent ? parent : "/", &how, sizeof(how));
				if (pfd >= 0) {
					close(pfd);
					_cleanup_free_ char *next =
						target[0] == '/' ? xstrdup(target) : path_join(*parent ? parent : "/", target);
					static __thread int depth;
					if (depth < 40) {
						depth++;
						int r = path_canonical(next, ret);
						depth--;
						return r;
					}
				}
			}
		}
	}
#endif
	char *r = realpath(path, NULL);
	if (!r)
		return -errno;
	*ret = r;
	return 0;
}

#ifdef __linux__
/* The steps of a path with no symlink on the way: its prefixes. */
static void walk_lexically(const char *path, path_step_fn step, void *data)
{
	_cleanup_free_ char *dir = xstrdup("/");
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *end = str_chrnul(p, '/');
		_cleanup_free_ char *name = xstrndup(p, (size_t)(end - p));
		step(data, dir, name, NULL);
		char *next = path_join(dir, name);
		free(dir);
		dir = next;
		p = end;
	}
}
#endif

int path_walk(const char *path, path_step_fn step, void *data, char **ret, bool *ret_missing)
{
	*ret = NULL;
	*ret_missing = false;
	if (path[0] != '/')
		return -EINVAL;
	_cleanup_free_ char *norm = path_normalize(path);
#ifdef __linux__
	if (streq(norm, path)) {
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		int fd = (int)syscall(SYS_openat2, AT_FDCWD, norm, &how, sizeof(how));
		if (fd >= 0) {
			close(fd);
			walk_lexically(norm, step, data);
			*ret = TAKE_PTR(norm);
			return 0;
		}
	}
#endif
	/* what is left to resolve, after the directory reached so far */
	_cleanup_free_ char *rest = xstrdup(path);
	_cleanup_free_ char *cur = xstrdup("/");
	unsigned links = 0;
	for (;;) {
		char *p = rest;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = (char *)str_chrnul(p, '/');
		_cleanup_free_ char *name = xstrndup(p, (size_t)(end - p));
		_cleanup_free_ char *after = xstrdup(end);
		free(rest);
		rest = TAKE_PTR(after);
		if (streq(name, "."))
			continue;
		if (streq(name, "..")) {
			/* cur is canonical: its parent is where ".." leads */
			char *up = path_parent(cur, NULL);
			if (up) {
				free(cur);
				cur = up;
			}
			continue;
		}
		_cleanup_free_ char *full = path_join(cur, name);
		struct stat st;
		if (lstat(full, &st) < 0) {
			if (errno != ENOENT)
				return -errno;
			step(data, cur, name, NULL);
			_cleanup_free_ char *joined = path_join(full, rest);
			*ret = path_normalize(joined);
			*ret_missing = true;
			return 0;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlink(full, target, sizeof(target) - 1);
			if (n < 0)
				return -errno;
			target[n] = '\0';
			step(data, cur, name, target);
			if (++links > 40)
				return -ELOOP;
			char *next = xstrcat3(target, "/", rest);
			free(rest);
			rest = next;
			if (target[0] == '/') {
				free(cur);
				cur = xstrdup("/");
			}
			continue;
		}
		step(data, cur, name, NULL);
		if (!S_ISDIR(st.st_mode)) {
			const char *r = rest;
			while (*r == '/')
				r++;
			if (*r)
				return -ENOTDIR;
		}
		free(cur);
		cur = TAKE_PTR(full);
	}
	*ret = TAKE_PTR(cur);
	return 0;
}

static int check_program(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EACCES;
	if (access(path, X_OK) < 0)
		return -errno;
	return 0;
}

int path_find_program(const char *word, const char *path_env, const char *cwd, char **ret)
{
	if (str_empty(word))
		return -ENOENT;
	if (strchr(word, '/')) {
		_cleanup_free_ char *full = word[0] == '/' ? xstrdup(word) : path_join(cwd, word);
		int r = check_program(full);
		if (r < 0)
			return r;
		*ret = TAKE_PTR(full);
		return 0;
	}
	if (!path_env)
		path_env = "/usr/local/bin:/usr/bin:/bin";
	int first_error = -ENOENT;
	const char *p = path_env;
	for (;;) {
		const char *end = str_chrnul(p, ':');
		/* An empty entry means the current directory, as for execvp. */
		_cleanup_free_ char *entry = end == p ? xstrdup(".") : xstrndup(p, (size_t)(end - p));
		_cleanup_free_ char *dir = entry[0] == '/' ? xstrdup(entry) : path_join(cwd, entry);
		_cleanup_free_ char *full = path_join(dir, word);
		int r = check_program(full);
		if (r == 0) {
			*ret = TAKE_PTR(full);
			return 0;
		}
		/* A file there that may not be run is EACCES, as for a shell;
		 * a PATH directory that cannot be searched (another user's
		 * ~/.cargo/bin) holds nothing for this user: not found. */
		struct stat st;
		if (r == -EACCES && first_error == -ENOENT && lstat(full, &st) == 0)
			first_error = r;
		if (!*end)
			break;
		p = end + 1;
	}
	return first_error;
}

int mkdir_private(const char *dir, uid_t uid)
{
	if (mkdir(dir, 0700) < 0) {
		if (errno == ENOENT) {
			_cleanup_free_ char *parent = xstrdup(dir);
			char *slash = strrchr(parent, '/');
			if (!slash || slash == parent)
				return -ENOENT;
			*slash = '\0';
			int r = mkdir_private(parent, uid);
			if (r < 0)
				return r;
			if (mkdir(dir, 0700) < 0 && errno != EEXIST)
				return -errno;
		} else if (errno != EEXIST) {
			return -errno;
		}
	}
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* Someone else's directory, or one others can write, could be
	 * swapped under us (a squatted /tmp/stockade-UID). */
	if (st.st_uid != uid || (st.st_mode & 022))
		return -EPERM;
	return 0;
}
