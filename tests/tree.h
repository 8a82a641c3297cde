/* A temporary tree for a unit test: made under /tmp, named by paths
 * relative to it (an absolute one is taken as it is), and removed, every
 * entry, at the end. */
#pragma once

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "lib/path.h"
#include "lib/util.h"
#include "tests/tap.h"

static char *tree_base;

static inline char *tree_at(const char *rel)
{
	return rel[0] == '/' ? xstrdup(rel) : path_join(tree_base, rel);
}

/* rel and every directory above it in the tree, where missing. */
static inline void tree_dir(const char *rel)
{
	_cleanup_free_ char *p = tree_at(rel);
	for (char *s = p + strlen(tree_base) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			diag("mkdir %s: %m", p);
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		diag("mkdir %s: %m", p);
}

/* An empty file of that mode, its directories made. */
static inline void tree_file(const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = tree_at(rel);
	_cleanup_free_ char *parent = path_parent(p, NULL);
	if (parent && path_is_beneath(parent, tree_base) && !streq(parent, tree_base))
		tree_dir(path_below(parent, tree_base));
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
	if (fd < 0)
		diag("create %s: %m", p);
	else
		close(fd);
}

static inline void tree_link(const char *target, const char *rel)
{
	_cleanup_free_ char *p = tree_at(rel);
	if (symlink(target, p) < 0)
		diag("symlink %s: %m", p);
}

/* Never a chmod here: chmod follows a symlink, and the trees hold some
 * that point out of them (at /etc). */
static inline int tree_unlink_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static inline void tree_remove(const char *path)
{
	if (nftw(path, tree_unlink_cb, 64, FTW_DEPTH | FTW_PHYS) < 0)
		diag("cannot remove %s: %m", path);
}

/* Makes the tree, or skips the whole test. */
static inline void tree_begin(const char *name)
{
	_cleanup_free_ char *tmpl = xstrcat3("/tmp/stockade-test-", name, "-XXXXXX");
	if (!mkdtemp(tmpl))
		tap_skip_all("cannot make a temporary directory");
	tree_base = TAKE_PTR(tmpl);
}

static inline void tree_end(void)
{
	tree_remove(tree_base);
	free(tree_base);
	tree_base = NULL;
}
