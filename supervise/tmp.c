/* /tmp on the landlock backend.
 *
 * Landlock rights on a directory hold for everything beneath it, and what
 * a new file needs to be used (READ_FILE and WRITE_FILE: the kernel checks
 * them when the file is opened, O_CREAT or O_TMPFILE alike) would hold for
 * every file already there: the user's Kerberos cache krb5cc_*, other
 * tools' files, other runs' directories. So the command gets no right at
 * all on the host's /tmp, and the supervisor makes what glibc's tmpfile()
 * and mkstemp() ask for there: an O_TMPFILE open of /tmp, and an O_CREAT |
 * O_EXCL open of a new name directly in /tmp (the seccomp table shows
 * both to the listener), and the sockets the run binds directly in /tmp
 * (supervise.c). It makes them in the run's own tmp (the backend's
 * TMPDIR, supervisor_set_tmp), never in the host's /tmp: a name there is
 * seen and connected to by every program of the user's, and one the run
 * chose (/tmp/.s.PGSQL.5432, a language server's socket) would be a
 * listener planted for a tool outside to talk to, during the run. It
 * opens the file itself, through its own descriptor of that directory and
 * with the command's privileges, and hands the descriptor to the command
 * (SECCOMP_IOCTL_NOTIF_ADDFD), which writes and reads through it. What
 * the command would reach by the /tmp name afterwards (open it again,
 * unlink it) Landlock refuses; a connect to /tmp/NAME reaches the run's
 * own socket NAME. Everything goes with the run's tmp; without one (the
 * host's /tmp, when the run's tmp cannot be opened) every name made is
 * removed when the run ends, if it is still the file made. */
#include "supervise/internal.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lib/path.h"
#include "lib/util.h"

void sv_hand_over(struct supervisor *sv, uint64_t id, int fd, int flags)
{
	struct seccomp_notif_addfd add = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = (uint32_t)(flags & O_CLOEXEC),
	};
	/* The descriptor is the command's answer; an error (its table is
	 * full) is answered instead. ENOENT: the caller is gone. */
	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT)
		sv_respond(sv, id, errno);
	close(fd);
}

int sv_acting(struct supervisor *sv)
{
	if (sv->caps_own && (!sv->caps_acting || cap_set_proc(sv->caps_acting) < 0)) {
		sv->broken = true;
		return SV_REFUSED;
	}
	return 0;
}

void sv_acted(struct supervisor *sv)
{
	if (sv->caps_own)
		(void)cap_set_proc(sv->caps_own);
}

void sv_tmp_remember(struct supervisor *sv, const char *name, dev_t dev, ino_t ino)
{
	sv->made = xgrow(sv->made, sv->n_made, sizeof(*sv->made));
	sv->made[sv->n_made++] = (struct tmp_made){ .name = xstrdup(name), .dev = dev, .ino = ino };
	/* Told to the keeper before the command has the file: should
	 * stockade die, the keeper removes it. (The run's own tmp goes with
	 * its run directory.) */
	if (sv->record_fd >= 0 && !sv->tmp_path) {
		struct supervise_tmp_record rec = { .tag = SUPERVISE_TMP_RECORD, .dev = dev, .ino = ino };
		size_t len = strlen(name);
		if (len < sizeof(rec.name)) {
			memcpy(rec.name, name, len + 1);
			(void)send(sv->record_fd, &rec, offsetof(struct supervise_tmp_record, name) + len + 1,
				   MSG_NOSIGNAL);
		}
	}
}

int supervisor_set_tmp(struct supervisor *sv, const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (sv->tmp_fd >= 0)
		close(sv->tmp_fd);
	sv->tmp_fd = fd;
	free(sv->tmp_path);
	sv->tmp_path = xstrdup(dir);
	return 0;
}

void supervisor_record_tmp(struct supervisor *sv, int fd)
{
	sv->record_fd = fd;
}

