#include "policy/why.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/util.h"
#include "policy/allow.h"
#include "policy/own.h"

void why_free(struct why *w)
{
	free(w->rule);
	free(w->source);
	free(w->fix);
	free(w->note);
	*w = (struct why){ 0 };
}

static char *rule_text(const struct rule *r)
{
	_cleanup_free_ char *head = xstrcat3(access_name(r->access), " ", r->path);
	_cleanup_free_ char *open = xstrcat3(head, " (", r->origin ? r->origin : "?");
	return xstrcat3(open, ")", "");
}

static char *fix_of(const char *option, const char *key, const char *path)
{
	_cleanup_free_ char *opt = xstrcat3(option, " ", path);
	_cleanup_free_ char *ini = xstrcat3(key, " = ", path);
	return xstrcat3(opt, ", or in stockade.ini: ", ini);
}

void why_path(const struct policy *p, const char *path, enum why_want want, struct why *ret)
{
	*ret = (struct why){ 0 };
	const struct rule *r = policy_rule_for(p, path);
	enum effect e = policy_effect(p, path);
	ret->allowed = want == WANT_READ ? e != EFFECT_NONE : e == EFFECT_WRITE;
	if (r) {
		ret->rule = rule_text(r);
		const char *o = r->origin ? r->origin : "default";
		if (str_has_prefix(o, "default: "))
			o += strlen("default: ");
		if (r->source.kind == SOURCE_DEFAULT) {
			ret->source = xstrcat3("built in: ", o, "");
		} else {
			/* a file's line, and how that file stands */
			_cleanup_free_ char *t = source_text(&r->source);
			const char *standing = NULL;
			for (size_t i = 0; r->source.kind == SOURCE_FILE && r->source.file && i < p->n_standings; i++)
				if (streq(p->standings[i].path, r->source.file))
					standing = p->standings[i].standing;
			ret->source = standing ? xstrcat3(t, ": ", standing) : TAKE_PTR(t);
		}
	} else {
		ret->source = xstrdup("nothing grants it: what no rule names is out of reach");
	}
	ret->what = e == EFFECT_WRITE ? "read-write" : e == EFFECT_READ ? "read-only" : "out of reach";
	if (r && r->access == ACCESS_HIDE)
		ret->what = "hidden";
	if (r && (r->flags & RULE_FRESH) && e == EFFECT_WRITE)
		ret->what = "read-write: the run's own place, empty at the start and gone after it";
	if (ret->allowed)
		return;
	for (size_t i = 0; i < p->n_declined; i++) {
		const struct declined *d = &p->declined[i];
		if (!path_is_beneath(path, d->path))
			continue;
		_cleanup_free_ char *head = xstrcat3("not granted by default (", d->origin, "): the way to it passes through ");
		_cleanup_free_ char *way = xstrcat3(d->link ? "the symlink '" : "the folder '", d->link ? d->link : d->via,
						    "', which a run may write");
		ret->note = xstrcat3(head, way, "");
		break;
	}

	if (r && (r->flags & RULE_HANDOFF)) {
		ret->what = "a trust hand-off: what the run writes there runs later outside";
		ret->fix = xstrdup("none from inside the jail: the namespace jail keeps it read-only; on the landlock "
				   "backend the guard undoes a write after the run (git's inert settings kept, the rest "
				   "quarantined); change it outside the jail (stockade.1, TRUST HAND-OFFS)");
		return;
	}
	if (r && (r->flags & RULE_STATE)) {
		ret->fix = xstrdup(POLICY_STATE_FIX);
		return;
	}
	if (r && r->access == ACCESS_HIDE && r->source.kind != SOURCE_DEFAULT) {
		_cleanup_free_ char *src = source_text(&r->source);
		ret->fix = xstrcat3("take away the hide it names (", src, ")");
		return;
	}
	if (r && r->access == ACCESS_PROTECT && r->source.kind != SOURCE_DEFAULT) {
		_cleanup_free_ char *src = source_text(&r->source);
		ret->fix = xstrcat3("take away the protect it names (", src, ")");
		return;
	}
	ret->fix = want == WANT_WRITE ? fix_of("--write", "write", path) : fix_of("--read", "read", path);
}

