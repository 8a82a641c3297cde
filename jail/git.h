/* stockade's own git calls, outside any jail: git from the system's own
 * folders (never one a PATH into the workspace leads to), with nothing of
 * the caller's environment, and with what could run a program switched
 * off (core.fsmonitor, hooks; no external diff or filter is asked for). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* git in /usr/bin, /bin or /usr/local/bin, or NULL. */
const char *git_find(void);

/* Runs git ARGS... in dir (-C), its standard output (up to max bytes)
 * in *ret_out and its exit status in *ret_status (as waitpid gives it),
 * its standard error in *ret_err (NULL: dropped). home: the user's home,
 * for what git reads there (the excludes file), or NULL: no user or
 * system config at all. keep_fd: a descriptor git gets as fd 3 (reached
 * as /proc/self/fd/3), or -1. 0, or -errno when git could not be run or
 * said more than max. */
int git_run(const char *git, const char *dir, const char *home, int keep_fd, char *const *args, size_t max,
	    char **ret_out, size_t *ret_len, char **ret_err, int *ret_status);
