/* probe: files and descriptors. */
#include "tests/helpers/probe/probe.h"

#include <sys/xattr.h>
#include <linux/fs.h>
#include <sys/inotify.h>

/* ---------------------------------------------------------------- files */

int op_read(char **a)
{
	static char buf[MAX_READ];
	size_t total = 0;
	int fd = open(a[0], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	while (total < sizeof(buf)) {
		ssize_t n = read(fd, buf + total, sizeof(buf) - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			emit_bytes(buf, total);
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		total += (size_t)n;
	}
	close(fd);
	emit_bytes(buf, total);
	return 0;
}

static int write_probe_line(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	int e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, "probe\n", 6) != 6)
		e = errno ? errno : EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

int op_write(char **a)
{
	return write_probe_line(a[0], O_WRONLY | O_CREAT | O_TRUNC);
}

int op_append(char **a)
{
	return write_probe_line(a[0], O_WRONLY | O_CREAT | O_APPEND);
}

int op_mkdir(char **a) { return raw_result(mkdir(a[0], 0755)); }
/* create-excl PATH: open(O_RDWR | O_CREAT | O_EXCL), mkstemp's own open,
 * of one name. */
int op_create_excl(char **a)
{
	int fd = open(a[0], O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}
/* plant-until-gone PATH SECONDS: makes PATH, a new executable (a hook
 * where the path is in a hooks directory), then looks every 100 us until
 * it is gone (a session's guard undid it) or SECONDS pass: "gone after N
 * us", counted from before it was made; ETIMEDOUT if it stays. */
int op_plant_until_gone(char **a)
{
	static const char hook[] = "#!/bin/sh\necho planted\n";
	double secs = atof(a[1]);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int fd = open(a[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (fd < 0)
		return errno;
	if (write(fd, hook, sizeof(hook) - 1) < 0 || fchmod(fd, 0755) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	close(fd);
	for (;;) {
		struct stat st;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long us = (long)(t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000;
		if (lstat(a[0], &st) < 0 && errno == ENOENT) {
			printf("gone after %ld us\n", us);
			return 0;
		}
		if (us > secs * 1e6)
			return ETIMEDOUT;
		usleep(100);
	}
}
int op_rmdir(char **a) { return raw_result(rmdir(a[0])); }
int op_unlink(char **a) { return raw_result(unlink(a[0])); }
int op_rename(char **a) { return raw_result(rename(a[0], a[1])); }
int op_link(char **a) { return raw_result(link(a[0], a[1])); }
int op_symlink(char **a) { return raw_result(symlink(a[0], a[1])); }
int op_mkfifo(char **a) { return raw_result(mkfifo(a[0], 0644)); }
int op_truncate(char **a) { return raw_result(truncate(a[0], 0)); }

int op_mknod_char(char **a)
{
	/* 1:3 is /dev/null: a device node the jail must not be able to make. */
	return raw_result(mknod(a[0], S_IFCHR | 0644, makedev(1, 3)));
}

int fill_sockaddr_un(struct sockaddr_un *sun, socklen_t *ret_len, const char *name,
			    bool abstract)
{
	size_t len = strlen(name);

	/* A path needs room for its NUL; an abstract name starts with a NUL
	 * and is exactly as long as the address length says, with no NUL at
	 * the end. Either way the length is the name's plus one. */
	if (len + 1 > sizeof(sun->sun_path))
		return ENAMETOOLONG;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + (abstract ? 1 : 0), name, len);
	*ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	return 0;
}

int op_mksock(char **a)
{
	struct sockaddr_un sun;
	socklen_t len;
	int e, fd;

	if ((e = fill_sockaddr_un(&sun, &len, a[0], false)))
		return e;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	e = bind(fd, (struct sockaddr *)&sun, len) < 0 ? errno : 0;
	close(fd);
	return e;
}

int op_open_trunc(char **a)
{
	int fd = open(a[0], O_RDONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

int op_ftruncate(char **a)
{
	int fd = open(a[0], O_RDWR | O_CLOEXEC);
	int e;

	if (fd < 0)
		return errno;
	e = ftruncate(fd, 0) < 0 ? errno : 0;
	close(fd);
	return e;
}

static int compare_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

int op_ls(char **a)
{
	DIR *d = opendir(a[0]); /* glibc opens it O_CLOEXEC */
	char **names = NULL;
	size_t count = 0, cap = 0;
	struct dirent *de;
	int e = 0;

	if (!d)
		return errno;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			e = errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (count == cap) {
			char **grown;
			cap = cap ? cap * 2 : 64;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				abort();
			names = grown;
		}
		if (!(names[count++] = strdup(de->d_name)))
			abort();
	}
	closedir(d);
	if (count)
		qsort(names, count, sizeof(*names), compare_names);
	for (size_t i = 0; i < count; i++) {
		printf("%s\n", names[i]);
		free(names[i]);
	}
	free(names);
	return e;
}

int op_stat(char **a)
{
	struct stat st;

	if (lstat(a[0], &st) < 0)
		return errno;
	printf("mode=%o size=%lld\n", (unsigned)st.st_mode, (long long)st.st_size);
	return 0;
}

/* A file's mode, extended attributes and times, by each way a program
 * changes them: a path, a descriptor, an O_PATH descriptor's /proc name. */
int op_attr(char **a)
{
	const char *how = a[0], *path = a[1];
	mode_t mode = (mode_t)strtoul(a[2], NULL, 8);
	if (strcmp(how, "chmod") == 0)
		return raw_result(chmod(path, mode));
	if (strcmp(how, "fchmod") == 0 || strcmp(how, "fsetxattr") == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		int r = how[1] == 'c' ? fchmod(fd, mode) : fsetxattr(fd, "user.probe", "x", 1, 0);
		int e = errno;
		close(fd);
		return r < 0 ? e : 0;
	}
	if (strcmp(how, "opath-chmod") == 0) {
		char proc[64];
		int fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return errno;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		int r = chmod(proc, mode);
		int e = errno;
		close(fd);
		return r < 0 ? e : 0;
	}
	if (strcmp(how, "setxattr") == 0)
		return raw_result(setxattr(path, "user.probe", "x", 1, 0));
	if (strcmp(how, "acl") == 0) {
		/* a POSIX ACL giving every user what the owner has: the
		 * header, then user::, group::, other:: entries */
		struct { uint32_t version; struct { uint16_t tag, perm; uint32_t id; } e[3]; } acl = {
			2, { { 0x01, 07 & (mode >> 6), ~0u }, { 0x04, 07 & (mode >> 3), ~0u }, { 0x20, 07 & mode, ~0u } }
		};
		return raw_result(setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0));
	}
	if (strcmp(how, "utimes") == 0) {
		struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
		return raw_result(utimensat(AT_FDCWD, path, ts, 0));
	}
	fprintf(stderr, "probe: attr: chmod|fchmod|opath-chmod|setxattr|fsetxattr|acl|utimes\n");
	return 2;
}

/* A file's flags by ioctl (chattr's way): set: FS_IOC_SETFLAGS with
 * FS_NODUMP_FL added; xattr: FS_IOC_FSSETXATTR with FS_XFLAG_NODUMP
 * added; get and fsget: the read-only queries. Opened read-only, as
 * chattr opens. */
int op_fsflags(char **a)
{
	const char *how = a[0], *path = a[1];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int r = -1, flags = 0;
	struct fsxattr fx;
	if (strcmp(how, "get") == 0 || strcmp(how, "set") == 0) {
		r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
		if (r == 0 && how[0] == 's') {
			flags |= FS_NODUMP_FL;
			r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
		}
	} else if (strcmp(how, "fsget") == 0 || strcmp(how, "xattr") == 0) {
		r = ioctl(fd, FS_IOC_FSGETXATTR, &fx);
		if (r == 0 && how[0] == 'x') {
			fx.fsx_xflags |= FS_XFLAG_NODUMP;
			r = ioctl(fd, FS_IOC_FSSETXATTR, &fx);
		}
	} else if (strcmp(how, "verity") == 0) {
		/* fs-verity with SHA-256 and 4096-byte blocks, no salt */
		struct { uint32_t version, hash, block, salt_size; uint64_t salt; uint32_t sig_size, r1;
			 uint64_t sig, r2[11]; } v = { 1, 1, 4096, 0, 0, 0, 0, 0, { 0 } };
		r = ioctl(fd, 0x40806685U, &v);
	} else if (strcmp(how, "encrypt") == 0) {
		/* a v1 encryption policy (AES-256-XTS, AES-256-CTS) on a directory */
		unsigned char policy[12] = { 0, 1, 4, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
		r = ioctl(fd, 0x800c6613U, policy);
	} else {
		fprintf(stderr, "probe: fsflags: get|set|fsget|xattr|verity|encrypt\n");
		close(fd);
		return 2;
	}
	int e = errno;
	close(fd);
	return r < 0 ? e : 0;
}

/* An inotify watch on a path (tail -f's, a file watcher's); with a
 * third argument, a file of that name is then made in the watched
 * directory and the event's name printed. */
int op_inotify(char **a)
{
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (in < 0)
		return errno;
	int wd = inotify_add_watch(in, a[0], IN_CREATE | IN_OPEN | IN_MODIFY);
	if (wd < 0) {
		int e = errno;
		close(in);
		return e;
	}
	if (a[1]) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", a[0], a[1]);
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			int e = errno;
			close(in);
			return e;
		}
		close(fd);
		struct pollfd p = { .fd = in, .events = POLLIN };
		char buf[4096] __attribute__((aligned(8)));
		ssize_t n = poll(&p, 1, 2000) == 1 ? read(in, buf, sizeof(buf)) : -1;
		for (ssize_t off = 0; n > 0 && off < n;) {
			struct inotify_event *ev = (struct inotify_event *)(buf + off);
			if (ev->wd == wd && ev->len)
				printf("probe: event %s\n", ev->name);
			off += (ssize_t)(sizeof(*ev) + ev->len);
		}
	}
	close(in);
	return 0;
}

int op_exec(char **a)
{
	/* a[] is the tail of main's argv, so it is NULL-terminated already. */
	fflush(stdout);
	execv(a[0], a);
	return errno;
}

int op_cwd(char **a)
{
	char buf[PATH_MAX];

	if (!getcwd(buf, sizeof(buf)))
		return errno;
	printf("%s\n", buf);
	return 0;
}

int op_env(char **a)
{
	const char *v = getenv(a[0]);

	if (v)
		printf("%s=%s\n", a[0], v);
	else
		printf("%s unset\n", a[0]);
	return 0;
}

int op_environ(char **a)
{
	extern char **environ;

	for (char **e = environ; *e; e++)
		printf("%s\n", *e);
	return 0;
}

int op_fds(char **a)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int leaked = 0;

	if (!d)
		return errno;
	while ((de = readdir(d))) {
		char link[64], target[PATH_MAX];
		ssize_t n;
		long fd;
		char *end;

		fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name)
			continue;
		if (fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			snprintf(target, sizeof(target), "? (%s)", errno_name(errno));
		else
			target[n] = '\0';
		printf("fd %ld -> %s\n", fd, target);
		leaked++;
	}
	closedir(d);
	if (leaked) {
		printf("probe: leaked %d\n", leaked);
		return REPORTED;
	}
	return 0;
}

int op_caps(char **a)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
					    "CapAmb:", "NoNewPrivs:" };
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];

	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fputs(line, stdout);
	fclose(f);
	return 0;
}

/* What was written through fd reads back through it: 0 or the errno. */
static int write_read_back(int fd)
{
	char buf[8] = "";
	if (write(fd, "probe\n", 6) != 6 || lseek(fd, 0, SEEK_SET) != 0)
		return errno ? errno : EIO;
	if (read(fd, buf, sizeof(buf)) != 6 || memcmp(buf, "probe\n", 6) != 0)
		return errno ? errno : EIO;
	return 0;
}

/* tmpfile: glibc's tmpfile(), in /tmp whatever TMPDIR says, written and
 * read back. */
int op_tmpfile(char **a)
{
	FILE *f = tmpfile();
	if (!f)
		return errno;
	int e = write_read_back(fileno(f));
	fclose(f);
	return e;
}

/* mkstemp TEMPLATE: mkstemp(), written and read back; prints the name
 * made ("made PATH"). */
int op_mkstemp(char **a)
{
	char name[4096];
	snprintf(name, sizeof(name), "%s", a[0]);
	int fd = mkstemp(name);
	if (fd < 0)
		return errno;
	printf("made %s\n", name);
	fflush(stdout);
	int e = write_read_back(fd);
	close(fd);
	return e;
}
