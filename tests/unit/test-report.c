/* report: the JSON object --report writes, against a golden file
 * (tests/golden/report.json; STOCKADE_REGEN_GOLDEN=1 rewrites it for
 * review), hostile strings escaped, every output checked by a small JSON
 * parser, denials counted, the exit as a code or a signal. */
#include "policy/report.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/util.h"
#include "tests/golden.h"
#include "tests/tap.h"

#define GOLDEN_REPORT "tests/golden/report.json"

/* ---- a strict JSON checker (RFC 8259, UTF-8 text) ---- */

struct json {
	const char *p, *end;
	const char *error;
};

static void ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static bool fail(struct json *j, const char *why)
{
	if (!j->error)
		j->error = why;
	return false;
}

/* One UTF-8 sequence, shortest form, no surrogates. */
static bool utf8(struct json *j)
{
	const unsigned char *s = (const unsigned char *)j->p;
	size_t left = (size_t)(j->end - j->p);
	unsigned c = s[0], n;
	uint32_t cp;
	if (c < 0x80)
		n = 1, cp = c;
	else if ((c & 0xe0) == 0xc0)
		n = 2, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 3, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 4, cp = c & 0x07;
	else
		return fail(j, "a byte that starts no UTF-8 sequence");
	if (left < n)
		return fail(j, "a truncated UTF-8 sequence");
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return fail(j, "a bad UTF-8 continuation byte");
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return fail(j, "an overlong or invalid UTF-8 sequence");
	j->p += n;
	return true;
}

static bool string(struct json *j)
{
	if (j->p >= j->end || *j->p != '"')
		return fail(j, "expected a string");
	j->p++;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;
		if (c < 0x20)
			return fail(j, "a raw control character in a string");
		if (c == '\\') {
			j->p++;
			if (j->p >= j->end)
				return fail(j, "a truncated escape");
			char e = *j->p++;
			if (e == 'u') {
				for (int i = 0; i < 4; i++, j->p++)
					if (j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p)
						return fail(j, "a bad \\u escape");
			} else if (!strchr("\"\\/bfnrt", e) || !e) {
				return fail(j, "an unknown escape");
			}
			continue;
		}
		if (!utf8(j))
			return false;
	}
	if (j->p >= j->end)
		return fail(j, "an unterminated string");
	j->p++;
	return true;
}

static bool value(struct json *j, int depth);

static bool number(struct json *j)
{
	const char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		return fail(j, "expected a value");
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return fail(j, "a bad fraction");
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	return j->p > s;
}

static bool literal(struct json *j, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return fail(j, "expected a value");
	j->p += n;
	return true;
}

static bool value(struct json *j, int depth)
{
	if (depth > 32)
		return fail(j, "too deep");
	ws(j);
	if (j->p >= j->end)
		return fail(j, "expected a value");
	switch (*j->p) {
	case '{':
		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return true;
		}
		for (;;) {
			ws(j);
			if (!string(j))
				return false;
			ws(j);
			if (j->p >= j->end || *j->p != ':')
				return fail(j, "expected ':'");
			j->p++;
			if (!value(j, depth + 1))
				return false;
			ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == '}') {
				j->p++;
				return true;
			}
			return fail(j, "expected ',' or '}'");
		}
	case '[':
		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return true;
		}
		for (;;) {
			if (!value(j, depth + 1))
				return false;
			ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == ']') {
				j->p++;
				return true;
			}
			return fail(j, "expected ',' or ']'");
		}
	case '"':
		return string(j);
	case 't':
		return literal(j, "true");
	case 'f':
		return literal(j, "false");
	case 'n':
		return literal(j, "null");
	default:
		return number(j);
	}
}

/* NULL when text is one valid JSON value, else why not. */
static const char *json_check(const char *text, size_t len)
{
	struct json j = { .p = text, .end = text + len };
	if (!value(&j, 0))
		return j.error;
	ws(&j);
	return j.p == j.end ? NULL : "trailing bytes after the value";
}

/* ---- rendering ---- */

static char *render(const struct report *r, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int e = report_write_json(r, f);
	fclose(f);
	if (e < 0)
		diag("report_write_json: %s", strerror(-e));
	if (ret_len)
		*ret_len = len;
	return buf;
}

