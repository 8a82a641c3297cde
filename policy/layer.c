#include "policy/layer.h"

#include <errno.h>

#include "lib/util.h"
#include "policy/allow.h"

void layer_add_rule(struct layer *l, const char *path, enum access a, struct source source)
{
	l->rules = xgrow(l->rules, l->n_rules, sizeof(*l->rules));
	l->rules[l->n_rules++] = (struct layer_rule){ .path = xstrdup(path), .access = a, .source = source };
}

void layer_add_env(struct layer *l, enum env_op_kind kind, const char *name, const char *value,
		   struct source source)
{
	l->env_ops = xgrow(l->env_ops, l->n_env_ops, sizeof(*l->env_ops));
	l->env_ops[l->n_env_ops++] = (struct env_op){
		.kind = kind,
		.name = xstrdup(name),
		.value = value ? xstrdup(value) : NULL,
		.source = source,
	};
}

int layer_add_grant(struct layer *l, enum grant_kind kind, const char *spec, struct source source,
		    const char **ret_why)
{
	struct net_grant g;
	int r = net_grant_parse(kind, spec, &g, ret_why);
	if (r < 0)
		return r;
	g.source = source;
	/* A socket file: readable where it lies, which is what both backends
	 * need to reach it (the namespace jail binds it, the supervisor
	 * checks the grant). */
	if (g.kind == GRANT_CONNECT_UNIX)
		layer_add_rule(l, g.path, ACCESS_READ, source);
	l->grants = xgrow(l->grants, l->n_grants, sizeof(*l->grants));
	l->grants[l->n_grants++] = g;
	return 0;
}

int layer_add_allow(struct layer *l, const char *item, struct source source, const char **ret_why)
{
	return allow_parse(item, source, &l->allow, &l->n_allow, ret_why);
}

void layer_free(struct layer *l)
{
	allow_entries_free(l->allow, l->n_allow);
	for (size_t i = 0; i < l->n_grants; i++)
		net_grant_free(&l->grants[i]);
	free(l->grants);
	for (size_t i = 0; i < l->n_rules; i++)
		free(l->rules[i].path);
	free(l->rules);
	for (size_t i = 0; i < l->n_env_ops; i++) {
		free(l->env_ops[i].name);
		free(l->env_ops[i].value);
	}
	free(l->env_ops);
	free(l->dir);
	free(l->workspace);
	free(l->home);
	*l = (struct layer){ 0 };
}


bool env_name_valid(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '=' || (unsigned char)s[i] < 0x21 || s[i] == 0x7f)
			return false;
	return true;
}

/* What is wrong: text, or NULL for "use" and the key's allowed values. */
static int wrong(char **why, char *text)
{
	*why = text;
	return -EINVAL;
}

static int set_network(struct layer *l, const char *v, struct source src, char **why)
{
	enum net_mode m;
	if (net_mode_from_name(v, &m) < 0)
		return wrong(why, NULL);
	l->net = m;
	l->net_set = true;
	l->net_source = src;
	return 0;
}

static int set_allow(struct layer *l, const char *v, struct source src, char **why)
{
	const char *reason = NULL;
	if (layer_add_allow(l, v, src, &reason) < 0)
		return wrong(why, xasprintf("'%s': %s", v, reason));
	return 0;
}

static int add_path_rule(struct layer *l, const char *v, enum access a, struct source src, char **why)
{
	if (str_has_control(v))
		return wrong(why, xasprintf("'%s': the path has a control character", v));
	layer_add_rule(l, v, a, src);
	return 0;
}

static int set_read(struct layer *l, const char *v, struct source src, char **why)
{
	return add_path_rule(l, v, ACCESS_READ, src, why);
}

static int set_write(struct layer *l, const char *v, struct source src, char **why)
{
	return add_path_rule(l, v, ACCESS_WRITE, src, why);
}

static int set_hide(struct layer *l, const char *v, struct source src, char **why)
{
	return add_path_rule(l, v, ACCESS_HIDE, src, why);
}

static int set_env(struct layer *l, const char *v, struct source src, char **why)
{
	const char *eq = strchr(v, '=');
	size_t n = eq ? (size_t)(eq - v) : strlen(v);
	if (!env_name_valid(v, n))
		return wrong(why, xasprintf("'%s': use NAME or NAME=VALUE", v));
	if (str_has_control(v))
		return wrong(why, xasprintf("'%s': the value has a control character", v));
	_cleanup_free_ char *name = xstrndup(v, n);
	layer_add_env(l, eq ? ENV_SET : ENV_PASS, name, eq ? eq + 1 : NULL, src);
	return 0;
}

static int set_unset(struct layer *l, const char *v, struct source src, char **why)
{
	if (!env_name_valid(v, strlen(v)))
		return wrong(why, xasprintf("'%s': use a variable name", v));
	layer_add_env(l, ENV_UNSET, v, NULL, src);
	return 0;
}