/* A fix that names the path (--read P, --write P) must work as given:
 * the option takes a path that exists (for one not made yet, the
 * deepest folder on its way that does), and the jail never gives more
 * than the user has outside it, where nothing would then help. */
void why_fix_for_real(const struct policy *p, const char *path, enum why_want want, struct why *w)
{
	const char *opt = want == WANT_WRITE ? "--write " : "--read ";
	if (w->allowed || !w->fix || !str_has_prefix(w->fix, opt))
		return;
	_cleanup_free_ char *at = xstrdup(path);
	struct stat st;
	while (lstat(at, &st) < 0 && strcmp(at, "/") != 0) {
		char *slash = strrchr(at, '/');
		if (slash == at)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	bool made = streq(at, path);
	int mode = want == WANT_WRITE ? (made ? W_OK : W_OK | X_OK) : R_OK;
	if (access(at, mode) < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
		free(w->fix);
		w->fix = xasprintf("none: you cannot %s %s outside the jail either (%s)", want == WANT_WRITE ? "write" : "read",
				   made ? "it" : "there", strerror(errno));
		return;
	}
	bool refused = want == WANT_WRITE && own_held_by(p, at);
	if (refused && made) {
		free(w->fix);
		w->fix = xasprintf("none: a --write of %s is refused, for the run would reach stockade's own state; grant "
				   "what the command writes beneath it instead",
				   path);
		return;
	}
	if (made)
		return;
	free(w->fix);
	if (refused)
		w->fix = xasprintf("%s%s once it exists (make it outside the jail first: a --write of its folder %s is "
				   "refused, for the run would reach stockade's own state)",
				   opt, path, at);
	else
		w->fix = xasprintf("%s%s (it does not exist yet: its folder), or in stockade.ini: %s = %s", opt, at,
				   want == WANT_WRITE ? "write" : "read", at);
}

/* [v6]:PORT, v4:PORT, localhost:PORT, NAME:PORT; *ret_name, for a name
 * (one under .localhost too, which --connect does not take), as the
 * allow list compares it. */
static int parse_target(const char *target, bool *ret_loopback, unsigned *ret_port, char **ret_name)
{
	*ret_name = NULL;
	const char *colon = strrchr(target, ':');
	if (!colon || !colon[1])
		return -EINVAL;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port == 0 || port > 65535)
		return -EINVAL;
	_cleanup_free_ char *host = xstrndup(target, (size_t)(colon - target));
	if (host[0] == '[') {
		size_t n = strlen(host);
		if (n < 3 || host[n - 1] != ']')
			return -EINVAL;
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	unsigned char a[16];
	if (streq(host, "localhost") || str_has_suffix(host, ".localhost"))
		*ret_loopback = true, *ret_name = streq(host, "localhost") ? NULL : xstrdup(host);
	else if (inet_pton(AF_INET, host, a) == 1)
		*ret_loopback = a[0] == 127;
	else if (inet_pton(AF_INET6, host, a) == 1)
		*ret_loopback = memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0 ||
				(memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 && a[12] == 127);
	else if (host[0] && strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") == strlen(host)) {
		*ret_loopback = false;	/* a name: not resolved here */
		char name[ALLOW_NAME_MAX + 1];
		*ret_name = xstrdup(allow_name_normalize(host, name) == 0 ? name : host);
	} else
		return -EINVAL;
	*ret_port = (unsigned)port;
	return 0;
}

void why_unix(const struct policy *p, const char *given, const char *path, struct why *ret)
{
	*ret = (struct why){ 0 };
	for (size_t i = 0; i < p->n_grants; i++) {
		const struct net_grant *g = &p->grants[i];
		if (g->kind != GRANT_CONNECT_UNIX || (!streq(g->path, given) && !streq(g->path, path)))
			continue;
		ret->allowed = true;
		ret->what = "this one socket of the host";
		ret->rule = xstrcat3("--connect unix:", g->path, "");
		ret->source = source_text(&g->source);
		return;
	}
	/* Its directory's rules do not decide: a socket there is the
	 * user's (tmux, ssh-agent, Docker) unless the run bound it. */
	ret->what = "only a socket the run itself binds there (landlock backend; the namespace jail: any inside a granted tree)";
	ret->source = xstrdup("built in: the supervisor (landlock backend), the mounts (namespace jail)");
	ret->fix = policy_in_own_state(p, path) ? xstrdup(POLICY_STATE_FIX) : xstrcat3("--connect unix:", path, "");
}

/* Network allow: a name the allow list holds is reached, by name; an
 * address with no name never is. */
static int why_allowed_name(const struct policy *p, const char *name, unsigned short port, struct why *ret)
{
	if (!name) {
		ret->what = "network allow reaches names, never an address: a connection goes out only to the address "
			    "stockade looked up for an allowed name, checked against the name it carries (TLS server "
			    "name, HTTP Host)";
		ret->fix = xstrdup("none: an address is never allowed alone; allow the name the command looks up for it (--allow NAME), or --net on");
		return 0;
	}
	const struct allow_entry *a = allow_match(p->allow, p->n_allow, name, port);
	if (a) {
		free(ret->rule);
		free(ret->source);
		_cleanup_free_ char *text = allow_entry_text(a);
		ret->rule = a->list ? xasprintf("allow %s (from %s)", text, a->list) : xstrcat3("allow ", text, "");
		ret->source = source_text(&a->source);
		ret->allowed = true;
		ret->what = "by name: looked up by stockade, the connection checked (TLS server name, HTTP Host) and made "
			    "to the name's own address";
		return 0;
	}
	ret->what = allow_match(p->allow, p->n_allow, name, 0)
			    ? "the name is allowed, on other ports"
			    : "not an allowed name: its lookup answers NXDOMAIN, a connection carrying it is refused";
	ret->fix = allow_fix_ini(name, port);
	return 0;
}

int why_connect(const struct policy *p, const char *target, struct why *ret)
{
	*ret = (struct why){ 0 };
	bool loopback = false;
	unsigned port = 0;
	_cleanup_free_ char *name = NULL;
	int e = parse_target(target, &loopback, &port, &name);
	if (e < 0)
		return e;
	/* What --connect takes for it: a numeric address or localhost; a
	 * name under .localhost is 127.0.0.1's, and another name has none
	 * here (the fix is then the network). */
	_cleanup_free_ char *grant = name && loopback ? xasprintf("127.0.0.1:%u", port) : name ? NULL : xstrdup(target);
	/* --connect HOST:PORT as written (a spelling of the same address
	 * is the supervisor's to match). */
	for (size_t i = 0; i < p->n_grants && p->net != NET_OFF; i++) {
		const struct net_grant *g = &p->grants[i];
		if (g->kind != GRANT_CONNECT || g->port != port)
			continue;
		_cleanup_free_ char *text = net_grant_text(g);
		_cleanup_free_ char *bare = xasprintf("%s:%u", g->host, g->port);
		if (!streq(target, text) && !streq(target, bare))
			continue;
		ret->allowed = true;
		ret->what = "this one service of the host";
		ret->rule = xstrcat3("--connect ", text, "");
		ret->source = source_text(&g->source);
		return 0;
	}
	ret->rule = xstrcat3("network ", net_mode_name(p->net), "");
	ret->source = source_text(&p->net_source);
	switch (p->net) {
	case NET_ON:
		ret->allowed = true;
		ret->what = "the host's network";
		return 0;
	case NET_ALLOW:
		if (!loopback)
			return why_allowed_name(p, name, (unsigned short)port, ret);
		/* The run's own loopback: as with loopback. */
		__attribute__((fallthrough));
	case NET_LOOPBACK:
		ret->what = loopback ? "loopback: the run's own servers only, not the host's" : "loopback only";
		/* a server of the run's own answers; one outside it does not */
		ret->allowed = false;
		if (!grant) {
			/* a name: network allow, for that name alone */
			ret->fix = allow_name_fix(name, (unsigned short)port);
		} else
			ret->fix = xstrcat3(loopback ? "a server the command starts itself is reached; a service outside "
						       "the run needs --connect "
						     : "--connect ",
					    grant, " (this one service), or " ALLOW_NET_FIX);
		return 0;
	case NET_OFF:
		ret->what = "no network";
		ret->fix = xstrdup(loopback ? "--net loopback (the run's own servers), or in stockade.ini: network = loopback"
					    : ALLOW_NET_FIX);
		return 0;
	}
	return 0;
}
