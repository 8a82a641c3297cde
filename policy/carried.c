#include "policy/carried.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "policy/allow.h"

/* A tab, then s with its backslashes, tabs and newlines escaped: the
 * plain runs between them written whole (the text is written on every
 * run, some 20 KiB of paths). */
static void put_field(FILE *f, const char *s)
{
	fputc('\t', f);
	while (s && *s) {
		size_t n = strcspn(s, "\\\t\n");
		fwrite(s, 1, n, f);
		s += n;
		if (!*s)
			break;
		fputs(*s == '\\' ? "\\\\" : *s == '\t' ? "\\t" : "\\n", f);
		s++;
	}
}

/* A tab, then v in decimal (no printf: a run writes some hundreds). */
static void put_uint(FILE *f, uint64_t v)
{
	char buf[21];
	fputc('\t', f);
	fputs(fmt_u64(buf, v), f);
}

static void put_source(FILE *f, const struct source *s)
{
	put_uint(f, (uint64_t)s->kind);
	put_field(f, s->key);
	put_field(f, s->file);
	put_uint(f, s->line);
}

static void put_rule(FILE *f, const struct rule *r)
{
	fputs("rule\t", f);
	fputs(access_name(r->access), f);
	put_uint(f, r->flags);
	put_field(f, r->path);
	put_field(f, r->origin);
	put_source(f, &r->source);
	fputc('\n', f);
}

char *policy_carry(const struct policy *p, enum backend backend)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		out_of_memory();
		return NULL;	/* not reached: for the analysers */
	}
	fprintf(f, "stockade-policy 1\nbackend\t%s\n", backend_name(backend));
	fputs("workspace", f);
	put_field(f, p->workspace);
	fputs("\ncwd", f);
	put_field(f, p->cwd);
	fprintf(f, "\nnet\t%s", net_mode_name(p->net));
	put_source(f, &p->net_source);
	fputc('\n', f);
	for (size_t i = 0; i < p->n_grants; i++) {
		const struct net_grant *g = &p->grants[i];
		fprintf(f, "grant\t%d", (int)g->kind);
		put_field(f, g->host);
		fprintf(f, "\t%u\t%u", g->port, g->jail_port);
		put_field(f, g->path);
		put_source(f, &g->source);
		fputc('\n', f);
	}
	for (size_t i = 0; i < p->n_standings; i++) {
		fputs("file", f);
		put_field(f, p->standings[i].path);
		put_field(f, p->standings[i].standing);
		fputc('\n', f);
	}
	for (size_t i = 0; i < p->n_allow; i++) {
		const struct allow_entry *a = &p->allow[i];
		fprintf(f, "allow\t%d\t%u", a->wildcard ? 1 : 0, a->port);
		put_field(f, a->name);
		put_field(f, a->list);
		put_source(f, &a->source);
		fputc('\n', f);
	}
	for (size_t i = 0; i < policy_n_all(p); i++)
		put_rule(f, policy_rule_at(p, i));
	if (fclose(f) != 0)
		out_of_memory();
	return text;
}

/* The line's fields, unescaped in place; at most max. */
static size_t split(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *w = line;
	fields[n++] = w;
	for (char *r = line; *r; r++) {
		if (*r == '\t') {
			*w++ = '\0';
			if (n == max)
				return max + 1;
			fields[n++] = w;
		} else if (*r == '\\' && r[1]) {
			r++;
			*w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return n;
}

static bool read_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > max)
		return false;
	*ret = v;
	return true;
}

/* The strings a source names, kept by the policy. */
static const char *keep(struct policy *p, const char *s)
{
	if (!*s)
		return NULL;
	strv_add(&p->files, s);
	return p->files[strv_length(p->files) - 1];
}

static bool read_source(struct policy *p, char **f, struct source *ret)
{
	unsigned long kind, line;
	if (!read_uint(f[0], SOURCE_OPTION, &kind) || !read_uint(f[3], ~0u, &line))
		return false;
	*ret = (struct source){ .kind = (enum source_kind)kind, .key = keep(p, f[1]), .file = keep(p, f[2]),
				.line = (unsigned)line };
	return true;
}

