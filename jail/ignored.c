#include "jail/ignored.h"

#include <sys/wait.h>

#include "jail/git.h"
#include "jail/say-policy.h"
#include "lib/log.h"
#include "lib/util.h"

/* git's output is read up to this: far beyond a workspace's list of
 * ignored entries (10,000 files under several folders is 300 KiB). */
#define IGNORED_MAX (64u << 20)

int ignored_ask(void *data, const char *workspace, const char *user_home, const char **ret, size_t *ret_len)
{
	struct ignored_answer *a = data;
	if (a->asked && a->workspace && streq(a->workspace, workspace)) {
		*ret = a->out;
		*ret_len = a->len;
		return a->result;
	}
	ignored_answer_free(a);
	const char *git = git_find();
	if (!git)
		return -ENOENT;
	int status = 0;
	char *args[] = { "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z", NULL };
	/* the user's home, for the user's excludes file */
	int r = git_run(git, workspace, user_home, -1, args, IGNORED_MAX, &a->out, &a->len, NULL, &status);
	if (r < 0)
		return r;
	/* Not a working tree (or one git will not read): there is nothing
	 * git ignores here. */
	a->result = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
	a->asked = true;
	a->workspace = xstrdup(workspace);
	*ret = a->out;
	*ret_len = a->len;
	return a->result;
}

void ignored_answer_free(struct ignored_answer *a)
{
	free(a->out);
	free(a->workspace);
	*a = (struct ignored_answer){ 0 };
}

void ignored_say(const struct policy *p, struct report *rep)
{
	if (!p->hide_ignored)
		return;
	_cleanup_free_ char *at = source_text(&p->hide_ignored_source);
	if (p->ignored.no_tree) {
		/* Said, since it was asked for. */
		say_note_once(p, rep, "hide-ignored (%s): '%s' is not a git working tree git will read: nothing hidden", at,
			      p->workspace);
		return;
	}
	if (!p->ignored.asked)
		return;
	size_t n = p->ignored.n_hidden;
	if (n)
		log_note("hide-ignored (%s): hid %zu %s git ignores: %s", at, n, n == 1 ? "entry" : "entries",
			 p->ignored.hidden);
	else
		log_note("hide-ignored (%s): git ignores nothing here but toolchains' own trees: nothing hidden", at);
	if (p->ignored.n_kept)
		log_note("hide-ignored: kept %s", p->ignored.kept);
}
