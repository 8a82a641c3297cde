/* The table: every system call the filter knows, with what it does and,
 * for each refusal, why. Data only; plan.c selects rows for a run. */
#include "seccomp/seccomp.h"

#include <fcntl.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lib/util.h"

#define TIOCSTI_NR 0x5412
#define TIOCLINUX_NR 0x541C
/* The terminal requests, type 'T' in bits 8 to 15: the numbering of
 * x86, arm64 and every architecture on the generic ioctl numbers (the
 * build fails elsewhere, below). The C library's headers lack the
 * termios2 ones. */
#define TTY_TYPE_MASK 0xff00U
#define TTY_TYPE 0x5400U
#define TCGETS2_NR 0x802C542AU
#define TCSETS2_NR 0x402C542BU
#define TCSETSW2_NR 0x402C542CU
#define TCSETSF2_NR 0x402C542DU
#define TIOCGPTN_NR 0x80045430U
#define TIOCSPTLCK_NR 0x40045431U
#define TIOCGDEV_NR 0x80045432U
#define TIOCSIG_NR 0x40045436U
#define TIOCGPKT_NR 0x80045438U
#define TIOCGPTLCK_NR 0x80045439U
#define TIOCGEXCL_NR 0x80045440U
#define TIOCGPTPEER_NR 0x5441U
_Static_assert((TCGETS & TTY_TYPE_MASK) == TTY_TYPE && TCGETS == 0x5401 && TIOCSTI == TIOCSTI_NR,
	       "the terminal ioctls are numbered differently on this architecture");
/* The file flag setters (linux/fs.h's, on every 64-bit architecture the
 * build knows: _IOW of a long, or of struct fsxattr). */
#define FS_IOC_SETFLAGS_NR 0x40086602U
#define FS_IOC_SETVERSION_NR 0x40087602U
#define EXT4_IOC_SETVERSION_NR 0x40086604U
#define FS_IOC_FSSETXATTR_NR 0x401c5820U
#define FS_IOC_GETFLAGS_NR 0x80086601U
#define FS_IOC_FSGETXATTR_NR 0x801c581fU
#define FS_IOC_GETVERSION_NR 0x80087601U
#define FS_IOC_FIEMAP_NR 0xc020660bU
/* fs-verity and an encryption policy: the owner's, on a descriptor open
 * for reading (linux/fsverity.h, linux/fscrypt.h) */
#define FS_IOC_ENABLE_VERITY_NR 0x40806685U
#define FS_IOC_SET_ENCRYPTION_POLICY_NR 0x800c6613U
_Static_assert(FS_IOC_SETFLAGS == FS_IOC_SETFLAGS_NR && FS_IOC_SETVERSION == FS_IOC_SETVERSION_NR &&
		       FS_IOC_FSSETXATTR == FS_IOC_FSSETXATTR_NR && FS_IOC_GETFLAGS == FS_IOC_GETFLAGS_NR &&
		       FS_IOC_FSGETXATTR == FS_IOC_FSGETXATTR_NR && FS_IOC_GETVERSION == FS_IOC_GETVERSION_NR &&
		       _IOWR('f', 11, char[32]) == FS_IOC_FIEMAP_NR,
	       "the file flag ioctls are numbered differently on this architecture");
#define MASK32 0xffffffffULL
/* Namespace flags of clone (whose low byte is the exit signal, so
 * CLONE_NEWTIME cannot be asked for there) and of unshare. */
#define CLONE_NS_FLAGS 0x7E020000ULL
#define UNSHARE_NS_FLAGS (CLONE_NS_FLAGS | 0x80ULL)
#define SOCK_TYPE_MASK 0xfULL
#define FASTOPEN 0x20000000ULL
#define SC_ID_UNCHANGED 0xffffffffULL

/* The array's size fails to compile if a mask or value needs more than
 * 32 bits. */
#define FITS32(x) (0 * sizeof(char[((unsigned long long)(x) >> 32) == 0 ? 1 : -1]))
#define ARG(n, m, v) { .arg = (n), .mask = (m) + FITS32(m), .value = (v) + FITS32(v) }

#define ALLOW(call) { .name = #call, .nr = -1, .action = SC_ALLOW }
#define ALLOW_IOCTL(req) { .name = "ioctl", .nr = -1, .action = SC_ALLOW, .n_args = 1, .args = { ARG(1, MASK32, (req)) } }
/* Calls newer than the libseccomp this is built against: the generic
 * numbering every architecture shares since Linux 5.1. */
#define ALLOW_NR(call, number) { .name = #call, .nr = (number), .action = SC_ALLOW }
/* Refused when a flag of an argument is set: the row comes before the
 * call's allow rows, and the first row that matches decides. */
#define REFUSE_ARG(call, n, flag)                                              \
	{ .name = #call, .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1, \
	  .args = { ARG(n, flag, flag) }, .why = WHY_FASTOPEN }
/* Landlock has no right for a file's mode, owner, extended attributes
 * or times: the namespace jail's read-only binds refuse them, and on the
 * landlock backend the supervisor carries them out where the run may
 * write (supervise/attrs.c). */
