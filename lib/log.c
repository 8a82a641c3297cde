#include "lib/log.h"

#include <stdarg.h>

int log_verbosity;

static void (*tap)(const char *line, void *data);
static void *tap_data;

void log_tap_set(void (*fn)(const char *line, void *data), void *data)
{
	tap = fn;
	tap_data = data;
}

static void say_tapped(const char *prefix, bool tapped, const char *fmt, va_list ap)
{
	/* One write, so lines from stockade and the command do not mix. */
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s", prefix);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n] = '\0';
	/* Names come from disk and from the command (a hand-off named
	 * "tasks\n.json", or with an escape sequence in it): one line, and
	 * nothing in it a terminal would act on. No allocation: a line may
	 * be said where malloc is not safe. */
	char line[sizeof(buf) * 2];
	size_t len = str_visible_into(line, sizeof(line) - 1, buf);
	if (tapped && tap)
		tap(line, tap_data);
	line[len++] = '\n';
	(void)!write(STDERR_FILENO, line, len);
}

static void say(const char *prefix, const char *fmt, va_list ap)
{
	say_tapped(prefix, false, fmt, ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_tapped("stockade: ", true, fmt, ap);
	va_end(ap);
}

void log_hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_tapped("hint: ", true, fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("stockade: ", fmt, ap);
	va_end(ap);
}

void log_note(const char *fmt, ...)
{
	if (log_verbosity < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	say("stockade: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	if (log_verbosity < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	say("stockade: ", fmt, ap);
	va_end(ap);
}
