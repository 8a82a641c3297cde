/* On macOS: the profile written to the run's folder, and the command run
 * under /usr/bin/sandbox-exec, as the other backends run theirs: its own
 * process group, the caller's signals forwarded to it, what is left of
 * the group killed when the command ends, and the command's status (or
 * 128+N for a signal) handed back. Built on macOS only; nothing of it has
 * run in stockade's tests (README, "What was verified where"). */
#ifdef __APPLE__
#include "seatbelt/seatbelt.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

static volatile sig_atomic_t group;

static void forward(int sig)
{
	if (group > 0)
		kill(-(pid_t)group, sig);
}

static int write_profile(const struct seatbelt_plan *pl, const char *path)
{
	/* O_EXCL and O_NOFOLLOW: the run's folder is new and private, and
	 * nothing may stand at the profile's name before it is written. */
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int e = write_all(fd, pl->profile, strlen(pl->profile));
	return e < 0 ? e : (close(TAKE_FD(fd)) < 0 ? -errno : 0);
}

int seatbelt_run(const struct seatbelt_plan *pl, const char *run_dir, const char *program, char *const *argv,
		 char *const *envp, int *ret_err, const char **ret_what)
{
	_cleanup_free_ char *profile = path_join(run_dir, "profile.sb");
	int e = write_profile(pl, profile);
	if (e < 0) {
		*ret_err = -e;
		*ret_what = "write the Seatbelt profile";
		return EXIT_STOCKADE;
	}
	size_t argc = strv_length(argv);
	_cleanup_free_ char **args = xcalloc(argc + 4, sizeof(*args));
	args[0] = (char *)SANDBOX_EXEC;
	args[1] = (char *)"-f";
	args[2] = profile;
	/* The program as resolved when the policy was built, so that
	 * sandbox-exec looks nothing up on a PATH of its own. */
	args[3] = (char *)program;
	for (size_t i = 1; i < argc; i++)
		args[3 + i] = argv[i];

	bool fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	pid_t pid = fork();
	if (pid < 0) {
		*ret_err = errno;
		*ret_what = "fork";
		return EXIT_STOCKADE;
	}
	if (pid == 0) {
		setpgid(0, 0);
		/* In the terminal's foreground before exec, as a shell puts a
		 * job there: a read before the parent's tcsetpgrp would stop
		 * the command with SIGTTIN. */
		if (fg) {
			signal(SIGTTOU, SIG_IGN);
			tcsetpgrp(STDIN_FILENO, getpid());
			signal(SIGTTOU, SIG_DFL);
		}
		/* Only 0, 1 and 2 reach the command. */
		long max = sysconf(_SC_OPEN_MAX);
		for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			close(fd);
		execve(SANDBOX_EXEC, args, envp);
		_exit(exit_exec_failed(errno));
	}
	setpgid(pid, pid);
	group = pid;
	struct sigaction sa = { .sa_handler = forward }, old[4];
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaction(forwarded[i], &sa, &old[i]);
	/* The command's group in the terminal's foreground, so that it can
	 * read; stockade itself waits in the background. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_ttou;
	sigaction(SIGTTOU, &ign, &old_ttou);
	if (fg)
		tcsetpgrp(STDIN_FILENO, pid);

	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Leftovers: whatever of the group is still there dies with the
	 * command, as on the other backends. */
	kill(-pid, SIGKILL);
	group = 0;
	if (fg)
		tcsetpgrp(STDIN_FILENO, getpgrp());
	sigaction(SIGTTOU, &old_ttou, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaction(forwarded[i], &old[i], NULL);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_STOCKADE;
}
#endif
