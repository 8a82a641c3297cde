#include "policy/policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "policy/allow.h"
#include "policy/env.h"

#include "lib/path.h"
#include "lib/util.h"

static const char *const access_names[] = {
	[ACCESS_WRITE] = "write",
	[ACCESS_READ] = "read",
	[ACCESS_PROTECT] = "protect",
	[ACCESS_HIDE] = "hide",
};

static const char *const net_names[] = {
	[NET_OFF] = "off",
	[NET_LOOPBACK] = "loopback",
	[NET_ALLOW] = "allow",
	[NET_ON] = "on",
};

static const char *const backend_names[] = {
	[BACKEND_AUTO] = "auto",
	[BACKEND_NAMESPACES] = "namespaces",
	[BACKEND_LANDLOCK] = "landlock",
	[BACKEND_SEATBELT] = "seatbelt",
	[BACKEND_NONE] = "none",
};

static const char *const mode_names[] = {
	[MODE_AUTO] = "auto",
	[MODE_REQUIRED] = "required",
	[MODE_OFF] = "off",
};

static const char *const effect_names[] = {
	[EFFECT_NONE] = "none",
	[EFFECT_READ] = "read",
	[EFFECT_WRITE] = "write",
};

const char *access_name(enum access a)
{
	return access_names[a];
}

const char *net_mode_name(enum net_mode m)
{
	return net_names[m];
}

const char *backend_name(enum backend b)
{
	return backend_names[b];
}

const char *effect_name(enum effect e)
{
	return effect_names[e];
}

static int index_of(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && streq(names[i], s))
			return (int)i;
	return -EINVAL;
}

int access_from_name(const char *s, enum access *ret)
{
	int i = index_of(access_names, ARRAY_SIZE(access_names), s);
	if (i < 0)
		return i;
	*ret = (enum access)i;
	return 0;
}

int net_mode_from_name(const char *s, enum net_mode *ret)
{
	int i = index_of(net_names, ARRAY_SIZE(net_names), s);
	if (i < 0)
		return i;
	*ret = (enum net_mode)i;
	return 0;
}

int backend_from_name(const char *s, enum backend *ret)
{
	/* "none" is what a report says of --mode off, not a choice. */
	int i = index_of(backend_names, BACKEND_NONE, s);
	if (i < 0)
		return i;
	*ret = (enum backend)i;
	return 0;
}

int run_mode_from_name(const char *s, enum run_mode *ret)
{
	int i = index_of(mode_names, ARRAY_SIZE(mode_names), s);
	if (i < 0)
		return i;
	*ret = (enum run_mode)i;
	return 0;
}

