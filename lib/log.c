#include "lib/log.h"

#include <stdarg.h>

int log_verbosity;

static void say(const char *prefix, const char *fmt, va_list ap)
{
	/* One write, so lines from stockade and the command do not mix. */
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s", prefix);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, (size_t)n);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("stockade: ", fmt, ap);
	va_end(ap);
}

void log_hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("hint: ", fmt, ap);
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
