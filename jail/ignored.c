#include "jail/ignored.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "jail/say-policy.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"

/* git's output is read up to this: far beyond a workspace's list of
 * ignored entries (10,000 files under several folders is 300 KiB). */
#define IGNORED_MAX (64u << 20)

static const char *find_git(void)
{
	static const char *const places[] = { "/usr/bin/git", "/bin/git", "/usr/local/bin/git" };
	for (size_t i = 0; i < ARRAY_SIZE(places); i++)
		if (access(places[i], X_OK) == 0)
			return places[i];
	return NULL;
}

/* Runs git in the workspace; its standard output in *ret. */
static int run_git(const char *git, const struct policy *p, char **ret, size_t *ret_len, int *ret_status)
{
	/* Nothing of the caller's environment but the home (for the user's
	 * excludes file): no GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH, no
	 * PATH into the workspace. */
	_cleanup_free_ char *home = xstrcat3("HOME=", p->user_home, "");
	char *envp[] = { home, "PATH=/usr/bin:/bin", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0",
			 "GIT_OPTIONAL_LOCKS=0", NULL };
	char *argv[] = { (char *)git, "-C", p->workspace, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
			 "-c", "core.untrackedCache=false", "ls-files", "--others", "--ignored", "--exclude-standard",
			 "--directory", "-z", NULL };
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int r = posix_spawn(&pid, git, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r != 0) {
		close(pipefd[0]);
		return -r;
	}
	struct text t = { 0 };
	char buf[65536];
	int err = 0;
	for (;;) {
		ssize_t n = read(pipefd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		if (t.n + (size_t)n > IGNORED_MAX) {
			err = -EFBIG;
			break;
		}
		text_add(&t, buf, (size_t)n);
	}
	close(pipefd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_len = t.n;
	*ret = text_take(&t);
	*ret_status = status;
	return err;
}

int ignored_hide(struct policy *p, struct report *rep)
{
	if (!p->hide_ignored)
		return 0;
	_cleanup_free_ char *at = source_text(&p->hide_ignored_source);
	const char *git = find_git();
	if (!git) {
		log_error("cannot hide what git ignores (%s): git is not in /usr/bin or /bin", at);
		return -ENOENT;
	}
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	int status = 0;
	int r = run_git(git, p, &out, &len, &status);
	if (r < 0) {
		log_error("cannot ask git what it ignores in '%s' (%s): %s", p->workspace, at, strerror(-r));
		return r;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* Not a working tree (or one git will not read): there is
		 * nothing git ignores here. Said, since it was asked for. */
		say_note_once(p, rep, "hide-ignored (%s): '%s' is not a git working tree git will read: nothing hidden", at,
			      p->workspace);
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