int size_spec_parse(const char *s, struct size_spec *ret)
{
	*ret = (struct size_spec){ 0 };
	if (!s || !(*s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || v == 0)
		return -EINVAL;
	if (streq(end, "%")) {
		if (v > 100)
			return -EINVAL;
		ret->percent = (unsigned)v;
		return 0;
	}
	static const char units[] = "KMGT";
	unsigned shift = 0;
	if (*end) {
		const char *u = strchr(units, *end >= 'a' ? *end - 32 : *end);
		if (!u || !*u || (end[1] && !streq(end + 1, "B") && !streq(end + 1, "iB")))
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (v > (UINT64_MAX >> shift))
		return -EINVAL;
	ret->bytes = (uint64_t)v << shift;
	return 0;
}

int max_procs_parse(const char *s, unsigned long *ret)
{
	if (!s || !(*s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long n = strtoul(s, &end, 10);
	if (errno || *end || n < LIMIT_MIN_PROCS || n > LIMIT_MAX_MAX_PROCS)
		return -EINVAL;
	*ret = n;
	return 0;
}

uint64_t size_spec_bytes(const struct size_spec *s, uint64_t ram)
{
	return s->bytes ? s->bytes : ram / 100 * s->percent + ram % 100 * s->percent / 100;
}

void size_spec_format(const struct size_spec *s, uint64_t ram, char *buf, size_t size)
{
	double b = (double)size_spec_bytes(s, ram);
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;
	while (b >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	if (s->bytes)
		snprintf(buf, size, "%.1f %s", b, units[u]);
	else
		snprintf(buf, size, "%u%% of memory (%.1f %s)", s->percent, b, units[u]);
}

void policy_init(struct policy *p)
{
	*p = (struct policy){
		.net = NET_LOOPBACK,
		.backend = BACKEND_AUTO,
		.mode = MODE_AUTO,
		.uid = (uid_t)-1,
		.gid = (gid_t)-1,
		.limits = {
			.max_procs = LIMIT_MAX_PROCS,
			.memory = { .percent = LIMIT_MEMORY_PERCENT },
			.tmp_size = { .percent = LIMIT_TMP_PERCENT },
			.max_procs_source = SOURCE_DEFAULT_OF("limits"),
			.memory_source = SOURCE_DEFAULT_OF("limits"),
			.tmp_size_source = SOURCE_DEFAULT_OF("limits"),
		},
	};
}

void env_free(struct env *e)
{
	for (size_t i = 0; i < e->n_changes; i++) {
		free(e->changes[i].name);
		free(e->changes[i].value);
		free(e->changes[i].why);
	}
	free(e->changes);
	free(e->envp);
	strv_free(e->owned);
	*e = (struct env){ 0 };
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* A port: 1 to 65535, digits only. */
static bool port_of(const char *s, size_t n, unsigned short *ret)
{
	if (!all_digits(s, n))
		return false;
	unsigned long v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v == 0 || v > 65535)
		return false;
	*ret = (unsigned short)v;
	return true;
}

/* A numeric IPv4 or IPv6 address, or "localhost" (resolved once, when the
 * run starts). */
static bool host_ok(const char *h)
{
	unsigned char buf[sizeof(struct in6_addr)];
	return streq(h, "localhost") || inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

/* "HOST:REST" or "[V6]:REST": the host (brackets dropped) and where REST
 * starts; NULL when spec does not start with a host and a colon. */
static char *split_host(const char *spec, const char **ret_rest)
{
	const char *colon;
	char *host;
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':')
			return NULL;
		host = xstrndup(spec + 1, (size_t)(close - spec - 1));
		colon = close + 1;
	} else {
		colon = strchr(spec, ':');
		if (!colon)
			return NULL;
		host = xstrndup(spec, (size_t)(colon - spec));
	}
	*ret_rest = colon + 1;
	return host;
}

/* An IPv6 address given bare before the port (::1:8080), whose colons
 * cannot be told from the port's: the text before the last colon, or
 * (with a jail port after it) before the one before. */
static bool bare_ipv6_host(const char *spec, bool jail_port)
{
	if (spec[0] == '[')
		return false;
	_cleanup_free_ char *head = xstrdup(spec);
	for (int i = 0; i < (jail_port ? 2 : 1); i++) {
		char *colon = strrchr(head, ':');
		if (!colon)
			return false;
		*colon = '\0';
		struct in6_addr a;
		if (inet_pton(AF_INET6, head, &a) == 1)
			return true;
	}
	return false;
}

int net_grant_parse(enum grant_kind kind, const char *spec, struct net_grant *ret, const char **ret_why)
{
	*ret = (struct net_grant){ .kind = kind };
	*ret_why = NULL;
	if (kind == GRANT_CONNECT && strncmp(spec, "unix:", 5) == 0) {
		ret->kind = GRANT_CONNECT_UNIX;
		if (spec[5] != '/') {
			*ret_why = "a socket path must be absolute";
			return -EINVAL;
		}
		ret->path = xstrdup(spec + 5);
		return 0;
	}
	if (bare_ipv6_host(spec, kind == GRANT_PUBLISH)) {
		*ret_why = "an IPv6 address goes in brackets: [::1]:PORT";
		return -EINVAL;
	}
	const char *rest = NULL;
	_cleanup_free_ char *host = NULL;
	if (kind == GRANT_PUBLISH) {
		/* PORT, PORT:JAIL_PORT, HOST:PORT, HOST:PORT:JAIL_PORT: the
		 * first part is the host unless it is a port. */
		const char *colon = strchr(spec, ':');
		if (spec[0] == '[' || (colon && !all_digits(spec, (size_t)(colon - spec)))) {
			host = split_host(spec, &rest);
		} else {
			rest = spec;
			host = xstrdup("127.0.0.1");
		}
		const char *second = rest ? strchr(rest, ':') : NULL;
		size_t n = second ? (size_t)(second - rest) : (rest ? strlen(rest) : 0);
		if (!host || !port_of(rest, n, &ret->port)) {
			*ret_why = "use [HOST_ADDR:]PORT[:JAIL_PORT], ports 1 to 65535";
			return -EINVAL;
		}
		ret->jail_port = ret->port;
		if (second && !port_of(second + 1, strlen(second + 1), &ret->jail_port)) {
			*ret_why = "use [HOST_ADDR:]PORT[:JAIL_PORT], ports 1 to 65535";
			return -EINVAL;
		}
	} else {
		host = split_host(spec, &rest);
		if (!host || !port_of(rest, strlen(rest), &ret->port)) {
			*ret_why = "use HOST:PORT or unix:PATH, ports 1 to 65535";
			return -EINVAL;
		}
	}
	if (!host_ok(host)) {
		*ret_why = "the host must be a numeric address or localhost";
		return -EINVAL;
	}
	ret->host = TAKE_PTR(host);
	return 0;
}

void net_grant_free(struct net_grant *g)
{
	free(g->host);
	free(g->path);
	*g = (struct net_grant){ 0 };
}

bool net_grant_on_loopback(const struct net_grant *g)
{
	unsigned char a[16];
	if (!g->host)
		return false;
	if (streq(g->host, "localhost"))
		return true;
	if (inet_pton(AF_INET, g->host, a) == 1)
		return a[0] == 127;
	if (inet_pton(AF_INET6, g->host, a) != 1)
		return false;
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const unsigned char one[16] = { [15] = 1 };
	return memcmp(a, one, 16) == 0 || (memcmp(a, mapped, 12) == 0 && a[12] == 127);
}

char *net_grant_text(const struct net_grant *g)
{
	if (g->kind == GRANT_CONNECT_UNIX)
		return xasprintf("unix:%s", g->path);
	bool v6 = strchr(g->host, ':') != NULL;
	if (g->kind == GRANT_PUBLISH && g->jail_port != g->port)
		return xasprintf("%s%s%s:%u -> the run's port %u", v6 ? "[" : "", g->host, v6 ? "]" : "", g->port,
				 g->jail_port);
	return xasprintf("%s%s%s:%u", v6 ? "[" : "", g->host, v6 ? "]" : "", g->port);
}

void policy_free(struct policy *p)
{
	for (size_t i = 0; i < p->n_grants; i++)
		net_grant_free(&p->grants[i]);
	free(p->grants);
	allow_entries_free(p->allow, p->n_allow);
	for (size_t i = 0; i < p->n_rules; i++)
		free(p->rules[i].path);
	strv_free(p->origins);
	free(p->rules);
	env_free(&p->env);
	free(p->workspace);
	free(p->cwd);
	free(p->user_home);
	free(p->passwd_home);
	free(p->home);
	free(p->cache_dir);
	free(p->state_dir);
	strv_free(p->own_state);
	free(p->outer_worktree);
	free(p->outer_gitdir);
	free(p->outer_commondir);
	free(p->program);
	free(p->exec_path);
	strv_free(p->argv);
	strv_free(p->env_decided);
	for (size_t i = 0; i < p->n_env_ops; i++) {
		free(p->env_ops[i].name);
		free(p->env_ops[i].value);
	}
	free(p->env_ops);
	for (size_t i = 0; i < p->n_skipped; i++)
		free(p->skipped[i].path);
	free(p->skipped);
	for (size_t i = 0; i < p->n_lifted; i++)
		free(p->lifted[i].path);
	free(p->lifted);
	strv_free(p->files);
	for (size_t i = 0; i < p->n_standings; i++) {
		free(p->standings[i].path);
		free(p->standings[i].standing);
	}
	free(p->standings);
	strv_free(p->writable);
	for (size_t i = 0; i < p->n_declined; i++) {
		free(p->declined[i].path);
		free(p->declined[i].origin);
		free(p->declined[i].via);
		free(p->declined[i].link);
	}
	free(p->declined);
	strv_free(p->conf_handoffs);
	free(p->ignored.hidden);
	free(p->ignored.kept);
	free(p->by_path);
	for (size_t i = 0; i < p->n_widenings; i++) {
		free(p->widenings[i].value);
		free(p->widenings[i].before);
		free(p->widenings[i].what);
	}
	free(p->widenings);
	policy_init(p);
}

char *source_text(const struct source *s)
{
	char line[21];
	switch (s->kind) {
	case SOURCE_DEFAULT:
		return xstrcat3("default: ", s->key ? s->key : "built in", "");
	case SOURCE_OPTION:
		return xstrcat3(s->key ? s->key : "an option", " on the command line", "");
	case SOURCE_FILE:
		break;
	}
	_cleanup_free_ char *at = xstrcat3(s->file ? s->file : "?", " line ", fmt_u64(line, s->line));
	if (!s->key)
		return xstrdup(at);
	_cleanup_free_ char *open = xstrcat3(at, " (", s->key);
	return xstrcat3(open, ")", "");
}


/* One copy of each origin: the defaults name a handful, for dozens of
 * rules. Takes s. */
static char *intern(struct policy *p, char *s)
{
	for (size_t i = 0; p->origins && p->origins[i]; i++)
		if (streq(p->origins[i], s)) {
			free(s);
			return p->origins[i];
		}
	strv_push(&p->origins, s);
	return s;
}

struct rule *policy_add_rule(struct policy *p, const char *path, enum access a, unsigned flags,
			     struct source source, const char *origin)
{
	_cleanup_free_ char *norm = path_normalize(path);
	/* The same rule from two sources (PATH naming /bin and /usr/bin):
	 * the first says where it came from. */
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].access == a && streq(p->rules[i].path, norm)) {
			p->rules[i].flags |= flags;
			return &p->rules[i];
		}
	p->rules = xgrow(p->rules, p->n_rules, sizeof(*p->rules));
	struct rule *r = &p->rules[p->n_rules++];
	*r = (struct rule){
		.path = TAKE_PTR(norm),
		.access = a,
		.flags = flags,
		.source = source,
		.origin = intern(p, origin ? xstrdup(origin) : source_text(&source)),
	};
	return r;
}

void policy_add_rule_new(struct policy *p, const char *path, enum access a, struct source source)
{
	p->rules = xgrow(p->rules, p->n_rules, sizeof(*p->rules));
	p->rules[p->n_rules++] = (struct rule){
		.path = path_normalize(path),
		.access = a,
		.source = source,
		.origin = intern(p, source_text(&source)),
	};
}

/* The policy's rules and, after them, a backend's own: looked through as
 * one, without a copy. by_path, when set, indexes a by path. */
struct rule_set {
	const struct rule *a;
	size_t na;
	const struct rule *b;
	size_t nb;
	const size_t *by_path;
};

/* Below this many rules a look-up reads them all: the index would cost
 * more than it saves. A plain run has some 60, and the mount plan looks
 * each up (callgrind: 340,000 instructions of 2.4 million read them all;
 * the build, which adds and looks up in turn, costs the same either way). */
#define INDEX_FROM 16

static const struct rule *sort_base;

static int by_path_cmp(const void *x, const void *y)
{
	return strcmp(sort_base[*(const size_t *)x].path, sort_base[*(const size_t *)y].path);
}

/* The index of p's rules by path, made or remade when they changed; NULL
 * for a policy of few rules. The policy is taken as const by its
 * readers: the index is a cache, not a change to it. */
static const size_t *rules_by_path(const struct policy *cp)
{
	struct policy *p = (struct policy *)cp;
	if (p->n_rules < INDEX_FROM)
		return NULL;
	if (p->by_path && p->by_path_of == p->rules && p->by_path_n == p->n_rules && p->by_path_changed == p->rules_changed)
		return p->by_path;
	free(p->by_path);
	p->by_path = xreallocarray(NULL, p->n_rules, sizeof(*p->by_path));
	for (size_t i = 0; i < p->n_rules; i++)
		p->by_path[i] = i;
	sort_base = p->rules;
	qsort(p->by_path, p->n_rules, sizeof(*p->by_path), by_path_cmp);
	p->by_path_of = p->rules;
	p->by_path_n = p->n_rules;
	p->by_path_changed = p->rules_changed;
	return p->by_path;
}

/* The strongest indexed rule exactly at path (n bytes of it), or NULL. */
/* Between two rules on one path: the stronger access, but a backend's
 * own place over a built-in hide (root's fresh home over "hide /root":
 * the place is empty, so what the hide keeps away is not there). */
static bool outranks(const struct rule *r, const struct rule *than)
{
	if ((r->flags & RULE_FRESH) && than->access == ACCESS_HIDE && (than->flags & RULE_SYSTEM))
		return true;
	if ((than->flags & RULE_FRESH) && r->access == ACCESS_HIDE && (r->flags & RULE_SYSTEM))
		return false;
	return r->access > than->access;
}

static const struct rule *indexed_at(const struct rule_set *s, const char *path, size_t n, bool skip_protect)
{
	size_t lo = 0, hi = s->na;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *mp = s->a[s->by_path[mid]].path;
		int c = strncmp(mp, path, n);
		if (c == 0 && mp[n] != '\0')
			c = 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct rule *best = NULL;
	for (size_t i = lo; i < s->na; i++) {
		const struct rule *r = &s->a[s->by_path[i]];
		if (strncmp(r->path, path, n) != 0 || r->path[n] != '\0')
			break;
		if (skip_protect && r->access == ACCESS_PROTECT)
			continue;
		if (!best || outranks(r, best))
			best = r;
	}
	return best;
}

static const struct rule *set_rule(const struct rule_set *s, size_t i)
{
	return i < s->na ? &s->a[i] : &s->b[i - s->na];
}

/* The strongest rule exactly at path, optionally passing over protect. */
static const struct rule *rule_at(const struct rule_set *s, const char *path, bool skip_protect)
{
	const struct rule *best = NULL;
	size_t from = 0;
	if (s->by_path) {
		best = indexed_at(s, path, strlen(path), skip_protect);
		from = s->na;
	}
	for (size_t i = from; i < s->na + s->nb; i++) {
		const struct rule *r = set_rule(s, i);
		if (skip_protect && r->access == ACCESS_PROTECT)
			continue;
		if (streq(r->path, path) && (!best || outranks(r, best)))
			best = r;
	}
	return best;
}

static const struct rule *rule_for(const struct rule_set *s, const char *path)
{
	const struct rule *best = NULL;
	size_t best_len = 0;
	size_t from = 0;
	if (s->by_path) {
		/* The rules that cover path lie at it or at one of its
		 * ancestors: the deepest of those that has one decides. */
		size_t n = strlen(path);
		for (;;) {
			best = indexed_at(s, path, n == 0 ? 1 : n, false);
			if (best || n <= 1)
				break;
			while (n > 1 && path[n - 1] != '/')
				n--;
			if (n > 1)
				n--;	/* the slash itself, but for the root's */
		}
		best_len = best ? strlen(best->path) : 0;
		from = s->na;
	}
	for (size_t i = from; i < s->na + s->nb; i++) {
		const struct rule *r = set_rule(s, i);
		if (!path_is_beneath(path, r->path))
			continue;
		size_t len = strlen(r->path);
		if (!best || len > best_len || (len == best_len && outranks(r, best))) {
			best = r;
			best_len = len;
		}
	}
	return best;
}

static enum effect effect_of_access(enum access a)
{
	switch (a) {
	case ACCESS_WRITE:
		return EFFECT_WRITE;
	case ACCESS_READ:
		return EFFECT_READ;
	case ACCESS_HIDE:
	case ACCESS_PROTECT:
		break;
	}
	return EFFECT_NONE;
}

static enum effect effect(const struct rule_set *s, const char *path)
{
	const struct rule *r = rule_for(s, path);
	if (!r)
		return EFFECT_NONE;
	if (r->access != ACCESS_PROTECT)
		return effect_of_access(r->access);

	/* protect takes away writes and gives nothing: what the wider rules
	 * grant, capped at read. A read or write on the same path counts as
	 * wider. */
	enum effect wider;
	const struct rule *same = rule_at(s, r->path, true);
	if (same) {
		wider = effect_of_access(same->access);
	} else {
		_cleanup_free_ char *parent = path_parent(r->path, NULL);
		wider = parent ? effect(s, parent) : EFFECT_NONE;
	}
	return wider == EFFECT_WRITE ? EFFECT_READ : wider;
}

/* The policy's rules and its places', as one. */
static struct rule_set set_of(const struct policy *p)
{
	return (struct rule_set){ p->rules, p->n_rules, p->places ? p->places->v : NULL, p->places ? p->places->n : 0,
				  rules_by_path(p) };
}

const struct rule *policy_rule_for(const struct policy *p, const char *path)
{
	const struct rule_set s = set_of(p);
	return rule_for(&s, path);
}

enum effect policy_effect(const struct policy *p, const char *path)
{
	const struct rule_set s = set_of(p);
	return effect(&s, path);
}

/* A grant that holds a hidden path beneath it, so that the command
 * can meet the hide where it looks: one of the person's, or one in the
 * home (a toolchain's tree holding its credentials). The system's trees
 * (/etc and its shadow) and the places a backend makes (the fresh home,
 * where a credential is simply absent) are not. */
static bool holds_hide(const struct rule *g, const struct rule *h, const char *home)
{
	if (g == h || (g->access != ACCESS_READ && g->access != ACCESS_WRITE) || (g->flags & RULE_FRESH) ||
	    !path_is_beneath(h->path, g->path))
		return false;
	return !(g->flags & RULE_SYSTEM) || (home && path_is_beneath(g->path, home));
}

bool policy_in_own_state(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if ((p->rules[i].flags & RULE_STATE) && path_is_beneath(path, p->rules[i].path))
			return true;
	return false;
}

bool policy_hides_in_reach(const struct policy *p, bool any)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *h = &p->rules[i];
		if (h->access != ACCESS_HIDE)
			continue;
		if (any || h->source.kind != SOURCE_DEFAULT)
			return true;
		for (size_t j = 0; j < p->n_rules; j++)
			if (holds_hide(&p->rules[j], h, p->user_home))
				return true;
	}
	return false;
}

