/* The policy as SBPL text: pure, on any system. See seatbelt.h for the
 * order that makes the deepest rule win; the base allowances every
 * process needs are in base.c, each with why. */
#include "seatbelt/seatbelt.h"

#include "lib/path.h"
#include "lib/util.h"
#include "seatbelt/internal.h"

/* The folders macOS reaches through a symlink into /private: a rule on
 * one spelling is written for both, since the sandbox sees the path the
 * kernel resolved and a policy built elsewhere (or from a user's
 * argument) may name the other. */
static const char *const private_links[] = { "/tmp", "/var", "/etc" };

size_t seatbelt_other_spelling(const char *path, char **ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(private_links); i++) {
		const char *l = private_links[i];
		if (path_is_beneath(path, l)) {
			*ret = xstrcat3("/private", path, "");
			return 1;
		}
		_cleanup_free_ char *priv = xstrcat3("/private", l, "");
		if (path_is_beneath(path, priv)) {
			*ret = xstrdup(path + strlen("/private"));
			return 1;
		}
	}
	return 0;
}

int seatbelt_quote(const char *s, char **ret)
{
	struct text t = { 0 };
	text_addc(&t, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		/* A control character (a newline among them) has no safe
		 * spelling the profile's reader and the kernel's path agree
		 * on: refused, never dropped. Bytes of 0x80 and above pass
		 * as they are (UTF-8 names). */
		if (*c < 0x20 || *c == 0x7f) {
			free(text_take(&t));
			return -EINVAL;
		}
		if (*c == '"' || *c == '\\')
			text_addc(&t, '\\');
		text_addc(&t, (char)*c);
	}
	text_addc(&t, '"');
	*ret = text_take(&t);
	return 0;
}

/* A comment line: what the profile's reader skips to the end of the
 * line, so nothing in it may end the line early. */
