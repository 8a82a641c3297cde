#include "policy/env.h"

#include <ctype.h>

#include "lib/path.h"
#include "lib/util.h"

/* Whole segments (between underscores and other punctuation), compared
 * without regard to case: GITHUB_TOKEN, DB_PASSWORD, X_AUTH_HEADER. */
static const char *const secret_segments[] = {
	"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD",
	"CREDENTIAL", "CREDENTIALS", "AUTH",
};

static const char *const secret_names[] = {
	"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "PGPASSWORD", "DATABASE_URL",
	"GOOGLE_APPLICATION_CREDENTIALS", "KUBECONFIG", "DOCKER_HOST",
	"DBUS_SESSION_BUS_ADDRESS",
};

static bool segment_is_secret(const char *s, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(secret_segments); i++)
		if (strlen(secret_segments[i]) == n && strncasecmp(s, secret_segments[i], n) == 0)
			return true;
	return false;
}

bool env_is_secret(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(secret_names); i++)
		if (strcasecmp(name, secret_names[i]) == 0)
			return true;
	if (strncasecmp(name, "AWS_", 4) == 0)
		return true;

	size_t n = strlen(name);
	/* API_KEY, PRIVATE_KEY, OPENAI_APIKEY: anything ending in KEY. */
	if (n >= 3 && strcasecmp(name + n - 3, "KEY") == 0)
		return true;

	const char *seg = name;
	for (const char *c = name;; c++) {
		if (*c == '\0' || !isalnum((unsigned char)*c)) {
			if (c > seg && segment_is_secret(seg, (size_t)(c - seg)))
				return true;
			if (*c == '\0')
				break;
			seg = c + 1;
		}
	}
	return false;
}

static bool entry_is(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

const char *env_get(char *const *envp, const char *name)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (entry_is(envp[i], name))
			return envp[i] + strlen(name) + 1;
	return NULL;
}

static void record(struct env *e, const char *name, const char *value, const char *why)
{
	for (size_t i = 0; i < e->n_changes; i++) {
		struct env_change *c = &e->changes[i];
		if (streq(c->name, name)) {
			free(c->value);
			free(c->why);
			c->value = value ? xstrdup(value) : NULL;
			c->why = xstrdup(why);
			return;
		}
	}
	e->changes = xgrow(e->changes, e->n_changes, sizeof(*e->changes));
	e->changes[e->n_changes++] = (struct env_change){
		.name = xstrdup(name),
		.value = value ? xstrdup(value) : NULL,
		.why = xstrdup(why),
	};
}

void env_put(struct env *e, const char *name, const char *value, const char *why)
{
	if (!e->envp)
		e->envp = strv_new();
	char *entry = NULL;
	if (value) {
		entry = xstrcat3(name, "=", value);
		strv_push(&e->owned, entry);
	}
	/* The first copy takes the new value in place; any later copy of the
	 * name (an environment may hold two) goes, or a program reading the
	 * last one would see the caller's value. */
	bool placed = false, found = false;
	size_t n = strv_length(e->envp);
	for (size_t i = 0; i < n;) {
		if (!entry_is(e->envp[i], name)) {
			i++;
			continue;
		}
		found = true;
		if (entry && !placed) {
			e->envp[i++] = entry;
			placed = true;
		} else {
			memmove(&e->envp[i], &e->envp[i + 1], (n - i) * sizeof(char *));
			n--;
		}
	}
	if (entry && !placed) {
		/* Only the vector grows: its strings are borrowed or owned. */
		e->envp = xreallocarray(e->envp, n + 2, sizeof(char *));
		e->envp[n] = entry;
		e->envp[n + 1] = NULL;
	}
	if (found || value)
		record(e, name, value, why);
}