#define ATTRS(call)                                                            \
	ALLOW_WHEN(call, SC_NAMESPACES),                                       \
	{ .name = #call, .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_ATTRS }
/* A mode with the setuid bit (chmod's kin; argument n): refused on both
 * backends, before the rows above; the landlock backend's supervisor
 * refuses it too (supervise/attrs.c). A file made with it loses it when
 * written (the command has no CAP_FSETID). */
#define NO_SETUID(call, n)                                                     \
	{ .name = #call, .nr = -1, .action = SC_REFUSE, .err = EPERM, .when = SC_NAMESPACES, .n_args = 1, \
	  .args = { ARG(n, S_ISUID | S_ISGID, S_ISUID) }, .why = WHY_SETUID_BIT }, \
	{ .name = #call, .nr = -1, .action = SC_REFUSE, .err = EPERM, .when = SC_NAMESPACES, .n_args = 1, \
	  .args = { ARG(n, S_ISUID | S_ISGID, S_ISUID | S_ISGID) }, .why = WHY_SETUID_BIT }
/* A mode with the setgid bit alone (the filter tells the rows apart by
 * one mask, the two bits): in the namespace jail, to the listener,
 * which carries out the change itself on a directory and refuses it on
 * any other file (jail/setgid.c); the filter cannot see which the mode
 * is for. The landlock backend's supervisor sees every chmod. */
#define SETGID(call, n)                                                        \
	{ .name = #call, .nr = -1, .action = SC_SUPERVISE, .when = SC_NAMESPACES, .n_args = 1, \
	  .args = { ARG(n, S_ISUID | S_ISGID, S_ISGID) }, .why = WHY_SETGID_BIT }
/* A file's flags (chattr's, the project id), which the kernel lets the
 * owner set through a descriptor open for reading: on the landlock
 * backend, the supervisor sets them where the run may write
 * (supervise/attrs.c); the namespace jail's read-only binds refuse them.
 * Before the ioctl allow: the first row that matches decides. */
#define FLAGS_IOCTL(req)                                                       \
	{ .name = "ioctl", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .n_args = 1, \
	  .args = { ARG(1, MASK32, (req)) }, .why = WHY_SUPERVISED_ATTRS }
/* The filter tells requests apart by one mask (the type, as for the
 * terminal's): every request of the setters' types goes to the
 * supervisor, which lets the rest (FS_IOC_GETFLAGS, FS_IOC_FSGETXATTR,
 * FS_IOC_FIEMAP, FITRIM) go on to the kernel as made. */
#define FLAGS_TYPE(type)                                                       \
	{ .name = "ioctl", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .n_args = 1, \
	  .args = { ARG(1, TTY_TYPE_MASK, (type) << 8) }, .why = WHY_FLAGS_TYPE }
#define FLAGS_QUERY(req)                                                       \
	{ .name = "ioctl", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK, .n_args = 1, \
	  .args = { ARG(1, MASK32, (req)) } }
#define ATTRS_NR(call, number)                                                 \
	{ .name = #call, .nr = (number), .action = SC_ALLOW, .when = SC_NAMESPACES }, \
	{ .name = #call, .nr = (number), .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_ATTRS }
#define ALLOW_WHEN(call, cond) { .name = #call, .nr = -1, .action = SC_ALLOW, .when = (cond) }
#define REFUSE(call, e, reason) { .name = #call, .nr = -1, .action = SC_REFUSE, .err = (e), .why = (reason) }
#define REFUSE_NR(call, number, e, reason)                                     \
	{ .name = #call, .nr = (number), .action = SC_REFUSE, .err = (e), .why = (reason) }
#define REFUSE_WHEN(call, e, cond, reason)                                     \
	{ .name = #call, .nr = -1, .action = SC_REFUSE, .err = (e), .when = (cond), .why = (reason) }
/* A call whose first argument is a pid (0: the caller): allowed in the
 * namespace jail, and on the landlock backend for 0; the supervisor
 * decides the rest. */
#define ON_PROCESS(call)                                                       \
	ALLOW_WHEN(call, SC_NAMESPACES),                                       \
	{ .name = #call, .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK, .n_args = 1, \
	  .args = { ARG(0, MASK32, 0) } },                                     \
	{ .name = #call, .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_OTHER_PROCESS }
/* (which, who): who 0 of the kind `self` (a process) is the caller. */
#define ON_WHICH(call, self)                                                   \
	ALLOW_WHEN(call, SC_NAMESPACES),                                       \
	{ .name = #call, .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK, .n_args = 2, \
	  .args = { ARG(0, MASK32, self), ARG(1, MASK32, 0) } },               \
	{ .name = #call, .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_OTHER_PROCESS }
/* A read of every process of a kind (the user's), which changes nothing. */
#define READ_WHICH(call, which)                                                \
	{ .name = #call, .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK, .n_args = 1, \
	  .args = { ARG(0, MASK32, which) } }

/* Why a row refuses, supervises or answers in the filter: kept apart
 * from the table so that the table holds no pointer and needs no
 * relocation when stockade starts. */
static const char *const whys[] = {
	[WHY_TRUNCATE_READ_ONLY] = "truncating a file opened read-only (Landlock ABI < 3)",
	[WHY_OPENAT2_FLAGS] = "its flags cannot be checked (Landlock ABI < 3)",
	[WHY_TRUNCATE_PATH] = "truncation by path (Landlock ABI < 3)",
	[WHY_TIOCSTI] = "TIOCSTI pushes input into the terminal",
	[WHY_TIOCLINUX] = "TIOCLINUX pastes into the console",
	[WHY_TIOCSETD] = "TIOCSETD sets a line discipline that outlives the run",
	[WHY_TIOCCONS] = "TIOCCONS redirects the console",
	[WHY_TTY_SERIAL] = "serial port and modem settings",
	[WHY_TTY_IOCTL] = "a terminal request not on the list of those programs use",
	[WHY_NEW_NAMESPACE] = "a new namespace",
	[WHY_CLONE3] = "its flags cannot be checked; callers fall back to clone",
	[WHY_SETNS] = "entering another namespace",
	[WHY_UNIX_DATAGRAM] = "a Unix datagram's destination cannot be checked",
	[WHY_LOOPBACK_TCP_ONLY] = "only TCP streams and UDP datagrams on loopback",
	[WHY_SOCKET_FAMILY] = "a socket family the network mode does not give",
	[WHY_SUPERVISED_CONNECT] = "the address is checked, then the supervisor connects",
	[WHY_SUPERVISED_BIND] = "the address is checked, then the supervisor binds",
	[WHY_SUPERVISED_LISTEN] = "only on loopback, or 0.0.0.0 or :: bound to the loopback device",
	[WHY_WATCHED_RENAME] = "watched: a refused rename over a trust hand-off is named",
	[WHY_WATCHED_CONNECT] = "watched: a connect to a socket file of the host's that the jail does not have is named",
	[WHY_SUPERVISED_TMP] = "tmpfile() in the host's /tmp, which Landlock does not grant: made by the supervisor",
	[WHY_WATCHED_SHM] = "watched: a POSIX semaphore or shared memory object in the host's /dev/shm, which Landlock refuses, is named; mkstemp() of a new name in the host's /tmp is made by the supervisor",
	[WHY_FASTOPEN] = "MSG_FASTOPEN connects without connect()",
	[WHY_SYSV_IPC] = "the host's System V IPC",
	[WHY_MQUEUE] = "the host's POSIX message queues",
	[WHY_UNMAPPED_OWNER] = "an owner this user namespace does not map",
	[WHY_UNMAPPED_ID] = "an id this user namespace does not map",
	[WHY_IO_URING] = "io_uring works around seccomp and the supervisor",
	[WHY_KEYRING] = "the kernel keyring is shared with the user's session",
	[WHY_ATTACK_SURFACE] = "kernel attack surface",
	[WHY_MOUNT_TABLE] = "the mount table",
	[WHY_OTHER_PROCESS] = "carried out only on a process of the run",
	[WHY_SUPERVISED_SEND] = "a datagram's address is checked, then the supervisor sends it",
	[WHY_SOURCE_ROUTE] = "watched: a source route (IP_OPTIONS, an IPv6 routing header) is refused",
	[WHY_PTY_PEER] = "a pty's slave, which Landlock would refuse (no /dev/pts name is granted): opened by the supervisor",
	[WHY_HELD_DATAGRAM] = "watched: a datagram held back (UDP_CORK) is refused",
	[WHY_SUPERVISED_ATTRS] = "a file's mode, owner, flags, extended attributes or times, which Landlock does not govern: changed by the supervisor where the run may write",
	[WHY_SETUID_BIT] = "a setuid bit: the file would run as you (as root, for a root run) for every user of the host, after the run",
	[WHY_SETGID_BIT] = "a setgid bit: on a directory it is set by the listener; on a file it is refused (the file would run with your group for every user of the host, after the run)",
	[WHY_FLAGS_TYPE] = "watched: a request of the type of those that set a file's flags, which goes on to the kernel",
	[WHY_SUPERVISED_WATCH] = "an inotify watch, which Landlock does not govern: added by the supervisor where the run may read",
	[WHY_DNS_REPLY] = "watched: a name server's reply that stockade answered is given the server's address",
};

static const struct sc_rule table[] = {
	/* Files and descriptors. Landlock and the mounts decide which paths;
	 * the filter only decides which calls exist. */
	ALLOW(read), ALLOW(write), ALLOW(readv), ALLOW(writev), ALLOW(pread64),
	ALLOW(pwrite64), ALLOW(preadv), ALLOW(pwritev), ALLOW(preadv2), ALLOW(pwritev2),
	ALLOW(close), ALLOW(close_range), ALLOW(lseek), ALLOW(_llseek),
	/* The landlock backend: the opens glibc's sem_open and shm_open make
	 * (their exact flags) are shown to the listener, which names one in
	 * the host's /dev/shm (refused by Landlock there) and lets it go on
	 * to the kernel; the same flags are mkstemp()'s (glibc's, Python's),
	 * which the supervisor carries out for a new name directly in the
	 * host's /tmp. Before the allow: the first row that matches decides. */
	{ .name = "openat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_ABI_GE3, .n_args = 1,
	  .args = { ARG(2, MASK32, O_RDWR | O_CREAT | O_EXCL) }, .why = WHY_WATCHED_SHM },
	/* ... and glibc's tmpfile() (its exact flags: the filter tells the
	 * rows apart by one mask), which the
	 * supervisor carries out in the host's /tmp, where Landlock gives the
	 * command nothing, as it does mkstemp()'s above. */
	{ .name = "openat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_ABI_GE3, .n_args = 1,
	  .args = { ARG(2, MASK32, O_RDWR | O_TMPFILE | O_EXCL) }, .why = WHY_SUPERVISED_TMP },
	{ .name = "openat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_ABI_GE3, .n_args = 1,
	  .args = { ARG(2, MASK32, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC) }, .why = WHY_WATCHED_SHM },
	{ .name = "openat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_ABI_GE3, .n_args = 1,
	  .args = { ARG(2, MASK32, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC) }, .why = WHY_WATCHED_SHM },
	/* ... and libuv's reopen of a tty by its name (supervise/pty.c),
	 * which the supervisor carries out for the slave of a pty the run
	 * made (no /dev/pts name is granted on the landlock backend). */
	{ .name = "openat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_ABI_GE3, .n_args = 1,
	  .args = { ARG(2, MASK32, O_RDWR | O_NOCTTY | O_CLOEXEC) }, .why = WHY_PTY_PEER },
	{ .name = "openat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_ABI_GE3, .n_args = 1,
	  .args = { ARG(2, MASK32, O_WRONLY | O_NOCTTY | O_CLOEXEC) }, .why = WHY_PTY_PEER },
	ALLOW_WHEN(open, SC_ABI_GE3), ALLOW_WHEN(openat, SC_ABI_GE3),
	ALLOW_WHEN(openat2, SC_ABI_GE3), ALLOW_WHEN(truncate, SC_ABI_GE3),
	ALLOW(creat), ALLOW(stat), ALLOW(fstat), ALLOW(lstat), ALLOW(newfstatat),
	ALLOW(fstatat64), ALLOW(stat64), ALLOW(fstat64), ALLOW(lstat64), ALLOW(statx),
	ALLOW(statfs), ALLOW(fstatfs), ALLOW(statfs64), ALLOW(fstatfs64), ALLOW(access),
	ALLOW(faccessat), ALLOW(faccessat2), ALLOW(readlink), ALLOW(readlinkat),
	ALLOW(getdents), ALLOW(getdents64), ALLOW(chdir), ALLOW(fchdir), ALLOW(getcwd),
	ALLOW(mkdir), ALLOW(mkdirat), ALLOW(rmdir),
	/* The namespace jail watches renames, to say which trust hand-off a
	 * refused one was about; the kernel's bind refuses it. */
	ALLOW_WHEN(rename, SC_LANDLOCK), ALLOW_WHEN(renameat, SC_LANDLOCK), ALLOW_WHEN(renameat2, SC_LANDLOCK),
	{ .name = "rename", .nr = -1, .action = SC_SUPERVISE, .when = SC_NAMESPACES, .why = WHY_WATCHED_RENAME },
	{ .name = "renameat", .nr = -1, .action = SC_SUPERVISE, .when = SC_NAMESPACES, .why = WHY_WATCHED_RENAME },
	{ .name = "renameat2", .nr = -1, .action = SC_SUPERVISE, .when = SC_NAMESPACES, .why = WHY_WATCHED_RENAME },
	ALLOW(link), ALLOW(linkat), ALLOW(unlink), ALLOW(unlinkat),
	ALLOW(symlink), ALLOW(symlinkat), NO_SETUID(chmod, 1), NO_SETUID(fchmod, 1), NO_SETUID(fchmodat, 2),
	NO_SETUID(fchmodat2, 2), SETGID(chmod, 1), SETGID(fchmod, 1), SETGID(fchmodat, 2), SETGID(fchmodat2, 2),
	ATTRS(chmod), ATTRS(fchmod), ATTRS(fchmodat), ATTRS(fchmodat2), ATTRS(utime), ATTRS(utimes), ATTRS(utimensat), ATTRS(futimesat),
	{ .name = "chown", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_ATTRS },
	{ .name = "fchown", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_ATTRS },
	{ .name = "lchown", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_ATTRS },
	{ .name = "fchownat", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_ATTRS },
	ALLOW(ftruncate),
	ALLOW(fallocate), ALLOW(fsync), ALLOW(fdatasync), ALLOW(sync), ALLOW(syncfs),
	ALLOW(sync_file_range), ALLOW(flock), ALLOW(fcntl), ALLOW(dup), ALLOW(dup2),
	ALLOW(dup3), ALLOW(pipe), ALLOW(pipe2), ALLOW(umask), ALLOW(mknod), ALLOW(mknodat),
	ALLOW(copy_file_range), ALLOW(sendfile), ALLOW(splice), ALLOW(tee), ALLOW(vmsplice),
	ALLOW(readahead), ALLOW(fadvise64), ALLOW(getxattr), ALLOW(lgetxattr),
	ALLOW(fgetxattr), ALLOW(listxattr), ALLOW(llistxattr), ALLOW(flistxattr),
	ATTRS(setxattr), ATTRS(lsetxattr), ATTRS(fsetxattr), ATTRS(removexattr),
	ATTRS(lremovexattr), ATTRS(fremovexattr), ATTRS_NR(setxattrat, 463),
	ALLOW_NR(getxattrat, 464), ALLOW_NR(listxattrat, 465), ATTRS_NR(removexattrat, 466),
	/* Landlock does not govern inotify: a run could watch a directory
	 * it may not read (~/.ssh) and learn the names made and opened
	 * there. The landlock backend's supervisor adds the watch where the
	 * run may read (supervise/attrs.c); the namespace jail's hidden
	 * paths are not in its root. */
	ALLOW(inotify_init), ALLOW(inotify_init1), ALLOW_WHEN(inotify_add_watch, SC_NAMESPACES),
	{ .name = "inotify_add_watch", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_SUPERVISED_WATCH },
	ALLOW(inotify_rm_watch), ALLOW(memfd_create), ALLOW(cachestat),

	/* Truncation below Landlock ABI 3: Landlock cannot refuse it on a
	 * file it lets the command read, so the filter refuses truncate(2)
	 * and an open that truncates without asking to write. */
	{ .name = "open", .nr = -1, .action = SC_ALLOW, .when = SC_ABI_LT3, .n_args = 1,
	  .args = { ARG(1, O_TRUNC, 0) } },
	{ .name = "open", .nr = -1, .action = SC_ALLOW, .when = SC_ABI_LT3, .n_args = 1,
	  .args = { ARG(1, O_ACCMODE, O_WRONLY) } },
	{ .name = "open", .nr = -1, .action = SC_ALLOW, .when = SC_ABI_LT3, .n_args = 1,
	  .args = { ARG(1, O_ACCMODE, O_RDWR) } },
	{ .name = "openat", .nr = -1, .action = SC_ALLOW, .when = SC_ABI_LT3, .n_args = 1,
	  .args = { ARG(2, O_TRUNC, 0) } },
	{ .name = "openat", .nr = -1, .action = SC_ALLOW, .when = SC_ABI_LT3, .n_args = 1,
	  .args = { ARG(2, O_ACCMODE, O_WRONLY) } },
	{ .name = "openat", .nr = -1, .action = SC_ALLOW, .when = SC_ABI_LT3, .n_args = 1,
	  .args = { ARG(2, O_ACCMODE, O_RDWR) } },
	REFUSE_WHEN(open, EPERM, SC_ABI_LT3, WHY_TRUNCATE_READ_ONLY),
	REFUSE_WHEN(openat, EPERM, SC_ABI_LT3, WHY_TRUNCATE_READ_ONLY),
	REFUSE_WHEN(openat2, ENOSYS, SC_ABI_LT3, WHY_OPENAT2_FLAGS),
	REFUSE_WHEN(truncate, EPERM, SC_ABI_LT3, WHY_TRUNCATE_PATH),

	/* Terminal injection: the request is an int, compared on 32 bits. */
	/* ioctl: every request but the terminal's (type 'T') as the kernel
	 * and Landlock decide (sockets, FIONBIO's kin of other types,
	 * FICLONE, FS_IOC_*, BLK*); of the terminal's, only this list. The
	 * filter cannot tell a terminal from another descriptor: the list
	 * holds the generic requests numbered among the terminal's too
	 * (FIONREAD, FIONBIO, FIOCLEX, FIOASYNC, FIOQSIZE). A terminal of
	 * the run's own is the only one it holds (jail/terminal.h); the
	 * list keeps what could outlive the run or reach beyond it. The
	 * named refusals come first, for the report's reason; the first row
	 * that matches decides. */
	{ .name = "ioctl", .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1,
	  .args = { ARG(1, MASK32, TIOCSTI_NR) }, .why = WHY_TIOCSTI },
	{ .name = "ioctl", .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1,
	  .args = { ARG(1, MASK32, TIOCLINUX_NR) }, .why = WHY_TIOCLINUX },
	{ .name = "ioctl", .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1,
	  .args = { ARG(1, MASK32, TIOCSETD) }, .why = WHY_TIOCSETD },
	{ .name = "ioctl", .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1,
	  .args = { ARG(1, MASK32, TIOCCONS) }, .why = WHY_TIOCCONS },
	{ .name = "ioctl", .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1,
	  .args = { ARG(1, MASK32, TIOCSSERIAL) }, .why = WHY_TTY_SERIAL },
	/* Modes, the size, the foreground group (on the run's own pty: the
	 * user's never reaches it), queues, breaks and flow. */
	ALLOW_IOCTL(TCGETS), ALLOW_IOCTL(TCSETS), ALLOW_IOCTL(TCSETSW), ALLOW_IOCTL(TCSETSF),
	ALLOW_IOCTL(TCGETA), ALLOW_IOCTL(TCSETA), ALLOW_IOCTL(TCSETAW), ALLOW_IOCTL(TCSETAF),
	ALLOW_IOCTL(TCGETS2_NR), ALLOW_IOCTL(TCSETS2_NR), ALLOW_IOCTL(TCSETSW2_NR), ALLOW_IOCTL(TCSETSF2_NR),
	ALLOW_IOCTL(TCSBRK), ALLOW_IOCTL(TCSBRKP), ALLOW_IOCTL(TIOCSBRK), ALLOW_IOCTL(TIOCCBRK),
	ALLOW_IOCTL(TCXONC), ALLOW_IOCTL(TCFLSH), ALLOW_IOCTL(TIOCOUTQ),
	ALLOW_IOCTL(TIOCGWINSZ), ALLOW_IOCTL(TIOCSWINSZ),
	ALLOW_IOCTL(TIOCGPGRP), ALLOW_IOCTL(TIOCSPGRP), ALLOW_IOCTL(TIOCGSID),
	ALLOW_IOCTL(TIOCSCTTY), ALLOW_IOCTL(TIOCNOTTY), ALLOW_IOCTL(TIOCGETD),
	ALLOW_IOCTL(TIOCEXCL), ALLOW_IOCTL(TIOCNXCL), ALLOW_IOCTL(TIOCGEXCL_NR),
	/* A pty a program makes for itself (script, tmux, expect, test
	 * runners): unlock, number, peer, packet mode, a signal to its
	 * slave's group. */
	ALLOW_IOCTL(TIOCGPTN_NR), ALLOW_IOCTL(TIOCSPTLCK_NR), ALLOW_IOCTL(TIOCGPTLCK_NR),
	/* The landlock backend grants no /dev/pts name, and Landlock checks
	 * the peer's open as any open: the supervisor opens it
	 * (supervise/pty.c). Before the allow: the first row decides. */
	{ .name = "ioctl", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .n_args = 1,
	  .args = { ARG(1, MASK32, TIOCGPTPEER_NR) }, .why = WHY_PTY_PEER },
	FLAGS_IOCTL(FS_IOC_SETFLAGS_NR), FLAGS_IOCTL(FS_IOC_FSSETXATTR_NR), FLAGS_IOCTL(FS_IOC_SETVERSION_NR),
	FLAGS_IOCTL(EXT4_IOC_SETVERSION_NR), FLAGS_IOCTL(FS_IOC_ENABLE_VERITY_NR),
	FLAGS_IOCTL(FS_IOC_SET_ENCRYPTION_POLICY_NR), FLAGS_TYPE('f'), FLAGS_TYPE('X'), FLAGS_TYPE('v'),
	/* ... but the queries of those types are the kernel's in the filter
	 * (lsattr, cp's FIEMAP): exceptions inside those types, as the
	 * terminal's list is inside its type. */
	FLAGS_QUERY(FS_IOC_GETFLAGS_NR), FLAGS_QUERY(FS_IOC_FSGETXATTR_NR), FLAGS_QUERY(FS_IOC_GETVERSION_NR),
	FLAGS_QUERY(FS_IOC_FIEMAP_NR),
	ALLOW_IOCTL(TIOCGPTPEER_NR), ALLOW_IOCTL(TIOCPKT), ALLOW_IOCTL(TIOCGPKT_NR),
	ALLOW_IOCTL(TIOCSIG_NR), ALLOW_IOCTL(TIOCGDEV_NR),
	/* Generic requests in the terminal's numbering. */
	ALLOW_IOCTL(FIONREAD), ALLOW_IOCTL(FIONBIO), ALLOW_IOCTL(FIOASYNC), ALLOW_IOCTL(FIOCLEX),
	ALLOW_IOCTL(FIONCLEX), ALLOW_IOCTL(FIOQSIZE),
	/* The first row that matches decides: the rest of the terminal's. */
	{ .name = "ioctl", .nr = -1, .action = SC_REFUSE, .err = EPERM, .n_args = 1,
	  .args = { ARG(1, TTY_TYPE_MASK, TTY_TYPE) }, .why = WHY_TTY_IOCTL },
	ALLOW(ioctl),

	/* Memory. */
	ALLOW(mmap), ALLOW(mmap2), ALLOW(munmap), ALLOW(mprotect), ALLOW(mremap),
	ALLOW(madvise), ALLOW(brk), ALLOW(msync), ALLOW(mincore), ALLOW(mlock), ALLOW(mlock2),
	ALLOW(munlock), ALLOW(mlockall), ALLOW(munlockall), ALLOW(process_madvise),
	ALLOW(mbind), ALLOW(get_mempolicy), ALLOW(set_mempolicy), ALLOW(set_mempolicy_home_node),
	ALLOW(migrate_pages), ALLOW(move_pages), ALLOW(pkey_alloc), ALLOW(pkey_free),
	ALLOW(pkey_mprotect), ALLOW(map_shadow_stack), ALLOW_NR(mseal, 462),
	ALLOW(remap_file_pages), ALLOW(memfd_secret),

	/* Processes. Landlock's domain keeps ptrace, process_vm_*, kcmp,
	 * pidfd_getfd, get_robust_list, move_pages, migrate_pages and
	 * process_madvise (each asks ptrace_may_access) inside the run, and
	 * (ABI 6) kill, tkill, tgkill, rt_*sigqueueinfo and
	 * pidfd_send_signal. Nothing of Landlock's hooks the calls that set a
	 * limit, a priority, a scheduler, an affinity or an I/O priority:
	 * on the landlock backend, where pids are the host's, each goes to
	 * the supervisor unless it names the caller (0), and is carried out
	 * only on a process of the run. The namespace jail's pid namespace
	 * shows no other. */
	ALLOW(fork), ALLOW(vfork), ALLOW(execve), ALLOW(execveat), ALLOW(exit),
	ALLOW(exit_group), ALLOW(wait4), ALLOW(waitid), ALLOW(waitpid), ALLOW(kill), ALLOW(tkill),
	ALLOW(tgkill), ALLOW(getpid), ALLOW(getppid), ALLOW(gettid), ALLOW(getuid),
	ALLOW(geteuid), ALLOW(getgid), ALLOW(getegid), ALLOW(getresuid), ALLOW(getresgid),
	ALLOW(getgroups), ALLOW_WHEN(setuid, SC_LANDLOCK), ALLOW_WHEN(setgid, SC_LANDLOCK),
	ALLOW_WHEN(setreuid, SC_LANDLOCK), ALLOW_WHEN(setregid, SC_LANDLOCK),
	ALLOW_WHEN(setresuid, SC_LANDLOCK), ALLOW_WHEN(setresgid, SC_LANDLOCK), ALLOW(setgroups), ALLOW(setfsuid),
	ALLOW(setfsgid), ALLOW(capget), ALLOW(capset), ALLOW(getpgid), ALLOW(setpgid),
	ALLOW(getpgrp), ALLOW(getsid), ALLOW(setsid), ALLOW(prctl), ALLOW(arch_prctl),
	ALLOW(personality), ALLOW(sched_yield),
	ON_PROCESS(sched_getaffinity), ON_PROCESS(sched_setaffinity), ON_PROCESS(sched_getparam),
	ON_PROCESS(sched_setparam), ON_PROCESS(sched_getscheduler), ON_PROCESS(sched_setscheduler),
	ON_PROCESS(sched_rr_get_interval), ON_PROCESS(sched_getattr), ON_PROCESS(sched_setattr),
	ON_PROCESS(prlimit64),
	/* (which, who): who 0 of PRIO_PROCESS is the caller; reading the
	 * highest priority among the user's processes changes nothing. */
	READ_WHICH(getpriority, 2 /* PRIO_USER */), ON_WHICH(getpriority, 0 /* PRIO_PROCESS */),
	ON_WHICH(setpriority, 0 /* PRIO_PROCESS */),
	READ_WHICH(ioprio_get, 3 /* IOPRIO_WHO_USER */), ON_WHICH(ioprio_get, 1 /* IOPRIO_WHO_PROCESS */),
	ON_WHICH(ioprio_set, 1 /* IOPRIO_WHO_PROCESS */),
	/* A pidfd of a process outside lets the caller watch it end, and
	 * nothing Landlock does not check again. */
	ALLOW_WHEN(pidfd_open, SC_NAMESPACES),
	{ .name = "pidfd_open", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK, .why = WHY_OTHER_PROCESS },
	ALLOW(sched_get_priority_max), ALLOW(sched_get_priority_min),
	ALLOW(getrlimit), ALLOW(setrlimit), ALLOW(ugetrlimit),
	ALLOW(getrusage), ALLOW(times), ALLOW(uname), ALLOW(sysinfo), ALLOW(set_tid_address),
	ALLOW(set_robust_list), ALLOW(get_robust_list), ALLOW(futex), ALLOW(futex_waitv),
	ALLOW(futex_wake), ALLOW(futex_wait), ALLOW(futex_requeue), ALLOW(rseq),
	ALLOW(restart_syscall), ALLOW(pidfd_send_signal),
	ALLOW(pidfd_getfd), ALLOW(process_vm_readv), ALLOW(process_vm_writev),
	ALLOW(ptrace), ALLOW(kcmp), ALLOW(seccomp), ALLOW(landlock_create_ruleset),
	ALLOW(landlock_add_rule), ALLOW(landlock_restrict_self), ALLOW(membarrier),
	ALLOW(getcpu), ALLOW(getrandom),
	ALLOW_NR(statmount, 457), ALLOW_NR(listmount, 458), ALLOW_NR(lsm_get_self_attr, 459),
	ALLOW_NR(lsm_list_modules, 461),

	/* A new process is fine; a new namespace is not. glibc and others
	 * fall back to clone when clone3 is missing, and clone's flags can be
	 * checked while clone3's live behind a pointer. */
	{ .name = "clone", .nr = -1, .action = SC_ALLOW, .n_args = 1,
	  .args = { ARG(0, CLONE_NS_FLAGS, 0) } },
	REFUSE(clone, EPERM, WHY_NEW_NAMESPACE),
	{ .name = "clone3", .nr = -1, .action = SC_ERRNO, .err = ENOSYS,
	  .why = WHY_CLONE3 },
	{ .name = "unshare", .nr = -1, .action = SC_ALLOW, .n_args = 1,
	  .args = { ARG(0, UNSHARE_NS_FLAGS, 0) } },
	REFUSE(unshare, EPERM, WHY_NEW_NAMESPACE),
	REFUSE(setns, EPERM, WHY_SETNS),

	/* Signals and time. */
	ALLOW(rt_sigaction), ALLOW(rt_sigprocmask), ALLOW(rt_sigreturn), ALLOW(rt_sigpending),
	ALLOW(rt_sigtimedwait), ALLOW(rt_sigqueueinfo), ALLOW(rt_tgsigqueueinfo),
	ALLOW(rt_sigsuspend), ALLOW(sigaltstack), ALLOW(signalfd), ALLOW(signalfd4),
	ALLOW(pause), ALLOW(alarm), ALLOW(nanosleep), ALLOW(clock_nanosleep),
	ALLOW(clock_gettime), ALLOW(clock_getres), ALLOW(gettimeofday), ALLOW(time),
	ALLOW(getitimer), ALLOW(setitimer), ALLOW(timer_create), ALLOW(timer_settime),
	ALLOW(timer_gettime), ALLOW(timer_getoverrun), ALLOW(timer_delete),
	ALLOW(timerfd_create), ALLOW(timerfd_settime), ALLOW(timerfd_gettime),

	/* Waiting on descriptors. */
	ALLOW(select), ALLOW(_newselect), ALLOW(pselect6), ALLOW(poll), ALLOW(ppoll),
	ALLOW(epoll_create), ALLOW(epoll_create1), ALLOW(epoll_ctl), ALLOW(epoll_wait),
	ALLOW(epoll_pwait), ALLOW(epoll_pwait2), ALLOW(eventfd), ALLOW(eventfd2),

	/* Sockets: which families and protocols depends on the network mode;
	 * what they reach is Landlock's, the network namespace's or the
	 * supervisor's business. */
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 1,
	  .args = { ARG(0, MASK32, AF_UNIX) } },
	/* A datagram's destination travels with each sendmsg, where the
	 * supervisor cannot check it: the landlock backend gives Unix
	 * streams only (socketpair still gives any). */
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK, .n_args = 2,
	  .args = { ARG(0, MASK32, AF_UNIX), ARG(1, SOCK_TYPE_MASK, SOCK_STREAM) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK, .n_args = 2,
	  .args = { ARG(0, MASK32, AF_UNIX), ARG(1, SOCK_TYPE_MASK, SOCK_SEQPACKET) } },
	{ .name = "socket", .nr = -1, .action = SC_REFUSE, .err = EPERM, .when = SC_LANDLOCK, .n_args = 1,
	  .args = { ARG(0, MASK32, AF_UNIX) }, .why = WHY_UNIX_DATAGRAM },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .n_args = 2,
	  .args = { ARG(0, MASK32, AF_NETLINK), ARG(2, MASK32, 0 /* NETLINK_ROUTE */) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_NET_ON, .n_args = 1,
	  .args = { ARG(0, MASK32, AF_INET) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_NET_ON, .n_args = 1,
	  .args = { ARG(0, MASK32, AF_INET6) } },
	/* In the namespace jail the network namespace is the network
	 * policy: every inet socket, UDP included, sees only the jail's own
	 * loopback. With the network off there is no inet socket at all, as
	 * on the landlock backend: a connect to the suite's own server on a
	 * loopback that is down fails without a trace (ENETUNREACH), and the
	 * runner, its server still listening, waits for ever with nothing
	 * said; a refused socket() fails at once and is named. */
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES | SC_NET_LOOPBACK,
	  .n_args = 1, .args = { ARG(0, MASK32, AF_INET) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES | SC_NET_LOOPBACK,
	  .n_args = 1, .args = { ARG(0, MASK32, AF_INET6) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET), ARG(1, SOCK_TYPE_MASK, SOCK_STREAM), ARG(2, MASK32, 0) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET), ARG(1, SOCK_TYPE_MASK, SOCK_STREAM), ARG(2, MASK32, IPPROTO_TCP) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET6), ARG(1, SOCK_TYPE_MASK, SOCK_STREAM), ARG(2, MASK32, 0) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET6), ARG(1, SOCK_TYPE_MASK, SOCK_STREAM), ARG(2, MASK32, IPPROTO_TCP) } },
	/* UDP: every datagram with an address goes to the supervisor (the
	 * sends below), which lets it reach only the run's own sockets. */
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET), ARG(1, SOCK_TYPE_MASK, SOCK_DGRAM), ARG(2, MASK32, 0) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET), ARG(1, SOCK_TYPE_MASK, SOCK_DGRAM), ARG(2, MASK32, IPPROTO_UDP) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET6), ARG(1, SOCK_TYPE_MASK, SOCK_DGRAM), ARG(2, MASK32, 0) } },
	{ .name = "socket", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 3,
	  .args = { ARG(0, MASK32, AF_INET6), ARG(1, SOCK_TYPE_MASK, SOCK_DGRAM), ARG(2, MASK32, IPPROTO_UDP) } },
	{ .name = "socket", .nr = -1, .action = SC_REFUSE, .err = EPROTONOSUPPORT, .when = SC_LANDLOCK | SC_NET_LOOPBACK,
	  .n_args = 1, .args = { ARG(0, MASK32, AF_INET) }, .why = WHY_LOOPBACK_TCP_ONLY },
	{ .name = "socket", .nr = -1, .action = SC_REFUSE, .err = EPROTONOSUPPORT, .when = SC_LANDLOCK | SC_NET_LOOPBACK,
	  .n_args = 1, .args = { ARG(0, MASK32, AF_INET6) }, .why = WHY_LOOPBACK_TCP_ONLY },
	REFUSE(socket, EAFNOSUPPORT, WHY_SOCKET_FAMILY),
	{ .name = "socketpair", .nr = -1, .action = SC_ALLOW, .n_args = 1,
	  .args = { ARG(0, MASK32, AF_UNIX) } },
	REFUSE(socketpair, EAFNOSUPPORT, WHY_SOCKET_FAMILY),
	/* Landlock governs neither Unix sockets nor loopback: in the landlock
	 * backend the supervisor decides every connect and bind, and with
	 * loopback every listen, and carries them out itself. */
	/* The namespace jail: an inet connect (its address's length) goes
	 * on; another (a Unix socket file's) is watched, so that one the jail
	 * does not have, where the host has a socket, is named. */
	{ .name = "connect", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 1,
	  .args = { ARG(2, MASK32, sizeof(struct sockaddr_in)) } },
	{ .name = "connect", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 1,
	  .args = { ARG(2, MASK32, sizeof(struct sockaddr_in6)) } },
	{ .name = "connect", .nr = -1, .action = SC_SUPERVISE, .when = SC_NAMESPACES, .why = WHY_WATCHED_CONNECT },
	ALLOW_WHEN(bind, SC_NAMESPACES),
	{ .name = "connect", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK,
	  .why = WHY_SUPERVISED_CONNECT },
	{ .name = "bind", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK,
	  .why = WHY_SUPERVISED_BIND },
	ALLOW_WHEN(listen, SC_NAMESPACES), ALLOW_WHEN(listen, SC_LANDLOCK | SC_NET_OFF | SC_NET_ON),
	{ .name = "listen", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK,
	  .why = WHY_SUPERVISED_LISTEN },
	ALLOW(accept), ALLOW(accept4),
	/* With allow on the landlock backend the run's lookups go to
	 * stockade, not to the name server the C library asked, which
	 * takes a reply only from that server's address (glibc's
	 * res_ourserver_p, musl, c-ares): a receive that asks where a
	 * datagram came from goes to the supervisor, which gives a reply of
	 * stockade's the server's address, and any other on to the kernel. */
	{ .name = "recvfrom", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_ALLOW, .n_args = 1,
	  .args = { { .arg = 4 | SC_ARG_WHOLE, .mask = 0xffffffffU, .value = 0 } } },
	{ .name = "recvfrom", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_ALLOW,
	  .why = WHY_DNS_REPLY },
	ALLOW(getsockname), ALLOW(getpeername), ALLOW(recvfrom), ALLOW(recvmsg),
	ALLOW(recvmmsg), ALLOW(shutdown), ALLOW(getsockopt),
	/* A source route (IPv4's IP_OPTIONS with LSRR or SSRR, an IPv6
	 * routing header) sends a connect's SYN or a datagram to its first
	 * hop, whatever address the supervisor checked: with loopback on the
	 * landlock backend the IP and IPv6 options go to the supervisor,
	 * which refuses those (their number is in a register: the rest go
	 * on to the kernel as made). */
	{ .name = "setsockopt", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 1,
	  .args = { ARG(1, MASK32, IPPROTO_IP) }, .why = WHY_SOURCE_ROUTE },
	{ .name = "setsockopt", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 1,
	  .args = { ARG(1, MASK32, IPPROTO_IPV6) }, .why = WHY_SOURCE_ROUTE },
	/* A datagram held back (UDP_CORK) leaves at the uncork, or with a
	 * later send() that names no address and so stays in the kernel: to
	 * whatever has the port by then, past the check of its address. The
	 * UDP options (a UDP socket takes UDP-Lite's level too) go to the
	 * supervisor, which refuses that one. */
	{ .name = "setsockopt", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 1,
	  .args = { ARG(1, MASK32, IPPROTO_UDP) }, .why = WHY_HELD_DATAGRAM },
	{ .name = "setsockopt", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK, .n_args = 1,
	  .args = { ARG(1, MASK32, IPPROTO_UDPLITE) }, .why = WHY_HELD_DATAGRAM },
	ALLOW(setsockopt),
	/* TCP Fast Open connects inside sendto, where no LSM connect hook
	 * sees it. */
	REFUSE_ARG(sendto, 3, FASTOPEN), REFUSE_ARG(sendmsg, 2, FASTOPEN), REFUSE_ARG(sendmmsg, 3, FASTOPEN),
	/* With loopback or off on the landlock backend, a send with an
	 * address goes to the supervisor (a Unix datagram socketpair can
	 * name any socket file of the host's, journald's or another
	 * program's), which copies it, decides and sends it itself
	 * (a second thread cannot rewrite what it checked): sendto with an
	 * address, and every sendmsg and sendmmsg, whose addresses live
	 * behind a pointer. send() and sendto() without one (a connected
	 * socket, TCP's every write) stay in the kernel. */
	{ .name = "sendto", .nr = -1, .action = SC_ALLOW, .when = SC_LANDLOCK | SC_NET_LOOPBACK | SC_NET_OFF, .n_args = 2,
	  .args = { ARG(3, FASTOPEN, 0), { .arg = 4 | SC_ARG_WHOLE, .mask = 0xffffffffU, .value = 0 } } },
	{ .name = "sendto", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK | SC_NET_OFF,
	  .why = WHY_SUPERVISED_SEND },
	{ .name = "sendmsg", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK | SC_NET_OFF,
	  .why = WHY_SUPERVISED_SEND },
	{ .name = "sendmmsg", .nr = -1, .action = SC_SUPERVISE, .when = SC_LANDLOCK | SC_NET_LOOPBACK | SC_NET_OFF,
	  .why = WHY_SUPERVISED_SEND },
	ALLOW_WHEN(sendto, SC_NAMESPACES), ALLOW_WHEN(sendto, SC_LANDLOCK | SC_NET_ON),
	ALLOW_WHEN(sendmsg, SC_NAMESPACES), ALLOW_WHEN(sendmsg, SC_LANDLOCK | SC_NET_ON),
	ALLOW_WHEN(sendmmsg, SC_NAMESPACES), ALLOW_WHEN(sendmmsg, SC_LANDLOCK | SC_NET_ON),

	/* System V and POSIX message queues: the namespace jail has an IPC
	 * namespace of its own; the landlock backend would share the host's. */
	ALLOW_WHEN(shmget, SC_NAMESPACES), ALLOW_WHEN(shmat, SC_NAMESPACES),
	ALLOW_WHEN(shmdt, SC_NAMESPACES), ALLOW_WHEN(shmctl, SC_NAMESPACES),
	ALLOW_WHEN(semget, SC_NAMESPACES), ALLOW_WHEN(semop, SC_NAMESPACES),
	ALLOW_WHEN(semtimedop, SC_NAMESPACES), ALLOW_WHEN(semctl, SC_NAMESPACES),
	ALLOW_WHEN(msgget, SC_NAMESPACES), ALLOW_WHEN(msgsnd, SC_NAMESPACES),
	ALLOW_WHEN(msgrcv, SC_NAMESPACES), ALLOW_WHEN(msgctl, SC_NAMESPACES),
	ALLOW_WHEN(mq_open, SC_NAMESPACES), ALLOW_WHEN(mq_unlink, SC_NAMESPACES),
	ALLOW_WHEN(mq_timedsend, SC_NAMESPACES), ALLOW_WHEN(mq_timedreceive, SC_NAMESPACES),
	ALLOW_WHEN(mq_notify, SC_NAMESPACES), ALLOW_WHEN(mq_getsetattr, SC_NAMESPACES),
	REFUSE_WHEN(shmget, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(shmat, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(shmdt, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(shmctl, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(semget, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(semop, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(semtimedop, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(semctl, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(msgget, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(msgsnd, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(msgrcv, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(msgctl, EPERM, SC_LANDLOCK, WHY_SYSV_IPC),
	REFUSE_WHEN(mq_open, EPERM, SC_LANDLOCK, WHY_MQUEUE),
	REFUSE_WHEN(mq_unlink, EPERM, SC_LANDLOCK, WHY_MQUEUE),

	/* The namespace jail maps only the caller's ids: changing to another
	 * would answer EINVAL there, where a user outside gets EPERM, and
	 * test suites check for EPERM (libuv's do). The filter allows the
	 * caller's own id (and -1, "unchanged") and refuses the rest with
	 * EPERM. SC_OWN_UID and SC_OWN_GID are patched into the compiled
	 * filter with the caller's ids. */
	{ .name = "chown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "chown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "chown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "chown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(chown, EPERM, SC_NAMESPACES, WHY_UNMAPPED_OWNER),
	{ .name = "fchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "fchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "fchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "fchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(fchown, EPERM, SC_NAMESPACES, WHY_UNMAPPED_OWNER),
	{ .name = "lchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "lchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "lchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "lchown", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(lchown, EPERM, SC_NAMESPACES, WHY_UNMAPPED_OWNER),
	{ .name = "fchownat", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(2, MASK32, SC_OWN_UID), ARG(3, MASK32, SC_OWN_GID) } },
	{ .name = "fchownat", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(2, MASK32, SC_OWN_UID), ARG(3, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "fchownat", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(2, MASK32, SC_ID_UNCHANGED), ARG(3, MASK32, SC_OWN_GID) } },
	{ .name = "fchownat", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(2, MASK32, SC_ID_UNCHANGED), ARG(3, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(fchownat, EPERM, SC_NAMESPACES, WHY_UNMAPPED_OWNER),
	{ .name = "setuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 1,
	  .args = { ARG(0, MASK32, SC_OWN_UID) } },
	REFUSE_WHEN(setuid, EPERM, SC_NAMESPACES, WHY_UNMAPPED_ID),
	{ .name = "setgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 1,
	  .args = { ARG(0, MASK32, SC_OWN_GID) } },
	REFUSE_WHEN(setgid, EPERM, SC_NAMESPACES, WHY_UNMAPPED_ID),
	{ .name = "setreuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_OWN_UID), ARG(1, MASK32, SC_OWN_UID) } },
	{ .name = "setreuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_OWN_UID), ARG(1, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setreuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_OWN_UID) } },
	{ .name = "setreuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(setreuid, EPERM, SC_NAMESPACES, WHY_UNMAPPED_ID),
	{ .name = "setregid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_OWN_GID), ARG(1, MASK32, SC_OWN_GID) } },
	{ .name = "setregid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_OWN_GID), ARG(1, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setregid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_OWN_GID) } },
	{ .name = "setregid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 2,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(setregid, EPERM, SC_NAMESPACES, WHY_UNMAPPED_ID),
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_UID), ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_OWN_UID) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_UID), ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_UID), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_UID) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_UID), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_OWN_UID) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_OWN_UID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_UID) } },
	{ .name = "setresuid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(setresuid, EPERM, SC_NAMESPACES, WHY_UNMAPPED_ID),
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_GID), ARG(1, MASK32, SC_OWN_GID), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_GID), ARG(1, MASK32, SC_OWN_GID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_GID), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_OWN_GID), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_OWN_GID), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_OWN_GID), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_OWN_GID) } },
	{ .name = "setresgid", .nr = -1, .action = SC_ALLOW, .when = SC_NAMESPACES, .n_args = 3,
	  .args = { ARG(0, MASK32, SC_ID_UNCHANGED), ARG(1, MASK32, SC_ID_UNCHANGED), ARG(2, MASK32, SC_ID_UNCHANGED) } },
	REFUSE_WHEN(setresgid, EPERM, SC_NAMESPACES, WHY_UNMAPPED_ID),
	/* Refused outright: kernel attack surface or a way around the jail. */
	REFUSE(io_uring_setup, EPERM, WHY_IO_URING),
	REFUSE(io_uring_enter, EPERM, WHY_IO_URING),
	REFUSE(io_uring_register, EPERM, WHY_IO_URING),
	REFUSE(keyctl, EPERM, WHY_KEYRING),
	REFUSE(add_key, EPERM, WHY_KEYRING),
	REFUSE(request_key, EPERM, WHY_KEYRING),
	REFUSE(bpf, EPERM, WHY_ATTACK_SURFACE),
	REFUSE(perf_event_open, EPERM, WHY_ATTACK_SURFACE),
	REFUSE(userfaultfd, EPERM, WHY_ATTACK_SURFACE),
	REFUSE(mount, EPERM, WHY_MOUNT_TABLE),
	REFUSE(umount2, EPERM, WHY_MOUNT_TABLE),
	REFUSE(umount, EPERM, WHY_MOUNT_TABLE),
	REFUSE(pivot_root, EPERM, WHY_MOUNT_TABLE),
	REFUSE(chroot, EPERM, WHY_MOUNT_TABLE),
	REFUSE(fsopen, EPERM, WHY_MOUNT_TABLE),
	REFUSE(fsconfig, EPERM, WHY_MOUNT_TABLE),
	REFUSE(fsmount, EPERM, WHY_MOUNT_TABLE),
	REFUSE(fspick, EPERM, WHY_MOUNT_TABLE),
	REFUSE(open_tree, EPERM, WHY_MOUNT_TABLE),
	REFUSE(move_mount, EPERM, WHY_MOUNT_TABLE),
	REFUSE(mount_setattr, EPERM, WHY_MOUNT_TABLE),
	REFUSE_NR(open_tree_attr, 467, EPERM, WHY_MOUNT_TABLE),
};

const char *seccomp_why(const struct sc_rule *r)
{
	return r->why > WHY_NONE && (size_t)r->why < ARRAY_SIZE(whys) ? whys[r->why] : NULL;
}

const char *seccomp_fix(const struct sc_rule *r, enum net_mode net, int nr, const uint64_t args[6])
{
	switch (r ? r->why : WHY_NONE) {
	case WHY_SOCKET_FAMILY:
		/* No mode gives another family (raw packets, netlink's audit
		 * or the kernel's other families): --net on is a fix only
		 * for an inet socket, where the network is not on yet. */
		if (nr != SYS_socket || (args[0] != AF_INET && args[0] != AF_INET6) || net == NET_ON)
			return NULL;
		/* With the network off, a TCP stream or UDP socket is what
		 * the run's own servers on loopback need, which loopback
		 * gives (the default): the whole network is not the only
		 * way. */
		if (net == NET_OFF &&
		    (((args[1] & 0xf) == SOCK_STREAM && (args[2] == 0 || args[2] == IPPROTO_TCP)) ||
		     ((args[1] & 0xf) == SOCK_DGRAM && (args[2] == 0 || args[2] == IPPROTO_UDP))))
			return "--net loopback (the default: servers of the run's own, on loopback), or --net on (the "
			       "host's network)";
		return "--net on, or in stockade.ini: network = on";
	case WHY_UNIX_DATAGRAM:
		/* the landlock backend's, in every network mode */
		return "none on the landlock backend; the namespace jail gives them: --backend namespaces";
	case WHY_LOOPBACK_TCP_ONLY:
		return net == NET_ON ? NULL : "--net on, or in stockade.ini: network = on";
	case WHY_TRUNCATE_READ_ONLY:
	case WHY_OPENAT2_FLAGS:
	case WHY_TRUNCATE_PATH:
		return "none on this kernel: Landlock ABI 3 (Linux 6.2) governs truncation";
	case WHY_SYSV_IPC:
	case WHY_MQUEUE:
		return "none on the landlock backend (the host's are shared with your other programs); the namespace "
		       "jail gives the run its own";
	default:
		return NULL;
	}
}

const struct sc_rule *seccomp_table(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(table);
	return table;
}

