#include "policy/report.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "lib/util.h"

void report_init(struct report *r)
{
	*r = (struct report){ .backend = "none", .network = "off", .out_fd = -1 };
	r->enforced = strv_new();
	r->supervises = strv_new();
	r->said = strv_new();
	r->notes = strv_new();
}

void report_said_line(struct report *r, const char *line)
{
	strv_add(&r->said, line);
}

void report_note(struct report *r, const char *line)
{
	if (!strv_contains(r->notes, line))
		strv_add(&r->notes, line);
}

void report_discarded(struct report *r, const char *place, unsigned long files, unsigned long long bytes,
		      char *const *paths, const char *keep)
{
	r->discards = xgrow(r->discards, r->n_discards, sizeof(*r->discards));
	struct discard *d = &r->discards[r->n_discards++];
	*d = (struct discard){ .place = xstrdup(place), .files = files, .bytes = bytes, .paths = strv_new(),
			       .keep = xstrdup(keep) };
	for (size_t i = 0; paths && paths[i]; i++)
		strv_add(&d->paths, paths[i]);
}

void report_free(struct report *r)
{
	strv_free(r->enforced);
	strv_free(r->supervises);
	strv_free(r->said);
	strv_free(r->notes);
	for (size_t i = 0; i < r->n_discards; i++) {
		free(r->discards[i].place);
		strv_free(r->discards[i].paths);
		free(r->discards[i].keep);
	}
	free(r->discards);
	free(r->fallback);
	for (size_t i = 0; i < r->n_gaps; i++) {
		free(r->gaps[i].what);
		free(r->gaps[i].why);
	}
	free(r->gaps);
	for (size_t i = 0; i < r->n_denials; i++) {
		free(r->denials[i].kind);
		free(r->denials[i].what);
		free(r->denials[i].rule);
		free(r->denials[i].source);
		free(r->denials[i].fix);
		free(r->denials[i].error);
	}
	free(r->denials);
	for (size_t i = 0; i < r->n_names; i++) {
		free(r->names[i].name);
		free(r->names[i].type);
		free(r->names[i].verdict);
		free(r->names[i].answer);
	}
	free(r->names);
	for (size_t i = 0; i < r->n_conns; i++) {
		free(r->conns[i].name);
		free(r->conns[i].address);
		free(r->conns[i].verdict);
		free(r->conns[i].why);
	}
	free(r->conns);
	*r = (struct report){ 0 };
}

static bool same(const char *a, const char *b)
{
	return a && b ? streq(a, b) : a == b;
}

void report_name(struct report *r, const char *name, const char *type, const char *verdict, const char *answer)
{
	for (size_t i = 0; i < r->n_names; i++) {
		struct name_record *n = &r->names[i];
		if ((same(n->name, name) && same(n->type, type) && same(n->verdict, verdict) && same(n->answer, answer)) ||
		    (i == REPORT_RECORDS && streq(n->name, "(further names)"))) {
			n->count++;
			return;
		}
	}
	if (r->n_names == REPORT_RECORDS) {
		name = "(further names)";
		type = verdict = "";
		answer = NULL;
	}
	r->names = xgrow(r->names, r->n_names, sizeof(*r->names));
	r->names[r->n_names++] = (struct name_record){ .name = xstrdup(name), .type = xstrdup(type), .verdict = xstrdup(verdict),
						       .answer = answer ? xstrdup(answer) : NULL, .count = 1 };
}

void report_connection(struct report *r, const char *name, const char *address, const char *verdict, const char *why,
		       unsigned long long up, unsigned long long down)
{
	for (size_t i = 0; i < r->n_conns; i++) {
		struct conn_record *c = &r->conns[i];
		if ((same(c->name, name) && same(c->address, address) && same(c->verdict, verdict) && same(c->why, why)) ||
		    (i == REPORT_RECORDS && streq(c->address, "(further connections)"))) {
			c->count++;
			c->up += up;
			c->down += down;
			return;
		}
	}
	if (r->n_conns == REPORT_RECORDS) {
		name = why = NULL;
		address = "(further connections)";
		verdict = "";
	}
	r->conns = xgrow(r->conns, r->n_conns, sizeof(*r->conns));
	r->conns[r->n_conns++] = (struct conn_record){
		.name = name ? xstrdup(name) : NULL,
		.address = xstrdup(address),
		.verdict = xstrdup(verdict),
		.why = why ? xstrdup(why) : NULL,
		.up = up,
		.down = down,
		.count = 1,
	};
}

void report_reset_plan(struct report *r)
{
	strv_free(r->enforced);
	r->enforced = strv_new();
	for (size_t i = 0; i < r->n_gaps; i++) {
		free(r->gaps[i].what);
		free(r->gaps[i].why);
	}
	free(r->gaps);
	r->gaps = NULL;
	r->n_gaps = 0;
}

void report_enforced(struct report *r, const char *what)
{
	if (!strv_contains(r->enforced, what))
		strv_add(&r->enforced, what);
}

