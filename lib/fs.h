/* Filesystem helpers with side effects: resolving, private directories,
 * removing a tree a jailed command may have rearranged. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* realpath(3) as -errno. */
int path_canonical(const char *path, char **ret);
/* Resolves a command word the way execvp would, on the given PATH value. */
int path_find_program(const char *word, const char *path_env, const char *cwd, char **ret);
/* Creates dir (and missing parents) with mode 0700 where missing, then
 * checks that it is a directory owned by uid, not a symlink, and not
 * writable by anyone else. */
int mkdir_private(const char *dir, uid_t uid);
/* Removes a tree without following any symlink inside it, making
 * read-only directories writable on the way. */
int rm_rf(const char *path);