static const char *const path_op_names[] = {
	[PATH_OP_READ] = "read",
	[PATH_OP_EXEC] = "exec",
	[PATH_OP_WRITE] = "write",
	[PATH_OP_MOVE] = "move",
	[PATH_OP_CONNECT] = "connect",
	[PATH_OP_BIND] = "bind",
};

const char *path_op_name(enum path_op op)
{
	return path_op_names[op];
}

static bool kept_at_or_beneath(const struct rule_set *s, const char *path)
{
	for (size_t i = 0; i < s->na + s->nb; i++) {
		const struct rule *r = set_rule(s, i);
		if ((r->access == ACCESS_HIDE || r->access == ACCESS_PROTECT) && path_is_beneath(r->path, path))
			return true;
	}
	return false;
}

bool policy_allows(const struct policy *p, enum path_op op, const char *path)
{
	const struct rule_set s = set_of(p);
	enum effect e = effect(&s, path);
	switch (op) {
	case PATH_OP_READ:
	case PATH_OP_EXEC:
	case PATH_OP_CONNECT:
		return e != EFFECT_NONE;
	case PATH_OP_WRITE:
	case PATH_OP_BIND:
		return e == EFFECT_WRITE;
	case PATH_OP_MOVE:
		return e == EFFECT_WRITE && !kept_at_or_beneath(&s, path);
	}
	return false;
}

