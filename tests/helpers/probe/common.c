/* probe: errno names, output, parsing and time, for every op. */
#include "tests/helpers/probe/probe.h"

struct errno_name {
	int num;
	const char *name;
};

#define E(x) { x, #x }
/* Aliases (EWOULDBLOCK, ENOTSUP, EDEADLOCK) are left out: the first name of
 * a number is the one printed. */
static const struct errno_name errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
	E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENOSTR),
	E(ENODATA), E(ETIME), E(ENOSR), E(EREMOTE), E(ENOLINK), E(EPROTO),
	E(EBADMSG), E(EOVERFLOW), E(ENOTUNIQ), E(EBADFD), E(EILSEQ),
	E(ERESTART), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ), E(EMSGSIZE),
	E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT),
	E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH),
	E(ENETRESET), E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN),
	E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS), E(ETIMEDOUT),
	E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
	E(EINPROGRESS), E(ESTALE), E(EUCLEAN), E(EREMOTEIO), E(EDQUOT),
	E(ENOMEDIUM), E(EMEDIUMTYPE), E(ECANCELED), E(ENOKEY), E(EKEYEXPIRED),
	E(EKEYREVOKED), E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE),
	E(ERFKILL), E(EHWPOISON),
};
#undef E

const char *errno_name(int e)
{
	static char number[16];

	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].num == e)
			return errno_names[i].name;
	snprintf(number, sizeof(number), "%d", e);
	return number;
}

const char *op_name = "";

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "probe: %s: ", op_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Raw bytes (a file's content, a socket's reply) may not end in a newline;
 * the result line must still start a line of its own. */
bool mid_line;

void emit_bytes(const void *buf, size_t len)
{
	if (len == 0)
		return;
	fwrite(buf, 1, len, stdout);
	mid_line = ((const char *)buf)[len - 1] != '\n';
	fflush(stdout);
}

void end_partial_line(void)
{
	if (mid_line)
		putchar('\n');
	mid_line = false;
}

long parse_long(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end)
		usage_error("bad %s '%s'", what, s);
	return v;
}

double parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		usage_error("bad seconds '%s'", s);
	return v;
}

double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep the whole time even when signals interrupt it. */
void sleep_seconds(double seconds)
{
	double end = now_monotonic() + seconds;
	double left;

	while ((left = end - now_monotonic()) > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (time_t)left) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* Turn "-ENOSYS"-style raw returns into the errno convention. */
int raw_result(long ret)
{
	if (ret < 0)
		return errno;
	return 0;
}

int parse_signal(const char *s)
{
	const char *name = s;

	if (s[0] >= '0' && s[0] <= '9')
		return (int)parse_long(s, "signal");
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && strcmp(abbrev, name) == 0)
			return sig;
	}
	usage_error("unknown signal '%s'", s);
}

void print_wait_status(const char *who, int status)
{
	if (WIFEXITED(status))
		printf("%s exit %d\n", who, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s signal SIG%s\n", who, sigabbrev_np(WTERMSIG(status)) ?: "?");
}
