/* A small SBPL evaluator for the tests: reads a profile as sandbox-exec's
 * reader would (s-expressions, strings with \" and \\, ; comments),
 * knows exactly the operations and filters seatbelt/ writes, and answers
 * a question (an operation on a path, a name, an address) with SBPL's
 * rule: the last allow or deny that matches decides, deny by default.
 * Anything it does not know (an operation, a filter, a form) is an error,
 * so that the renderer cannot drift into syntax nothing checks. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/path.h"
#include "lib/util.h"

struct sx {
	bool list;
	char *atom;		/* a symbol, or a string's contents */
	bool string;
	struct sx **kids;
	size_t n;
};

static void sx_free(struct sx *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++)
		sx_free(x->kids[i]);
	free(x->kids);
	free(x->atom);
	free(x);
}

static void sx_skip(const char **p)
{
	for (;;) {
		while (**p == ' ' || **p == '\t' || **p == '\n')
			(*p)++;
		if (**p != ';')
			return;
		while (**p && **p != '\n')
			(*p)++;
	}
}

/* NULL on a syntax error, *err says where. */
static struct sx *sx_read(const char **p, const char **err)
{
	sx_skip(p);
	struct sx *x = xcalloc(1, sizeof(*x));
	if (**p == '(') {
		(*p)++;
		x->list = true;
		for (;;) {
			sx_skip(p);
			if (**p == ')') {
				(*p)++;
				return x;
			}
			if (!**p) {
				*err = "unclosed list";
				sx_free(x);
				return NULL;
			}
			struct sx *k = sx_read(p, err);
			if (!k) {
				sx_free(x);
				return NULL;
			}
			x->kids = xgrow(x->kids, x->n, sizeof(*x->kids));
			x->kids[x->n++] = k;
		}
	}
	if (**p == '"') {
		struct text t = { 0 };
		(*p)++;
		for (; **p != '"'; (*p)++) {
			if (!**p || (unsigned char)**p < 0x20) {
				*err = "bad string";
				free(text_take(&t));
				sx_free(x);
				return NULL;
			}
			if (**p == '\\') {
				(*p)++;
				if (**p != '"' && **p != '\\') {
					*err = "unknown escape";
					free(text_take(&t));
					sx_free(x);
					return NULL;
				}
			}
			text_addc(&t, **p);
		}
		(*p)++;
		text_addc(&t, '\0');
		x->atom = text_take(&t);
		x->string = true;
		return x;
	}
	const char *s = *p;
	while (**p && !strchr(" \t\n()\";", **p))
		(*p)++;
	if (*p == s) {
		*err = **p == ')' ? "unexpected )" : "unexpected end";
		sx_free(x);
		return NULL;
	}
	x->atom = xstrndup(s, (size_t)(*p - s));
	return x;
}

/* The operations the evaluator knows, and the kind of question each one
 * answers. */
enum sbq_kind { SBQ_PATH, SBQ_NAME, SBQ_UNIX_LOCAL, SBQ_UNIX_REMOTE, SBQ_IP_LOCAL, SBQ_IP_REMOTE, SBQ_TARGET, SBQ_NONE };

static const struct {
	const char *op;
	enum sbq_kind kind;
} sbpl_ops[] = {
	{ "file-read-data", SBQ_PATH },	     { "file-read-metadata", SBQ_PATH },   { "file-read-xattr", SBQ_PATH },
	{ "file-write-data", SBQ_PATH },     { "file-write-create", SBQ_PATH },	   { "file-write-unlink", SBQ_PATH },
	{ "file-write-mode", SBQ_PATH },     { "file-write-xattr", SBQ_PATH },	   { "file-map-executable", SBQ_PATH },
	{ "process-exec", SBQ_PATH },	     { "process-fork", SBQ_NONE },	   { "signal", SBQ_TARGET },
	{ "process-info-pidinfo", SBQ_TARGET }, { "process-codesigning-status-get", SBQ_TARGET },
	{ "sysctl-read", SBQ_NAME },	     { "sysctl-write", SBQ_NAME },	   { "mach-lookup", SBQ_NAME },
	{ "ipc-posix-shm-read-data", SBQ_NAME }, { "ipc-posix-shm-read-metadata", SBQ_NAME }, { "ipc-posix-sem", SBQ_NAME },
	{ "network-outbound", SBQ_IP_REMOTE }, { "network-bind", SBQ_IP_LOCAL }, { "network-inbound", SBQ_IP_LOCAL },
};

/* An operation named in a rule: one of the table, or a family ending
 * in '*' that covers some of them. */
static bool sbpl_op_known(const char *op)
{
	size_t n = strlen(op);
	for (size_t i = 0; i < ARRAY_SIZE(sbpl_ops); i++)
		if (streq(sbpl_ops[i].op, op) || (n > 1 && op[n - 1] == '*' && strncmp(sbpl_ops[i].op, op, n - 1) == 0))
			return true;
	return false;
}

static bool sbpl_op_covers(const char *rule_op, const char *op)
{
	size_t n = strlen(rule_op);
	return streq(rule_op, op) || (rule_op[n - 1] == '*' && strncmp(rule_op, op, n - 1) == 0);
}

struct sbq {
	const char *op;
	enum sbq_kind kind;	/* network ops: which of their kinds */
	const char *arg;	/* the path, name, "host:port" or target */
};

static bool one_string(const struct sx *f)
{
	return f->n == 2 && f->kids[1]->string;
}

