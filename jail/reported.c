#include "jail/reported.h"

#include <sys/stat.h>

#include "lib/log.h"
#include "lib/util.h"

static void report_said(const char *line, void *data)
{
	report_said_line(data, line);
}

int run_reported(const char *path, int (*fn)(void *data, struct report *rep), void *data)
{
	_cleanup_close_ int fd = -1;
	if (path) {
		fd = report_open(path);
		if (fd < 0) {
			log_error("cannot write the report '%s': %s", path, strerror(-fd));
			log_hint("the report is opened before the command runs; nothing ran");
			return EXIT_STOCKADE;
		}
	}
	struct report rep;
	report_init(&rep);
	rep.out_fd = fd;
	log_tap_set(report_said, &rep);
	int status = fn(data, &rep);
	log_tap_set(NULL, NULL);
	if (fd >= 0) {
		rep.status = status;
		int e = report_write_fd(&rep, fd);
		/* the command has run: its status stands (125 would say it
		 * did not), the report's loss is said */
		if (e < 0)
			log_error("cannot write the report '%s': %s", path, strerror(-e));
		struct stat a, b;
		if (e == 0 && fstat(fd, &a) == 0 && S_ISREG(a.st_mode) &&
		    (stat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino))
			log_warn("the report '%s' was moved or replaced during the run: it went to the file opened before, "
				 "not to what the path names now", path);
	}
	report_free(&rep);
	return status;
}