static void add_comment(struct text *t, const char *a, const char *b)
{
	text_adds(t, "; ");
	for (const char *s = a; s && *s; s++)
		text_addc(t, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
	for (const char *s = b; s && *s; s++)
		text_addc(t, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
	text_addc(t, '\n');
}

struct render {
	struct text t;
	char *bad_path;
};

/* " (FILTER "p") (FILTER "p'")": one filter per spelling. */
static int add_filters(struct render *r, const char *filter, const char *wrap, const char *path)
{
	char *spell[2] = { (char *)path, NULL };
	size_t n = 1 + seatbelt_other_spelling(path, &spell[1]);
	int e = 0;
	for (size_t i = 0; i < n && e == 0; i++) {
		_cleanup_free_ char *q = NULL;
		e = seatbelt_quote(spell[i], &q);
		if (e < 0)
			break;
		text_adds(&r->t, " (");
		if (wrap) {
			text_adds(&r->t, wrap);
			text_adds(&r->t, " (");
		}
		text_adds(&r->t, filter);
		text_addc(&r->t, ' ');
		text_adds(&r->t, q);
		text_adds(&r->t, wrap ? "))" : ")");
	}
	free(spell[1]);
	if (e < 0 && !r->bad_path)
		r->bad_path = xstrdup(path);
	return e;
}

static int add_line(struct render *r, const char *action, const char *ops, const char *filter, const char *wrap,
		    const char *path)
{
	text_adds(&r->t, "(");
	text_adds(&r->t, action);
	text_addc(&r->t, ' ');
	text_adds(&r->t, ops);
	int e = add_filters(r, filter, wrap, path);
	text_adds(&r->t, ")\n");
	return e;
}

#define FILE_READ "file-read* process-exec file-map-executable"
#define FILE_ALL "file-read* file-write* process-exec file-map-executable"
#define UNIX_CONNECT "network-outbound", "subpath", "remote unix-socket"
#define UNIX_BIND "network-bind network-inbound", "subpath", "local unix-socket"

/* Renaming or removing a folder that holds a hidden or protected path
 * would carry it out from under its rule. */
static int add_ancestors_unmovable(struct render *r, const char *path)
{
	int e = 0;
	char *a = path_parent(path, NULL);
	while (a && !streq(a, "/")) {
		e |= add_line(r, "deny", "file-write-unlink", "literal", NULL, a);
		char *up = path_parent(a, NULL);
		free(a);
		a = up;
	}
	free(a);
	return e;
}

/* One rule, as allow and deny lines; the order of the lines within a
 * rule does not matter, none of them overlaps another's operations. */
static int add_rule(struct render *r, const struct rule *rule)
{
	const char *path = rule->path;
	_cleanup_free_ char *head = xstrcat3(access_name(rule->access), " ", path);
	_cleanup_free_ char *origin = xstrcat3("  (", rule->origin ? rule->origin : "", ")");
	add_comment(&r->t, head, origin);
	int e = 0;
	switch (rule->access) {
	case ACCESS_WRITE:
		e |= add_line(r, "allow", FILE_ALL, "subpath", NULL, path);
		e |= add_line(r, "allow", UNIX_CONNECT, path);
		e |= add_line(r, "allow", UNIX_BIND, path);
		break;
	case ACCESS_READ:
		e |= add_line(r, "allow", FILE_READ, "subpath", NULL, path);
		e |= add_line(r, "deny", "file-write*", "subpath", NULL, path);
		e |= add_line(r, "allow", UNIX_CONNECT, path);
		e |= add_line(r, "deny", UNIX_BIND, path);
		break;
	case ACCESS_PROTECT:
		e |= add_line(r, "deny", "file-write*", "subpath", NULL, path);
		e |= add_line(r, "deny", UNIX_BIND, path);
		e |= add_ancestors_unmovable(r, path);
		break;
	case ACCESS_HIDE:
		e |= add_line(r, "deny", FILE_ALL, "subpath", NULL, path);
		e |= add_line(r, "deny", UNIX_CONNECT, path);
		e |= add_line(r, "deny", UNIX_BIND, path);
		e |= add_ancestors_unmovable(r, path);
		break;
	}
	return e ? -EINVAL : 0;
}

/* Shallow to deep, and on one path weaker before stronger (write, read,
 * protect, hide): the last line that matches decides, as the deepest
 * rule and then the strongest does in the policy. */
static int render_cmp(const void *a, const void *b)
{
	const struct rule *x = *(const struct rule *const *)a, *y = *(const struct rule *const *)b;
	int c = rule_place_cmp(x, y);
	return c ? c : (int)x->access - (int)y->access;
}

/* Every folder above a path some rule grants: stat on them lets
 * realpath(3), Node's fs.realpath and Python's os.path.realpath walk to
 * the granted path, and says nothing of what else those folders hold. */
static int add_ancestor_metadata(struct render *r, const struct rule *const *v, size_t n)
{
	_cleanup_strv_ char **seen = strv_new();
	for (size_t i = 0; i < n; i++) {
		if (v[i]->access != ACCESS_READ && v[i]->access != ACCESS_WRITE)
			continue;
		for (char *a = path_parent(v[i]->path, NULL); a;) {
			if (strv_contains(seen, a)) {
				free(a);
				break;
			}
			char *up = path_parent(a, NULL);
			strv_push(&seen, a);
			a = up;
		}
	}
	if (!seen[0])
		return 0;
	add_comment(&r->t, "the folders above every granted path: their own metadata (stat), not their entries", "");
	text_adds(&r->t, "(allow file-read-metadata");
	int e = 0;
	for (size_t i = 0; seen[i]; i++)
		e |= add_filters(r, "literal", NULL, seen[i]);
	text_adds(&r->t, ")\n");
	return e ? -EINVAL : 0;
}

int seatbelt_plan(const struct policy *p, struct seatbelt_plan *ret)
{
	*ret = (struct seatbelt_plan){ 0 };
	const struct rule *places = p->places ? p->places->v : NULL;
	size_t n_places = p->places ? p->places->n : 0;
	size_t n_base;
	const struct seatbelt_base_path *base = seatbelt_base_paths(&n_base);
	ret->rules = xcalloc(n_places + n_base + 1, sizeof(*ret->rules));
	for (size_t i = 0; i < n_places; i++) {
		ret->rules[ret->n_rules] = places[i];
		ret->rules[ret->n_rules++].path = xstrdup(places[i].path);
	}
	for (size_t i = 0; i < n_base; i++)
		ret->rules[ret->n_rules++] = (struct rule){
			.path = xstrdup(base[i].path),
			.access = base[i].access,
			.flags = RULE_SYSTEM,
			.source = SOURCE_DEFAULT_OF("seatbelt"),
			.origin = (char *)base[i].why,
		};

	size_t n = p->n_rules + ret->n_rules;
	_cleanup_free_ const struct rule **v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < p->n_rules; i++)
		v[i] = &p->rules[i];
	for (size_t i = 0; i < ret->n_rules; i++)
		v[p->n_rules + i] = &ret->rules[i];
	qsort(v, n, sizeof(*v), render_cmp);

	struct render r = { 0 };
	seatbelt_base_head(&r.t, p->net);
	add_comment(&r.t, "", "");
	add_comment(&r.t, "path rules, shallow to deep: the last line that matches decides, so the deepest rule wins", "");
	int e = 0;
	for (size_t i = 0; i < n; i++)
		e |= add_rule(&r, v[i]);
	e |= add_ancestor_metadata(&r, v, n);
	if (e) {
		free(text_take(&r.t));
		ret->bad_path = r.bad_path;
		return -EINVAL;
	}
	ret->profile = text_take(&r.t);
	return 0;
}

void seatbelt_plan_free(struct seatbelt_plan *pl)
{
	free(pl->profile);
	for (size_t i = 0; i < pl->n_rules; i++)
		free(pl->rules[i].path);
	free(pl->rules);
	free(pl->bad_path);
	*pl = (struct seatbelt_plan){ 0 };
}

void seatbelt_plan_print(FILE *f, const struct seatbelt_plan *pl)
{
	fputs("seatbelt profile (for /usr/bin/sandbox-exec -f):\n", f);
	fputs(pl->profile, f);
}