/* -1: a filter the evaluator does not know. */
static int sbpl_filter(const struct sx *f, const struct sbq *q)
{
	if (!f->list || f->n < 1 || f->kids[0]->list)
		return -1;
	const char *name = f->kids[0]->atom;
	if (streq(name, "literal") || streq(name, "subpath") || streq(name, "path-literal")) {
		if (!one_string(f))
			return -1;
		bool path_q = q->kind == SBQ_PATH || q->kind == SBQ_UNIX_LOCAL || q->kind == SBQ_UNIX_REMOTE;
		if (!path_q)
			return 0;
		const char *v = f->kids[1]->atom;
		return streq(name, "subpath") ? path_is_beneath(q->arg, v) : streq(q->arg, v);
	}
	if (streq(name, "global-name") || streq(name, "sysctl-name") || streq(name, "ipc-posix-name"))
		return one_string(f) ? q->kind == SBQ_NAME && streq(q->arg, f->kids[1]->atom) : -1;
	if (streq(name, "sysctl-name-prefix"))
		return one_string(f) ? q->kind == SBQ_NAME && str_has_prefix(q->arg, f->kids[1]->atom) : -1;
	if (streq(name, "target")) {
		if (f->n != 2 || f->kids[1]->list || (!streq(f->kids[1]->atom, "same-sandbox") && !streq(f->kids[1]->atom, "self")))
			return -1;
		/* "self" is inside "same-sandbox" */
		return q->kind == SBQ_TARGET &&
		       (streq(q->arg, f->kids[1]->atom) || (streq(f->kids[1]->atom, "same-sandbox") && streq(q->arg, "self")));
	}
	if (streq(name, "local") || streq(name, "remote")) {
		if (f->n != 3 || f->kids[1]->list)
			return -1;
		bool local = streq(name, "local");
		const char *what = f->kids[1]->atom;
		if (streq(what, "ip")) {
			if (!f->kids[2]->string)
				return -1;
			const char *v = f->kids[2]->atom;
			if (q->kind != (local ? SBQ_IP_LOCAL : SBQ_IP_REMOTE))
				return 0;
			if (streq(v, "*:*"))
				return 1;
			if (streq(v, "localhost:*"))
				return str_has_prefix(q->arg, "localhost:");
			return -1;
		}
		if (streq(what, "unix-socket")) {
			if (q->kind != (local ? SBQ_UNIX_LOCAL : SBQ_UNIX_REMOTE)) {
				/* still check the inner filter is one we know */
				struct sbq none = { .kind = SBQ_NONE };
				return sbpl_filter(f->kids[2], &none) < 0 ? -1 : 0;
			}
			return sbpl_filter(f->kids[2], q);
		}
		return -1;
	}
	return -1;
}

struct sbpl {
	struct sx *forms;	/* a list of the top-level forms */
	const char *err;
};

/* Reads and checks a whole profile: 0, or -1 with p->err. */
static int sbpl_load(struct sbpl *p, const char *text)
{
	*p = (struct sbpl){ .forms = xcalloc(1, sizeof(struct sx)) };
	p->forms->list = true;
	const char *s = text;
	for (;;) {
		sx_skip(&s);
		if (!*s)
			break;
		struct sx *f = sx_read(&s, &p->err);
		if (!f)
			return -1;
		p->forms->kids = xgrow(p->forms->kids, p->forms->n, sizeof(*p->forms->kids));
		p->forms->kids[p->forms->n++] = f;
	}
	struct sx *fs = p->forms;
	if (fs->n < 2 || !fs->kids[0]->list || fs->kids[0]->n != 2 || !streq(fs->kids[0]->kids[0]->atom, "version") ||
	    !streq(fs->kids[0]->kids[1]->atom, "1")) {
		p->err = "not (version 1) first";
		return -1;
	}
	const struct sx *d = fs->kids[1];
	if (!d->list || d->n != 2 || !streq(d->kids[0]->atom, "deny") || !streq(d->kids[1]->atom, "default")) {
		p->err = "not (deny default) second";
		return -1;
	}
	struct sbq none = { .kind = SBQ_NONE };
	for (size_t i = 2; i < fs->n; i++) {
		const struct sx *r = fs->kids[i];
		if (!r->list || r->n < 2 || r->kids[0]->list ||
		    (!streq(r->kids[0]->atom, "allow") && !streq(r->kids[0]->atom, "deny"))) {
			p->err = "a form that is not allow or deny";
			return -1;
		}
		size_t k = 1;
		for (; k < r->n && !r->kids[k]->list; k++)
			if (r->kids[k]->string || !sbpl_op_known(r->kids[k]->atom)) {
				p->err = r->kids[k]->atom;
				return -1;
			}
		if (k == 1) {
			p->err = "a rule without an operation";
			return -1;
		}
		for (; k < r->n; k++)
			if (sbpl_filter(r->kids[k], &none) < 0) {
				p->err = r->kids[k]->list && r->kids[k]->n ? r->kids[k]->kids[0]->atom : "a filter";
				return -1;
			}
	}
	return 0;
}

/* The answer to q: true for allow. */
static bool sbpl_allows(const struct sbpl *p, const struct sbq *q)
{
	bool allow = false;
	for (size_t i = 2; i < p->forms->n; i++) {
		const struct sx *r = p->forms->kids[i];
		bool op = false;
		size_t k = 1;
		for (; k < r->n && !r->kids[k]->list; k++)
			op |= sbpl_op_covers(r->kids[k]->atom, q->op);
		if (!op)
			continue;
		bool match = k == r->n;	/* no filter: every question of the operation */
		for (; k < r->n && !match; k++)
			match = sbpl_filter(r->kids[k], q) == 1;
		if (match)
			allow = streq(r->kids[0]->atom, "allow");
	}
	return allow;
}

static void sbpl_free(struct sbpl *p)
{
	sx_free(p->forms);
	*p = (struct sbpl){ 0 };
}