static char *render_string(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_string(f, s);
	fclose(f);
	return buf;
}

static void fill(struct report *r)
{
	report_init(r);
	r->backend = "landlock";
	r->network = "loopback";
	r->fallback = xstrdup("user namespaces refused: Operation not permitted");
	report_enforced(r, "filesystem (Landlock ABI 6)");
	report_enforced(r, "seccomp allowlist");
	report_enforced(r, "seccomp allowlist");	/* said twice, kept once */
	report_enforced(r, "signal and abstract socket scoping");
	report_gap(r, "truncation", "Landlock ABI < 3");
	report_gap(r, "truncation", "Landlock ABI < 3");	/* said twice, kept once */
	report_gap(r, "orphans after a killed stockade", "no delegated cgroup");
	r->supervisor = true;
	strv_add(&r->supervises, "connect");
	strv_add(&r->supervises, "bind");
	report_denial(r, "syscall", "keyctl", "EPERM");
	report_denial_ruled(r, "connect", "10.0.0.1:443", "EHOSTUNREACH", "network loopback", "--net on the command line",
			    "--net on, or in stockade.ini: network = on");
	report_denial(r, "syscall", "keyctl", "EPERM");
	report_denial(r, "syscall", "keyctl", "EPERM");
	report_denial(r, "syscall", "keyctl", "ENOSYS");	/* another errno: another entry */
	report_denial(r, "handoff", ".git/hooks/pre-commit", "created; moved to quarantine");
	r->exited = true;
	r->exit_code = 3;
	r->status = 3;
	report_said_line(r, "stockade: undid a change to trust hand-off '.git/hooks/pre-commit' (created)");
	report_said_line(r, "hint: stockade quarantine lists what was set aside");
	r->setup_us = 1234;
	r->run_us = 56789012;
}

static void test_golden(void)
{
	struct report r;
	fill(&r);
	size_t len;
	_cleanup_free_ char *got = render(&r, &len);
	report_free(&r);

	const char *why = json_check(got, len);
	if (!ok(why == NULL, "the filled report is valid JSON"))
		diag("  %s", why);

	golden_check(GOLDEN_REPORT, got, len, "report JSON");

	/* The fields, so that a wrong golden file cannot be blessed unseen. */
	ok(!!strstr(got, "\"backend\": \"landlock\""), "backend");
	ok(!!strstr(got, "\"network\": \"loopback\""), "network");
	ok(!!strstr(got, "{\"kind\": \"syscall\", \"what\": \"keyctl\", \"errno\": \"EPERM\", \"rule\": null, "
		       "\"source\": null, \"fix\": null, \"count\": 3}"),
	   "keyctl EPERM counted three times in one entry");
	ok(!!strstr(got, "{\"kind\": \"syscall\", \"what\": \"keyctl\", \"errno\": \"ENOSYS\", \"rule\": null, "
		       "\"source\": null, \"fix\": null, \"count\": 1}"),
	   "keyctl ENOSYS is another entry");
	ok(!!strstr(got, "{\"kind\": \"connect\", \"what\": \"10.0.0.1:443\", \"errno\": \"EHOSTUNREACH\", "
		       "\"rule\": \"network loopback\", \"source\": \"--net on the command line\", "
		       "\"fix\": \"--net on, or in stockade.ini: network = on\", \"count\": 1}"),
	   "a denial with its rule, source and fix");
	ok(!!strstr(got, "\"exit\": {\"code\": 3}"), "exit code 3");
	ok(!!strstr(got, "\"ms\": {\"setup\": 1.234, \"run\": 56789.012}"), "setup and run in ms");
	ok(!!strstr(got, "\"enforced\": [\"filesystem (Landlock ABI 6)\", \"seccomp allowlist\", "
		       "\"signal and abstract socket scoping\"]"),
	   "enforced, each once, in order");
	const char *first = strstr(got, "{\"what\": \"truncation\", \"why\": \"Landlock ABI < 3\"}");
	ok(first && !strstr(first + 1, "{\"what\": \"truncation\""), "a gap said twice is kept once");
	ok(!!strstr(got, "\"supervisor\": {\"served_whole_run\": true, \"decides\": [\"connect\", \"bind\"]}"),
	   "supervisor");
}

