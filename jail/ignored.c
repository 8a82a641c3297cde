#include "jail/ignored.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include "jail/git.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"

/* git's output is read up to this: far beyond a workspace's list of
 * ignored entries (10,000 files under several folders is 300 KiB). */
#define IGNORED_MAX (64u << 20)

int ignored_hide(struct policy *p)
{
	if (!p->hide_ignored)
		return 0;
	_cleanup_free_ char *at = source_text(&p->hide_ignored_source);
	const char *git = git_find();
	if (!git) {
		log_error("cannot hide what git ignores (%s): git is not in /usr/bin or /bin", at);
		return -ENOENT;
	}
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	int status = 0;
	char *args[] = { "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z", NULL };
	/* the user's home, for the user's excludes file */
	int r = git_run(git, p->workspace, p->user_home, -1, args, IGNORED_MAX, &out, &len, NULL, &status);
	if (r < 0) {
		log_error("cannot ask git what it ignores in '%s' (%s): %s", p->workspace, at, strerror(-r));
		return r;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* Not a working tree (or one git will not read): there is
		 * nothing git ignores here. Said, since it was asked for. */
		log_note("hide-ignored (%s): '%s' is not a git working tree git will read: nothing hidden", at, p->workspace);
		return 0;
	}
	size_t n = 0;
	for (size_t off = 0; off < len;) {
		const char *entry = out + off;
		size_t el = strnlen(entry, len - off);
		off += el + 1;
		if (el == 0)
			continue;
		_cleanup_free_ char *rel = xstrndup(entry, el);
		_cleanup_free_ char *path = path_join(p->workspace, rel);
		/* A symlink is left alone: hiding its name hides nothing, and
		 * what it points at has rules of its own. */
		struct stat st;
		if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
			continue;
		policy_add_rule_new(p, path, ACCESS_HIDE, p->hide_ignored_source);
		n++;
	}
	policy_sort(p);
	log_info("hide-ignored: %zu entries git ignores hidden", n);
	return 0;
}
