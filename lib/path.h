/* Path arithmetic on normalised paths, absolute or relative to a directory
 * the caller holds: no system call. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

char *path_join(const char *a, const char *b);
bool path_is_absolute(const char *p);
/* True when child is parent or lies beneath it. */
bool path_is_beneath(const char *child, const char *parent);
/* The part of child below parent ("" when equal); child must lie beneath. */
const char *path_below(const char *child, const char *parent);
/* Lexically normalised: "//a/./b/../c/" becomes "/a/c". */
char *path_normalize(const char *p);
size_t path_depth(const char *p);
/* The directory holding path's last component ("/" for "/a", "" for a
 * relative "a"), and in *ret_name (which may be NULL) that component; NULL
 * for "/" itself. */
char *path_parent(const char *path, const char **ret_name);
/* Relative paths in the order that puts every descendant of a path right
 * after it: '/' sorts before every other byte. */
int path_cmp(const char *a, const char *b);