void report_gap(struct report *r, const char *what, const char *why)
{
	for (size_t i = 0; i < r->n_gaps; i++)
		if (streq(r->gaps[i].what, what) && streq(r->gaps[i].why, why))
			return;
	r->gaps = xgrow(r->gaps, r->n_gaps, sizeof(*r->gaps));
	r->gaps[r->n_gaps++] = (struct gap){ .what = xstrdup(what), .why = xstrdup(why) };
}

void report_denial_ruled(struct report *r, const char *kind, const char *what, const char *error, const char *rule,
			 const char *source, const char *fix)
{
	for (size_t i = 0; i < r->n_denials; i++) {
		struct denial *d = &r->denials[i];
		if (streq(d->kind, kind) && streq(d->what, what) && streq(d->error, error)) {
			d->count++;
			return;
		}
	}
	r->denials = xgrow(r->denials, r->n_denials, sizeof(*r->denials));
	r->denials[r->n_denials++] = (struct denial){
		.kind = xstrdup(kind),
		.what = xstrdup(what),
		.error = xstrdup(error),
		.rule = rule ? xstrdup(rule) : NULL,
		.source = source ? xstrdup(source) : NULL,
		.fix = fix ? xstrdup(fix) : NULL,
		.count = 1,
	};
}

bool report_records_full(const struct report *r, const char *kind, const char *what)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_denials; i++) {
		if (!streq(r->denials[i].kind, kind))
			continue;
		if (streq(r->denials[i].what, what))
			return false;
		n++;
	}
	return n >= REPORT_RECORDS;
}

void report_denial(struct report *r, const char *kind, const char *what, const char *error)
{
	report_denial_ruled(r, kind, what, error, NULL, NULL, NULL);
}

char *report_denials_line(const struct report *r)
{
	return report_denials_line_since(r, NULL, 0);
}

unsigned *report_denial_counts(const struct report *r, size_t *ret_n)
{
	unsigned *v = xcalloc(r->n_denials ? r->n_denials : 1, sizeof(*v));
	for (size_t i = 0; i < r->n_denials; i++)
		v[i] = r->denials[i].count;
	*ret_n = r->n_denials;
	return v;
}

char *report_denials_line_since(const struct report *r, const unsigned *counts, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *fix = NULL;
	bool any = false;
	for (size_t i = 0; i < r->n_denials; i++) {
		const struct denial *d = &r->denials[i];
		unsigned count = d->count - (i < n && counts[i] <= d->count ? counts[i] : 0);
		if (!count)
			continue;
		fprintf(f, "%s%s %s (%s)", any ? ", " : "", d->kind, d->what, d->error);
		any = true;
		if (count > 1)
			fprintf(f, " x%u", count);
		if (!fix && d->fix && !str_has_prefix(d->fix, "none"))
			fix = d->fix;
	}
	/* the way to allow the first that can be allowed; the report has
	 * each one's */
	if (fix)
		fprintf(f, "; to allow: %s", fix);
	fclose(f);
	return buf;
}