static void test_empty(void)
{
	struct report r;
	report_init(&r);
	size_t len;
	_cleanup_free_ char *got = render(&r, &len);
	const char *why = json_check(got, len);
	if (!ok(why == NULL, "an empty report is valid JSON"))
		diag("  %s", why);
	ok(!!strstr(got, "\"backend\": \"none\"") && strstr(got, "\"fallback\": null") &&
		   strstr(got, "\"unenforced\": []") && strstr(got, "\"denials\": []") &&
		   strstr(got, "\"exit\": null") && strstr(got, "\"served_whole_run\": false"),
	   "an empty report: backend none, null fallback, empty lists, exit null");
	_cleanup_free_ char *line = report_denials_line(&r);
	is_str(line, "", "no denials: an empty line");
	report_free(&r);
}

static void test_hostile(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "\"plain\"" },
		{ "", "\"\"" },
		{ "a\"b", "\"a\\\"b\"" },
		{ "back\\slash", "\"back\\\\slash\"" },
		{ "new\nline", "\"new\\nline\"" },
		{ "tab\there", "\"tab\\there\"" },
		{ "cr\r", "\"cr\\u000d\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
		{ "\x1b[31mred", "\"\\u001b[31mred\"" },
		{ "/tmp/\"x\"\\\n.txt", "\"/tmp/\\\"x\\\"\\\\\\n.txt\"" },
		{ "caf\xc3\xa9 \xe2\x9c\x93", "\"caf\xc3\xa9 \xe2\x9c\x93\"" },	/* UTF-8 passes unchanged */
		{ "</script>", "\"</script>\"" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *got = render_string(cases[i].in);
		is_str(got, cases[i].out, "json_string case %zu", i);
		const char *why = json_check(got, strlen(got));
		if (!ok(why == NULL, "json_string case %zu is valid JSON", i))
			diag("  %s", why);
	}
	_cleanup_free_ char *null = render_string(NULL);
	is_str(null, "\"\"", "json_string(NULL) is \"\"");

	/* A whole report full of hostile strings stays one valid object. */
	struct report r;
	report_init(&r);
	r.backend = "land\"lock";
	r.fallback = xstrdup("why\nwith\\\"newline\x01");
	report_enforced(&r, "\t\"quoted\"\n");
	report_gap(&r, "a\\b", "c\rd");
	/* One part left out for two reasons (Landlock of an old ABI): both. */
	report_gap(&r, "landlock", "one reason");
	report_gap(&r, "landlock", "another");
	ok(r.n_gaps >= 3 && streq(r.gaps[r.n_gaps - 2].why, "one reason") && streq(r.gaps[r.n_gaps - 1].why, "another"),
	   "a part left out for two reasons keeps both");
	strv_add(&r.supervises, "\x7f");
	report_denial(&r, "connect", "/run/user/1000/\"sock\"\n", "EACCES");
	r.exited = true;
	size_t len;
	_cleanup_free_ char *got = render(&r, &len);
	const char *why = json_check(got, len);
	if (!ok(why == NULL, "a report of hostile strings is valid JSON"))
		diag("  %s", why);
	ok(!!strstr(got, "\"fallback\": \"why\\nwith\\\\\\\"newline\\u0001\""), "the fallback is escaped");
	report_free(&r);

	/* Linux paths are bytes, not UTF-8: a file name from the workspace
	 * (a hand-off the guard undid, a socket path) can hold any byte but
	 * '/' and NUL. JSON text must be UTF-8, so the report must escape or
	 * replace such bytes, or every strict reader refuses the whole file. */
	_cleanup_free_ char *bin = render_string("/w/\xff\xfe-\xc3(.txt");
	why = json_check(bin, strlen(bin));
	if (!ok(why == NULL, "json_string of a non-UTF-8 path is valid JSON (UTF-8)")) {
		char shown[128];
		size_t n = 0;
		for (const unsigned char *c = (const unsigned char *)bin; *c && n + 5 < sizeof(shown); c++)
			n += (size_t)snprintf(shown + n, sizeof(shown) - n, *c < 0x80 ? "%c" : "\\x%02x", *c);
		diag("  %s; got %s", why, shown);
	}
}