static int set_home(struct layer *l, const char *v, struct source src, char **why)
{
	if (str_empty(v))
		return wrong(why, NULL);
	if (str_has_control(v))
		return wrong(why, xstrdup("the path has a control character"));
	free(l->home);
	l->home = xstrdup(v);
	l->home_source = src;
	return 0;
}

static const struct source *home_at(const struct layer *l)
{
	return l->home ? &l->home_source : NULL;
}

static int set_hide_ignored(struct layer *l, const char *v, struct source src, char **why)
{
	if (!streq(v, "true") && !streq(v, "false"))
		return wrong(why, NULL);
	l->hide_ignored = streq(v, "true");
	l->hide_ignored_set = true;
	l->hide_ignored_source = src;
	return 0;
}

static const struct source *hide_ignored_at(const struct layer *l)
{
	return l->hide_ignored_set ? &l->hide_ignored_source : NULL;
}

static int set_mode(struct layer *l, const char *v, struct source src, char **why)
{
	enum run_mode m;
	if (run_mode_from_name(v, &m) < 0)
		return wrong(why, NULL);
	l->mode = m;
	l->mode_set = true;
	l->mode_source = src;
	return 0;
}

static const struct source *mode_at(const struct layer *l)
{
	return l->mode_set ? &l->mode_source : NULL;
}

static int set_backend(struct layer *l, const char *v, struct source src, char **why)
{
	enum backend b;
	if (backend_from_name(v, &b) < 0)
		return wrong(why, NULL);
	l->backend = b;
	l->backend_set = true;
	l->backend_source = src;
	return 0;
}

static const struct source *backend_at(const struct layer *l)
{
	return l->backend_set ? &l->backend_source : NULL;
}

static int set_max_procs(struct layer *l, const char *v, struct source src, char **why)
{
	unsigned long n;
	if (max_procs_parse(v, &n) < 0)
		return wrong(why, NULL);
	l->max_procs = n;
	l->max_procs_source = src;
	return 0;
}

static const struct source *max_procs_at(const struct layer *l)
{
	return l->max_procs ? &l->max_procs_source : NULL;
}

static int set_size(struct size_spec *to, struct source *to_source, const char *v, struct source src, char **why)
{
	struct size_spec s;
	if (size_spec_parse(v, &s) < 0)
		return wrong(why, NULL);
	*to = s;
	*to_source = src;
	return 0;
}

static int set_memory(struct layer *l, const char *v, struct source src, char **why)
{
	return set_size(&l->memory, &l->memory_source, v, src, why);
}

static const struct source *memory_at(const struct layer *l)
{
	return l->memory.bytes || l->memory.percent ? &l->memory_source : NULL;
}

static int set_tmp_size(struct layer *l, const char *v, struct source src, char **why)
{
	return set_size(&l->tmp_size, &l->tmp_size_source, v, src, why);
}

static const struct source *tmp_size_at(const struct layer *l)
{
	return l->tmp_size.bytes || l->tmp_size.percent ? &l->tmp_size_source : NULL;
}

const struct layer_key layer_keys[] = {
	{ "network", "off, loopback, allow or on", false, set_network, NULL },
	{ "allow", "host names (NAME, *.NAME, NAME:PORT) or lists (@npm, @pypi, @crates, @go, @github), "
		   "separated by commas",
	  true, set_allow, NULL },
	{ "read", "paths, separated by commas", true, set_read, NULL },
	{ "write", "paths, separated by commas", true, set_write, NULL },
	{ "hide", "paths, separated by commas", true, set_hide, NULL },
	{ "env", "NAME or NAME=VALUE, separated by commas", true, set_env, NULL },
	{ "unset", "variable names, separated by commas", true, set_unset, NULL },
	{ "home", "one path", false, set_home, home_at },
	{ "hide-ignored", "true or false", false, set_hide_ignored, hide_ignored_at },
	{ "mode", "auto, required or off", false, set_mode, mode_at },
	{ "backend", "auto, namespaces, landlock or seatbelt", false, set_backend, backend_at },
	{ "max-procs", "a number of processes from 2 to 4194304", false, set_max_procs, max_procs_at },
	{ "memory", "a size (512M, 4G) or a share of memory (50%)", false, set_memory, memory_at },
	{ "tmp-size", "a size (512M, 4G) or a share of memory (50%)", false, set_tmp_size, tmp_size_at },
	{ 0 },
};

const struct layer_key *layer_key_find(const char *name)
{
	for (const struct layer_key *k = layer_keys; k->name; k++)
		if (streq(k->name, name))
			return k;
	return NULL;
}

int layer_key_set(const struct layer_key *k, struct layer *l, const char *item, struct source source, char **why)
{
	*why = NULL;
	int r = k->set(l, item, source, why);
	if (r < 0 && !*why)
		*why = xasprintf("use %s", k->allowed);
	return r;
}

const struct source *layer_session_setting(const struct layer *l)
{
	for (const struct layer_key *k = layer_keys; k->name; k++) {
		const struct source *at = k->set_at ? k->set_at(l) : NULL;
		if (at)
			return at;
	}
	return NULL;
}