/* The length of the valid UTF-8 sequence at p, or 0. */
void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		/* Plain ASCII written a run at a time. */
		size_t plain = 0;
		while (p[plain] >= 0x20 && p[plain] < 0x7f && p[plain] != '"' && p[plain] != '\\')
			plain++;
		if (plain) {
			fwrite(p, 1, plain, f);
			p += plain - 1;
			continue;
		}
		/* A file name need not be UTF-8; JSON must be: a byte that is
		 * not becomes U+FFFD. */
		size_t n = utf8_char_len(p);
		if (n == 0) {
			fputs("\\ufffd", f);
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n - 1;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void json_string_or_null(FILE *f, const char *s)
{
	if (s)
		json_string(f, s);
	else
		fputs("null", f);
}

static void json_strv(FILE *f, char *const *v)
{
	fputc('[', f);
	for (size_t i = 0; v && v[i]; i++) {
		if (i)
			fputs(", ", f);
		json_string(f, v[i]);
	}
	fputc(']', f);
}

/* A signal's name: the standard ones by their macros (their numbers
 * differ between Linux and macOS); sigabbrev_np is glibc's alone. */
static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" },	{ SIGINT, "SIGINT" },	  { SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },	  { SIGBUS, "SIGBUS" },	  { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" },	  { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },	  { SIGTERM, "SIGTERM" }, { SIGCHLD, "SIGCHLD" },
		{ SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },	  { SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" },
		{ SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" },	  { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
		{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" }, { SIGWINCH, "SIGWINCH" }, { SIGSYS, "SIGSYS" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "SIG?";
}

int report_write_json(const struct report *r, FILE *f)
{
	fputs("{\n  \"backend\": ", f);
	json_string(f, r->backend);
	fputs(",\n  \"fallback\": ", f);
	if (r->fallback)
		json_string(f, r->fallback);
	else
		fputs("null", f);
	fputs(",\n  \"network\": ", f);
	json_string(f, r->network);
	fputs(",\n  \"enforced\": ", f);
	json_strv(f, r->enforced);
	fputs(",\n  \"unenforced\": [", f);
	for (size_t i = 0; i < r->n_gaps; i++) {
		fputs(i ? ",\n    {\"what\": " : "\n    {\"what\": ", f);
		json_string(f, r->gaps[i].what);
		fputs(", \"why\": ", f);
		json_string(f, r->gaps[i].why);
		fputc('}', f);
	}
	fputs(r->n_gaps ? "\n  ],\n" : "],\n", f);
	fprintf(f, "  \"supervisor\": {\"served_whole_run\": %s, \"decides\": ", r->supervisor ? "true" : "false");
	json_strv(f, r->supervises);
	fputs("},\n  \"denials\": [", f);
	for (size_t i = 0; i < r->n_denials; i++) {
		const struct denial *d = &r->denials[i];
		fputs(i ? ",\n    {\"kind\": " : "\n    {\"kind\": ", f);
		json_string(f, d->kind);
		fputs(", \"what\": ", f);
		json_string(f, d->what);
		fputs(", \"errno\": ", f);
		json_string(f, d->error);
		fputs(", \"rule\": ", f);
		json_string_or_null(f, d->rule);
		fputs(", \"source\": ", f);
		json_string_or_null(f, d->source);
		fputs(", \"fix\": ", f);
		json_string_or_null(f, d->fix);
		fprintf(f, ", \"count\": %u}", d->count);
	}
	fputs(r->n_denials ? "\n  ],\n" : "],\n", f);
	fputs("  \"discarded\": [", f);
	for (size_t i = 0; i < r->n_discards; i++) {
		const struct discard *d = &r->discards[i];
		fputs(i ? ",\n    {\"place\": " : "\n    {\"place\": ", f);
		json_string(f, d->place);
		fprintf(f, ", \"files\": %lu, \"bytes\": %llu, \"paths\": ", d->files, d->bytes);
		json_strv(f, d->paths);
		fputs(", \"keep\": ", f);
		json_string(f, d->keep);
		fputc('}', f);
	}
	fputs(r->n_discards ? "\n  ],\n" : "],\n", f);
	if (r->allowlist) {
		fputs("  \"names\": [", f);
		for (size_t i = 0; i < r->n_names; i++) {
			const struct name_record *n = &r->names[i];
			fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
			json_string(f, n->name);
			fputs(", \"type\": ", f);
			json_string(f, n->type);
			fputs(", \"verdict\": ", f);
			json_string(f, n->verdict);
			fputs(", \"answer\": ", f);
			json_string_or_null(f, n->answer);
			fprintf(f, ", \"count\": %u}", n->count);
		}
		fputs(r->n_names ? "\n  ],\n" : "],\n", f);
		fputs("  \"connections\": [", f);
		for (size_t i = 0; i < r->n_conns; i++) {
			const struct conn_record *c = &r->conns[i];
			fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
			json_string_or_null(f, c->name);
			fputs(", \"address\": ", f);
			json_string(f, c->address);
			fputs(", \"verdict\": ", f);
			json_string(f, c->verdict);
			fputs(", \"why\": ", f);
			json_string_or_null(f, c->why);
			fprintf(f, ", \"bytes_out\": %llu, \"bytes_in\": %llu, \"count\": %u}", c->up, c->down, c->count);
		}
		fputs(r->n_conns ? "\n  ],\n" : "],\n", f);
	}
	fputs("  \"exit\": ", f);
	if (!r->exited) {
		fputs("null", f);
	} else if (r->signal) {
		fputs("{\"signal\": ", f);
		json_string(f, signal_name(r->signal));
		fputc('}', f);
	} else {
		fprintf(f, "{\"code\": %d}", r->exit_code);
	}
	fprintf(f, ",\n  \"stockade\": {\"status\": %d, \"command_ran\": %s, \"ended\": ", r->status,
		r->exited ? "true" : "false");
	if (r->ended) {
		fputs("{\"by\": \"keeper\", \"why\": ", f);
		json_string(f, r->ended);
		fputc('}', f);
	} else {
		fputs("{\"by\": \"stockade\"}", f);
	}
	fputs(", \"said\": ", f);
	json_strv(f, r->said);
	fputs(", \"notes\": ", f);
	json_strv(f, r->notes);
	fprintf(f, "},\n  \"ms\": {\"setup\": %.3f, \"run\": %.3f}\n}\n", r->setup_us / 1000.0,
		r->run_us / 1000.0);
	return ferror(f) ? -EIO : 0;
}

int report_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
	if (fd < 0)
		return -errno;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int report_write_fd(const struct report *r, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0))
		return -errno;
	int dfd = dup(fd);
	if (dfd < 0)
		return -errno;
	FILE *f = fdopen(dfd, "w");
	if (!f) {
		int e = -errno;
		close(dfd);
		return e;
	}
	int ret = report_write_json(r, f);
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	return ret;
}

int report_write(const struct report *r, const char *path)
{
	int fd = report_open(path);
	if (fd < 0)
		return fd;
	int ret = report_write_fd(r, fd);
	close(fd);
	return ret;
}