static void test_denials(void)
{
	struct report r;
	report_init(&r);
	report_denial(&r, "syscall", "keyctl", "EPERM");
	report_denial(&r, "syscall", "keyctl", "EPERM");
	report_denial(&r, "syscall", "keyctl", "EPERM");
	report_denial(&r, "connect", "127.0.0.1:5432", "EHOSTUNREACH");
	report_denial(&r, "syscall", "bpf", "EPERM");
	report_denial(&r, "connect", "127.0.0.1:5432", "EHOSTUNREACH");
	is_int(r.n_denials, 3, "three distinct denials");
	is_int(r.denials[0].count, 3, "keyctl counted three times");
	is_int(r.denials[1].count, 2, "the connect counted twice");
	is_int(r.denials[2].count, 1, "bpf once");
	_cleanup_free_ char *line = report_denials_line(&r);
	is_str(line, "syscall keyctl (EPERM) x3, connect 127.0.0.1:5432 (EHOSTUNREACH) x2, syscall bpf (EPERM)",
	       "the denials on one line, in order, with counts");
	report_free(&r);
	is_int(r.n_denials, 0, "report_free empties the report");
}

static const char *exit_of(const struct report *r, char **ret_buf)
{
	size_t len;
	*ret_buf = render(r, &len);
	return strstr(*ret_buf, "\"exit\": ");
}

static void test_exit(void)
{
	struct report r;
	char *buf;
	const char *e;

	report_init(&r);
	r.exited = true;
	r.exit_code = 0;
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": {\"code\": 0},"), "exit code 0");
	free(buf);
	r.exit_code = 255;
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": {\"code\": 255},"), "exit code 255");
	free(buf);
	r.exit_code = 137;	/* a shell's 128+9 is a code, not a signal */
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": {\"code\": 137},"), "exit code 137 stays a code");
	free(buf);
	r.signal = SIGKILL;
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": {\"signal\": \"SIGKILL\"},"), "killed by SIGKILL: the signal, not the code");
	free(buf);
	r.signal = SIGSEGV;
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": {\"signal\": \"SIGSEGV\"},"), "SIGSEGV");
	free(buf);
	r.signal = SIGTERM;
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": {\"signal\": \"SIGTERM\"},"), "SIGTERM");
	free(buf);
	r.exited = false;
	e = exit_of(&r, &buf);
	ok(e && str_has_prefix(e, "\"exit\": null,"), "did not run: exit null");
	free(buf);
	report_free(&r);
}

static void test_write_file(void)
{
	/* TMPDIR first: the census runs this test inside the jail. */
	const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] == '/' ? getenv("TMPDIR") : "/tmp";
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/stockade-test-report-XXXXXX", tmp);
	if (!ok(mkdtemp(dir) != NULL, "mkdtemp"))
		return;
	_cleanup_free_ char *path = xasprintf("%s/report.json", dir);
	struct report r;
	fill(&r);
	is_int(report_write(&r, path), 0, "report_write to a new file");
	size_t len;
	_cleanup_free_ char *want = render(&r, &len);
	_cleanup_free_ char *got = NULL;
	size_t got_len = 0;
	read_file_at(AT_FDCWD, path, 64 * 1024, &got, &got_len);
	ok(got && got_len == len && memcmp(got, want, len) == 0, "the file holds what report_write_json renders");
	/* A second write truncates. */
	report_free(&r);
	report_init(&r);
	is_int(report_write(&r, path), 0, "report_write over an existing file");
	_cleanup_free_ char *small = render(&r, &len);
	free(got);
	got = NULL;
	read_file_at(AT_FDCWD, path, 64 * 1024, &got, &got_len);
	ok(got && got_len == len && memcmp(got, small, len) == 0, "the old content is gone");
	_cleanup_free_ char *missing = xasprintf("%s/no/such/dir/r.json", dir);
	is_int(report_write(&r, missing), -ENOENT, "report_write into a missing directory: -ENOENT");
	report_free(&r);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_golden();
	test_empty();
	test_hostile();
	test_denials();
	test_exit();
	test_write_file();
	return tap_done();
}
