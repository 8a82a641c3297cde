#include "jail/ids.h"

#include <fcntl.h>

#include "lib/fd.h"
#include "lib/util.h"

/* /proc/PID/FILE, or /proc/self/FILE for pid 0. */
static int write_proc(pid_t pid, const char *file, const char *content)
{
	char path[64], buf[21];
	stpcpy(stpcpy(stpcpy(stpcpy(path, "/proc/"), pid ? fmt_u64(buf, (uint64_t)pid) : "self"), "/"), file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write_all(fd, content, strlen(content));
}

int ids_map(pid_t pid, uid_t uid, gid_t gid)
{
	int r = write_proc(pid, "setgroups", "deny");
	if (r < 0 && r != -ENOENT)
		return r;
	const struct {
		const char *file;
		unsigned id;
	} maps[] = { { "uid_map", uid }, { "gid_map", gid } };
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++) {
		char line[64], buf[21];
		const char *id = fmt_u64(buf, maps[i].id);
		stpcpy(stpcpy(stpcpy(stpcpy(line, id), " "), id), " 1\n");
		if ((r = write_proc(pid, maps[i].file, line)) < 0)
			return r;
	}
	return 0;
}
