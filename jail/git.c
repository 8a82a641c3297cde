#include "jail/git.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>

#include "lib/util.h"

const char *git_find(void)
{
	static const char *const places[] = { "/usr/bin/git", "/bin/git", "/usr/local/bin/git" };
	for (size_t i = 0; i < ARRAY_SIZE(places); i++)
		if (access(places[i], X_OK) == 0)
			return places[i];
	return NULL;
}

/* Reads both pipes to their ends, each up to max. */
static int drain(int out, int err, size_t max, struct text *o, struct text *e)
{
	struct pollfd p[2] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN } };
	struct text *into[2] = { o, e };
	int r = 0;
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			char buf[65536];
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1;
				continue;
			}
			if (into[i]->n + (size_t)n > max) {
				r = -EFBIG;
				p[i].fd = -1;
				continue;
			}
			text_add(into[i], buf, (size_t)n);
		}
	}
	return r;
}

int git_run(const char *git, const char *dir, const char *home, int keep_fd, char *const *args, size_t max,
	    char **ret_out, size_t *ret_len, char **ret_err, int *ret_status)
{
	/* No GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH of the caller's, no PATH
	 * into the workspace; without a home, no user or system config
	 * (whose settings would be another's to choose). */
	_cleanup_free_ char *home_var = xstrcat3("HOME=", home ? home : "/nonexistent", "");
	char *envp[] = { home_var, "PATH=/usr/bin:/bin", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
			 /* the end, with a home */
			 home ? NULL : "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", NULL };
	static const char *const fixed[] = { "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c",
					     "core.untrackedCache=false" };
	size_t n_args = strv_length(args);
	char **argv = xcalloc(n_args + ARRAY_SIZE(fixed) + 4, sizeof(*argv));
	size_t k = 0;
	argv[k++] = (char *)git;
	argv[k++] = "-C";
	argv[k++] = (char *)dir;
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		argv[k++] = (char *)fixed[i];
	for (size_t i = 0; i < n_args; i++)
		argv[k++] = args[i];
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	/* Above 3, so that its dup2 to 3 is one (a dup2 onto itself would
	 * leave it close-on-exec). */
	_cleanup_close_ int keep = keep_fd >= 0 ? fcntl(keep_fd, F_DUPFD_CLOEXEC, 10) : -1;
	if ((keep_fd >= 0 && keep < 0) || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		int e = -errno;
		if (out[0] >= 0) {
			close(out[0]);
			close(out[1]);
		}
		free(argv);
		return e;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	if (keep >= 0)
		posix_spawn_file_actions_adddup2(&fa, keep, 3);
	pid_t pid;
	int r = posix_spawn(&pid, git, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	close(out[1]);
	close(err[1]);
	if (r != 0) {
		close(out[0]);
		close(err[0]);
		return -r;
	}
	struct text o = { 0 }, e = { 0 };
	int dr = drain(out[0], err[0], max, &o, &e);
	close(out[0]);
	close(err[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(o.s);
			free(e.s);
			return -errno;
		}
	*ret_len = o.n;
	*ret_out = text_take(&o);
	if (ret_err)
		*ret_err = text_take(&e);
	else
		free(e.s);
	*ret_status = status;
	return dr;
}