bool policy_has_rule_beneath(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (!streq(p->rules[i].path, path) && path_is_beneath(p->rules[i].path, path))
			return true;
	return false;
}

int rule_place_cmp(const struct rule *x, const struct rule *y)
{
	size_t dx = path_depth(x->path), dy = path_depth(y->path);
	if (dx != dy)
		return dx < dy ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* A rule and its path's depth, counted once for the sort. */
struct deep_rule {
	size_t depth;
	struct rule r;
};

static int deep_rule_cmp(const void *a, const void *b)
{
	const struct deep_rule *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	int c = strcmp(x->r.path, y->r.path);
	return c ? c : (int)y->r.access - (int)x->r.access;
}

void policy_sort(struct policy *p)
{
	if (p->n_rules > 1) {	/* qsort's base may not be NULL, even for none */
		struct deep_rule *v = xreallocarray(NULL, p->n_rules, sizeof(*v));
		for (size_t i = 0; i < p->n_rules; i++)
			v[i] = (struct deep_rule){ path_depth(p->rules[i].path), p->rules[i] };
		qsort(v, p->n_rules, sizeof(*v), deep_rule_cmp);
		for (size_t i = 0; i < p->n_rules; i++)
			p->rules[i] = v[i].r;
		free(v);
	}
	p->rules_changed++;
}