void env_copy(struct env *dst, const struct env *src)
{
	size_t n = strv_length(src->envp);
	*dst = (struct env){ .envp = xcalloc(n + 1, sizeof(char *)) };
	if (n)
		memcpy(dst->envp, src->envp, n * sizeof(char *));
	for (size_t i = 0; i < src->n_changes; i++)
		record(dst, src->changes[i].name, src->changes[i].value, src->changes[i].why);
}

void env_begin(struct env *e, char *const *caller, const struct env_op *ops, size_t n_ops)
{
	env_free(e);
	size_t n = 0;
	e->envp = xcalloc(strv_length(caller) + 1, sizeof(char *));
	for (size_t i = 0; caller && caller[i]; i++) {
		const char *eq = strchr(caller[i], '=');
		if (!eq || eq == caller[i])
			continue;
		_cleanup_free_ char *name = xstrndup(caller[i], (size_t)(eq - caller[i]));
		bool passed = false;
		for (size_t j = 0; j < n_ops; j++)
			if (ops[j].kind == ENV_PASS && streq(ops[j].name, name))
				passed = true;
		if (env_is_secret(name) && !passed) {
			record(e, name, NULL, "may carry a credential or reach an agent");
			continue;
		}
		/* Borrowed: the caller's environment outlives the run. */
		e->envp[n++] = caller[i];
	}
	for (size_t i = 0; i < n_ops; i++) {
		const struct env_op *op = &ops[i];
		_cleanup_free_ char *src = source_text(&op->source);
		if (op->kind == ENV_SET) {
			env_put(e, op->name, op->value, src);
		} else if (op->kind == ENV_UNSET) {
			env_put(e, op->name, NULL, src);
		} else if (env_get(caller, op->name) && env_is_secret(op->name)) {
			_cleanup_free_ char *why = xstrcat3(src, " passes it through", "");
			record(e, op->name, "(the caller's value)", why);
		}
	}
}

void env_point_into_jail(struct env *e, const char *home, const char *tmpdir, const char *cwd,
			 char *const *decided)
{
	struct {
		const char *name;
		char *value;
	} vars[] = {
		{ "HOME", xstrdup(home) },
		{ "TMPDIR", xstrdup(tmpdir) },
		{ "XDG_CONFIG_HOME", path_join(home, ".config") },
		{ "XDG_DATA_HOME", path_join(home, ".local/share") },
		{ "XDG_STATE_HOME", path_join(home, ".local/state") },
		{ "XDG_RUNTIME_DIR", NULL },
		{ "PWD", xstrdup(cwd) },
		{ "OLDPWD", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		if (!strv_contains(decided, vars[i].name))
			env_put(e, vars[i].name, vars[i].value, "points into the jail");
		free(vars[i].value);
	}
	/* tmux keeps its sockets in /tmp/tmux-UID, which the landlock
	 * backend cannot give (the host's /tmp): the private tmp instead,
	 * where the run's own tmux finds its server in every command of a
	 * session. */
	if (!strv_contains(decided, "TMUX_TMPDIR"))
		env_put(e, "TMUX_TMPDIR", tmpdir, "points into the jail");
	/* Programs that read TMP or TEMP find the private tmp too. */
	static const char *const tmp_vars[] = { "TMP", "TEMP", "TEMPDIR" };
	for (size_t i = 0; i < ARRAY_SIZE(tmp_vars); i++)
		if (env_get(e->envp, tmp_vars[i]) && !strv_contains(decided, tmp_vars[i]))
			env_put(e, tmp_vars[i], tmpdir, "points into the jail");
}

void env_again(struct env *e, char *const *caller, const struct policy *p)
{
	env_begin(e, caller, p->env_ops, p->n_env_ops);
	for (size_t i = 0; i < p->env.n_changes; i++) {
		const struct env_change *c = &p->env.changes[i];
		if (c->value && !strv_contains(p->env_decided, c->name) && env_get(p->env.envp, c->name))
			env_put(e, c->name, env_get(p->env.envp, c->name), c->why);
	}
}
