/* The macOS check (make check-macos): forced in front of every source
 * that macOS builds, compiled here on Linux with __linux__ undefined and
 * __APPLE__ defined. The C library's headers come first, as they are;
 * then each name that only Linux or only glibc has is poisoned, so that
 * any use of it in stockade's own code stops the build, however it is
 * reached (a call, a macro, an #ifdef left true). The Linux-only headers
 * themselves are shadowed by tests/portable/shadow/, each an #error. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* Flags and constants macOS does not have. */
#undef O_PATH
#undef O_TMPFILE
#undef O_NOATIME
#undef O_DIRECT
#undef O_LARGEFILE
#undef AT_EMPTY_PATH
#undef AT_NO_AUTOMOUNT
#undef AT_STATX_SYNC_AS_STAT
#undef SOCK_CLOEXEC
#undef SOCK_NONBLOCK
#undef F_OFD_SETLK
#undef F_OFD_SETLKW
#undef F_OFD_GETLK
#undef F_SETPIPE_SZ
#undef F_ADD_SEALS
#undef RENAME_NOREPLACE
#undef RENAME_EXCHANGE
#undef SIGRTMIN
#undef SIGRTMAX
#undef SIGPOLL
#undef SIGPWR
#undef SIGSTKFLT
#undef MSG_CMSG_CLOEXEC
#undef MSG_NOSIGNAL
#undef SO_PEERCRED
#undef SCM_CREDENTIALS
#undef ENOMEDIUM
#undef EUCLEAN
#undef ENOKEY
#undef TEMP_FAILURE_RETRY
#pragma GCC poison O_PATH O_TMPFILE O_NOATIME O_DIRECT O_LARGEFILE AT_EMPTY_PATH AT_NO_AUTOMOUNT
#pragma GCC poison AT_STATX_SYNC_AS_STAT SOCK_CLOEXEC SOCK_NONBLOCK F_OFD_SETLK F_OFD_SETLKW F_OFD_GETLK
#pragma GCC poison F_SETPIPE_SZ F_ADD_SEALS RENAME_NOREPLACE RENAME_EXCHANGE SIGRTMIN SIGRTMAX SIGPOLL
#pragma GCC poison SIGPWR SIGSTKFLT MSG_CMSG_CLOEXEC MSG_NOSIGNAL SO_PEERCRED SCM_CREDENTIALS ucred
#pragma GCC poison ENOMEDIUM EUCLEAN ENOKEY TEMP_FAILURE_RETRY
/* struct stat's times: st_mtimespec and the like on macOS. */
#pragma GCC poison st_mtim st_ctim st_atim

/* System calls and calls of glibc that macOS lacks (or has with another
 * meaning: statfs's struct, qsort_r's argument order, sendfile's). */
#pragma GCC poison syscall prctl mount umount umount2 unshare setns pivot_root chroot clone clone3
#pragma GCC poison openat2 statx getdents64 dirent64 renameat2 copy_file_range sendfile splice tee
#pragma GCC poison pipe2 dup3 accept4 close_range memfd_create getrandom ppoll epoll_create epoll_create1
#pragma GCC poison epoll_ctl epoll_wait signalfd eventfd timerfd_create inotify_init inotify_init1
#pragma GCC poison inotify_add_watch fanotify_init pidfd_open pidfd_getfd pidfd_send_signal
#pragma GCC poison statfs fstatfs fallocate posix_fadvise readahead sync_file_range
#pragma GCC poison strchrnul memrchr rawmemchr mempcpy strerrorname_np strerrordesc_np sigabbrev_np
#pragma GCC poison sigdescr_np program_invocation_name program_invocation_short_name
#pragma GCC poison get_current_dir_name canonicalize_file_name euidaccess eaccess execvpe qsort_r
#pragma GCC poison malloc_usable_size malloc_trim mallinfo mallinfo2 mallopt memalign
#pragma GCC poison setresuid setresgid getresuid getresgid setfsuid setfsgid
#pragma GCC poison sigtimedwait sigwaitinfo clock_nanosleep sched_setaffinity sched_getaffinity
#pragma GCC poison prlimit getauxval secure_getenv explicit_bzero reallocarray
#pragma GCC poison capget capset cap_get_proc cap_set_proc seccomp_init seccomp_load mnl_socket_open
#pragma GCC poison landlock_create_ruleset landlock_add_rule landlock_restrict_self
#pragma GCC poison ptsname_r getpt posix_openpt_np