static bool read_record(struct policy *p, char **f, size_t n, enum backend *ret_backend)
{
	if (n == 2 && streq(f[0], "backend"))
		return backend_from_name(f[1], ret_backend) == 0;
	if (n == 2 && (streq(f[0], "workspace") || streq(f[0], "cwd"))) {
		char **at = streq(f[0], "workspace") ? &p->workspace : &p->cwd;
		free(*at);
		*at = f[1][0] == '/' ? xstrdup(f[1]) : NULL;
		return *at != NULL;
	}
	if (n == 6 && streq(f[0], "net"))
		return net_mode_from_name(f[1], &p->net) == 0 && read_source(p, f + 2, &p->net_source);
	if (n == 10 && streq(f[0], "grant")) {
		unsigned long kind, port, jail_port;
		struct net_grant g = { 0 };
		if (!read_uint(f[1], GRANT_CONNECT_UNIX, &kind) || !read_uint(f[3], 65535, &port) ||
		    !read_uint(f[4], 65535, &jail_port) || !read_source(p, f + 6, &g.source))
			return false;
		g.kind = (enum grant_kind)kind;
		g.host = f[2][0] ? xstrdup(f[2]) : NULL;
		g.port = (unsigned short)port;
		g.jail_port = (unsigned short)jail_port;
		g.path = f[5][0] ? xstrdup(f[5]) : NULL;
		p->grants = xgrow(p->grants, p->n_grants, sizeof(*p->grants));
		p->grants[p->n_grants++] = g;
		return true;
	}
	if (n == 3 && streq(f[0], "file")) {
		if (f[1][0] != '/')
			return false;
		p->standings = xgrow(p->standings, p->n_standings, sizeof(*p->standings));
		p->standings[p->n_standings++] = (struct settings_file){ .path = xstrdup(f[1]), .standing = xstrdup(f[2]) };
		return true;
	}
	if (n == 9 && streq(f[0], "allow")) {
		unsigned long wildcard, port;
		struct allow_entry a = { 0 };
		char name[ALLOW_NAME_MAX + 1];
		if (!read_uint(f[1], 1, &wildcard) || !read_uint(f[2], 65535, &port) ||
		    allow_name_normalize(f[3], name) < 0 || !read_source(p, f + 5, &a.source))
			return false;
		/* A list's name, as the table spells it (static). */
		for (size_t i = 0; i < allow_n_lists && f[4][0]; i++)
			if (streq(allow_lists[i].name, f[4]))
				a.list = allow_lists[i].name;
		a.name = xstrdup(name);
		a.wildcard = wildcard;
		a.port = (unsigned short)port;
		p->allow = xgrow(p->allow, p->n_allow, sizeof(*p->allow));
		p->allow[p->n_allow++] = a;
		return true;
	}
	if (n == 9 && streq(f[0], "rule")) {
		enum access a;
		unsigned long flags;
		struct source s;
		if (access_from_name(f[1], &a) < 0 || !read_uint(f[2], ~0u, &flags) || f[3][0] != '/' ||
		    !read_source(p, f + 5, &s))
			return false;
		policy_add_rule(p, f[3], a, (unsigned)flags, s, f[4][0] ? f[4] : NULL);
		return true;
	}
	return false;
}

int policy_uncarry(const char *text, struct policy *ret, enum backend *ret_backend, unsigned *ret_line)
{
	policy_init(ret);
	*ret_backend = BACKEND_AUTO;
	*ret_line = 1;
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;
	char *line = strtok_r(copy, "\n", &save);
	if (!line || !streq(line, "stockade-policy 1"))
		goto bad;
	while ((line = strtok_r(NULL, "\n", &save))) {
		(*ret_line)++;
		char *f[10];
		size_t n = split(line, f, ARRAY_SIZE(f));
		if (n > ARRAY_SIZE(f) || !read_record(ret, f, n, ret_backend))
			goto bad;
	}
	if (!ret->workspace || !ret->cwd || *ret_backend == BACKEND_AUTO)
		goto bad;
	policy_sort(ret);
	return 0;
bad:
	policy_free(ret);
	policy_init(ret);
	return -EINVAL;
}