int supervise_tmp_remove(const char *name, dev_t dev, ino_t ino)
{
	_cleanup_close_ int tmp = open(SV_HOST_TMP, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (tmp < 0 || fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (st.st_dev != dev || st.st_ino != ino)
		return -ESTALE;
	return unlinkat(tmp, name, 0) < 0 ? -errno : 0;
}

/* The made entry name is, if it is still that file. */
static struct tmp_made *made_here(struct supervisor *sv, const char *name, struct stat *ret_st)
{
	if (sv->tmp_fd < 0 || fstatat(sv->tmp_fd, name, ret_st, AT_SYMLINK_NOFOLLOW) < 0)
		return NULL;
	for (size_t i = 0; i < sv->n_made; i++) {
		struct tmp_made *m = &sv->made[i];
		if (streq(m->name, name) && m->dev == ret_st->st_dev && m->ino == ret_st->st_ino)
			return m;
	}
	return NULL;
}

bool sv_tmp_remove_stale_socket(struct supervisor *sv, const char *name)
{
	struct stat st;
	if (!made_here(sv, name, &st) || !S_ISSOCK(st.st_mode) || sv_run_socket_file(sv, st.st_dev, st.st_ino))
		return false;
	return unlinkat(sv->tmp_fd, name, 0) == 0;
}

/* The command's umask, from /proc/PID/status; 022 when it cannot be read. */
static mode_t umask_of(pid_t pid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Umask:", 6) == 0)
			return (mode_t)strtoul(line + 6, NULL, 8) & 0777;
	return 022;
}

/* What the supervisor makes: an O_TMPFILE open of /tmp itself (name "."),
 * or an exclusive creation of one new name directly in /tmp. NULL for
 * anything else, which goes on to the kernel (and to Landlock). */
static const char *tmp_name(const char *path, uint32_t flags, char **ret_keep)
{
	*ret_keep = NULL;
	if ((flags & O_TMPFILE) == O_TMPFILE)
		return streq(path, SV_HOST_TMP) ? "." : NULL;
	if ((flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL))
		return NULL;
	const char *name;
	char *dir = path_parent(path, &name);
	if (!dir || !streq(dir, SV_HOST_TMP) || str_empty(name) || strchr(name, '/') || streq(name, ".") ||
	    streq(name, "..")) {
		free(dir);
		return NULL;
	}
	*ret_keep = dir;
	return name;
}

bool supervisor_makes_in_tmp(struct supervisor *sv, const struct seccomp_notif *req)
{
	if (req->data.nr != SYS_openat || sv->tmp_fd < 0)
		return false;
	uint32_t flags = (uint32_t)req->data.args[2];
	if ((flags & O_TMPFILE) != O_TMPFILE && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL))
		return false;
	pid_t pid = (pid_t)req->pid;
	_cleanup_free_ char *raw = supervise_read_path(pid, req->data.args[1]);
	if (!raw)
		return false;
	_cleanup_free_ char *path = supervise_path_of(pid, (int)req->data.args[0], raw);
	_cleanup_free_ char *keep = NULL;
	const char *name = path ? tmp_name(path, flags, &keep) : NULL;
	/* Where the policy itself grants /tmp (--write /tmp), Landlock lets
	 * the command make it, and it is not removed after the run. The path
	 * was the caller's own: it was alive all along. */
	if (!name || policy_allows(sv->p, PATH_OP_WRITE, path) ||
	    !sv_id_valid(sv, req->id))
		return false;
	/* Only what these two opens mean: read and write, exclusive, never
	 * following a link; O_CLOEXEC is the command's descriptor's. */
	int how = (int)(flags & (O_ACCMODE | O_TMPFILE | O_EXCL | O_APPEND | O_NONBLOCK)) | O_CLOEXEC;
	if (!streq(name, "."))
		how |= O_CREAT | O_NOFOLLOW;
	mode_t mode = (mode_t)req->data.args[3] & 07777 & ~umask_of(pid) & ~(mode_t)(S_ISUID | S_ISGID);
	int err = sv_acting(sv);
	int fd = -1;
	if (!err) {
		fd = openat(sv->tmp_fd, name, how, mode);
		err = fd < 0 ? errno : 0;
		sv_acted(sv);
	}
	struct stat st;
	if (fd >= 0 && !streq(name, ".") && fstat(fd, &st) == 0)
		sv_tmp_remember(sv, name, st.st_dev, st.st_ino);
	if (fd < 0)
		sv_respond(sv, req->id, err);
	else
		sv_hand_over(sv, req->id, fd, (int)flags);
	return true;
}

void sv_tmp_remove_made(struct supervisor *sv)
{
	/* made_here reads every entry's name: freed only after */
	for (size_t i = 0; i < sv->n_made; i++) {
		struct stat st;
		struct tmp_made *m = &sv->made[i];
		if (made_here(sv, m->name, &st) == m)
			(void)unlinkat(sv->tmp_fd, m->name, 0);
	}
	for (size_t i = 0; i < sv->n_made; i++)
		free(sv->made[i].name);
	free(sv->made);
	sv->made = NULL;
	sv->n_made = 0;
}

unsigned long supervisor_tmp_written(struct supervisor *sv, unsigned long long *ret_bytes, char ***ret_paths)
{
	unsigned long n = 0;
	*ret_bytes = 0;
	/* In the run's own tmp, they are counted with it (its TMPDIR). */
	for (size_t i = 0; !sv->tmp_path && i < sv->n_made; i++) {
		struct stat st;
		struct tmp_made *m = &sv->made[i];
		if (made_here(sv, m->name, &st) != m || !S_ISREG(st.st_mode))
			continue;
		n++;
		*ret_bytes += (unsigned long long)st.st_size;
		if (strv_length(*ret_paths) < 3) {
			_cleanup_free_ char *path = path_join(SV_HOST_TMP, m->name);
			strv_add(ret_paths, path);
		}
	}
	return n;
}
