/* What Linux and macOS spell differently, for the sources both build
 * (lib/, policy/, seatbelt/ and jail/'s verbs; `make check-macos` holds
 * them to it). Everything else of those sources is POSIX. */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#ifdef __linux__
/* A descriptor that names a place without opening it: no read right
 * needed, and never a device's open. */
#define OPEN_PATH O_PATH
/* getdents64's entries, read a buffer at a time (lib/fd.h). */
typedef struct dirent64 dir_entry;
#else
/* macOS has no O_PATH: a folder or file is opened for reading, which the
 * places stockade opens (the user's own) allow. */
#define OPEN_PATH O_RDONLY
/* readdir's, 64-bit inodes on macOS. */
typedef struct dirent dir_entry;
#endif

#ifdef __linux__
#define SEND_NOSIGNAL MSG_NOSIGNAL	/* a closed peer gives EPIPE, not SIGPIPE */
#define RECV_CLOEXEC MSG_CMSG_CLOEXEC	/* a received descriptor is close-on-exec */
#else
/* macOS: neither flag; a received descriptor is marked close-on-exec
 * right after (lib/fd.c), and SIGPIPE stays as the caller has it. */
#define SEND_NOSIGNAL 0
#define RECV_CLOEXEC 0
#endif

/* strchrnul(3), which only glibc has: the first c in s, or its end. */
static inline const char *str_chrnul(const char *s, int c)
{
	const char *p = strchr(s, c);
	return p ? p : s + strlen(s);
}
