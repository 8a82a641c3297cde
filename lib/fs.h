/* Filesystem helpers with side effects: resolving, private directories,
 * removing a tree a jailed command may have rearranged. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* realpath(3) as -errno. */
int path_canonical(const char *path, char **ret);
/* Each step of resolving an absolute path the way the kernel does, one
 * name at a time: the directory a name is looked up in (canonical), the
 * name, and the symlink's target when the name is one (else NULL). */
typedef void (*path_step_fn)(void *data, const char *dir, const char *name, const char *link);
/* Calls step for each lookup, following symlinks (at most 40). 0 with
 * where the path leads in *ret: canonical, and from the first name that
 * does not exist on (its lookup the last step) the rest as written,
 * normalised, *ret_missing then set. -ELOOP, -ENOTDIR (a file where a
 * directory is needed) or another -errno of lstat or readlink. A path
 * with no symlink on the way and no "..", proved by one openat2 where the
 * kernel has it, is stepped through without a further system call. */
int path_walk(const char *path, path_step_fn step, void *data, char **ret, bool *ret_missing);
/* Resolves a command word the way execvp would, on the given PATH value. */
int path_find_program(const char *word, const char *path_env, const char *cwd, char **ret);
/* Creates dir (and missing parents) with mode 0700 where missing, then
 * checks that it is a directory owned by uid, not a symlink, and not
 * writable by anyone else. */
int mkdir_private(const char *dir, uid_t uid);
/* Linux only (lib/fs-linux.c), from here on. */

/* A number from a "Name:\tN" line of /proc/self/status (NoNewPrivs,
 * Seccomp_filters), or -1. The file is read once in a process: for what
 * the process does not change itself. */
int proc_self_status(const char *name);
/* Whether dir could be made and written here: its nearest existing
 * ancestor a directory on a file system mounted read-write where the
 * caller may make a file (an O_TMPFILE one, which Landlock checks too,
 * and which goes at once). Leaves nothing. */
bool dir_could_write(const char *dir);

/* Removes a tree without following any symlink inside it, making
 * read-only directories writable on the way, at any depth and with a
 * bounded number of descriptors; nothing on another mount inside it is
 * entered. The first failure is returned, and the rest removed all the
 * same. */
int rm_rf(const char *path);
/* The same for name in dirfd. */
int rm_rf_at(int dirfd, const char *name);

/* Which of dirs (absolute, as the kernel writes paths in /proc) a process
 * of uid holds: its cwd, its root, an open descriptor or a mapped file
 * lies in it. ret_held[i] for dirs[i]; the process except is not looked
 * at. Processes that cannot be read are taken to hold nothing. */
int dirs_held(char *const *dirs, size_t n, uid_t uid, pid_t except, bool *ret_held);
