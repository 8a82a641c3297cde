/* env: which names are secrets (segments compared without regard to case,
 * names ending in KEY, a list of agents and endpoints), and env_begin():
 * the caller's environment less the secrets, in the caller's order, with
 * --env NAME passing a secret through, --env NAME=VALUE and --unset
 * applied, and every change recorded with why. Pure. */
#include "policy/env.h"

#include "lib/util.h"
#include "tests/tap.h"

static void test_is_secret(void)
{
	static const struct {
		const char *name;
		bool secret;
	} names[] = {
		{ "GITHUB_TOKEN", true },
		{ "AWS_SECRET_ACCESS_KEY", true },
		{ "AWS_REGION", true },	/* AWS_* by name */
		{ "aws_profile", true },
		{ "OPENAI_API_KEY", true },
		{ "ANTHROPIC_API_KEY", true },
		{ "OPENAI_APIKEY", true },
		{ "my_password", true },
		{ "DB_PASSWD", true },
		{ "X_AUTH", true },
		{ "X_AUTH_HEADER", true },
		{ "GOOGLE_APPLICATION_CREDENTIALS", true },
		{ "GIT_CREDENTIAL", true },
		{ "SSH_AUTH_SOCK", true },
		{ "GPG_AGENT_INFO", true },
		{ "DATABASE_URL", true },
		{ "database_url", true },
		{ "KUBECONFIG", true },
		{ "DOCKER_HOST", true },
		{ "DBUS_SESSION_BUS_ADDRESS", true },
		{ "PGPASSWORD", true },
		{ "NPM_TOKEN_FILE", true },
		{ "CI_JOB_TOKEN", true },
		{ "SLACK_BOT_TOKENS", true },
		{ "VAULT_SECRETS", true },
		{ "token", true },
		{ "PRIVATE_KEY", true },
		{ "GIT_AUTHOR_NAME", false },
		{ "GIT_AUTHOR_EMAIL", false },
		{ "PATH", false },
		{ "HOME", false },
		{ "TERM", false },
		{ "AUTHOR", false },
		{ "KEYBOARD", false },
		{ "KEY_LAYOUT", false },
		{ "LANG", false },
		{ "XAUTHORITY", false },
		{ "TOKENIZERS_PARALLELISM", false },
		{ "PASSWORDLESS", false },
		{ "OAUTHLIB_INSECURE", false },
		{ "SECRETARY", false },
		{ "KEYS_DIR", false },
		{ "DOCKER_BUILDKIT", false },
		{ "DATABASE", false },
		{ "", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		ok(env_is_secret(names[i].name) == names[i].secret, "'%s' is %s", names[i].name,
		   names[i].secret ? "a secret" : "not a secret");
}

static void check_env(const struct env *p, const char *const *want, const char *what)
{
	size_t n = strv_length(p->envp);
	size_t m = 0;
	while (want[m])
		m++;
	bool same = n == m;
	for (size_t i = 0; same && i < n; i++)
		same = streq(p->envp[i], want[i]);
	if (!ok(same, "%s", what)) {
		for (size_t i = 0; i < n; i++)
			diag("  got  [%zu] %s", i, p->envp[i]);
		for (size_t i = 0; i < m; i++)
			diag("  want [%zu] %s", i, want[i]);
	}
}

static const struct env_change *change(const struct env *p, const char *name)
{
	for (size_t i = 0; i < p->n_changes; i++)
		if (streq(p->changes[i].name, name))
			return &p->changes[i];
	return NULL;
}

static void test_begin_scrubs(void)
{
	char *caller[] = {
		"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x", "HOME=/home/u", "TERM=xterm",
		"SSH_AUTH_SOCK=/run/ssh", "LANG=C.UTF-8", "AWS_REGION=eu-west-1", "NOEQUALS",
		"=nameless", "EMPTY=", "A=1=2", NULL,
	};
	struct env p = { 0 };
	env_begin(&p, caller, NULL, 0);
	const char *want[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "TERM=xterm", "LANG=C.UTF-8",
			       "EMPTY=", "A=1=2", NULL };
	check_env(&p, want, "secrets removed, order kept, malformed entries dropped, '=' in values kept");
	is_int(p.n_changes, 3, "three changes recorded");
	const struct env_change *c = change(&p, "GITHUB_TOKEN");
	ok(c && c->value == NULL && streq(c->why, "may carry a credential or reach an agent"),
	   "GITHUB_TOKEN recorded as removed, with why");
	ok(change(&p, "SSH_AUTH_SOCK") && change(&p, "AWS_REGION"), "SSH_AUTH_SOCK and AWS_REGION recorded");
	ok(!change(&p, "PATH"), "PATH not recorded");
	is_str(env_get(p.envp, "HOME"), "/home/u", "env_get HOME");
	is_str(env_get(p.envp, "EMPTY"), "", "env_get of an empty value is \"\"");
	ok(env_get(p.envp, "GITHUB_TOKEN") == NULL, "env_get of a removed name: NULL");
	ok(env_get(p.envp, "HOM") == NULL, "env_get HOM does not match HOME");
	is_str(env_get(p.envp, "A"), "1=2", "env_get splits at the first '='");
	env_free(&p);
}

static void test_begin_ops(void)
{
	char *caller[] = {
		"PATH=/usr/bin", "GITHUB_TOKEN=ghp_x", "HOME=/home/u", "NPM_TOKEN=npm_y",
		"LANG=C", "EDITOR=vi", NULL,
	};
	struct env_op ops[] = {
		{ .kind = ENV_PASS, .name = "GITHUB_TOKEN", .source = SOURCE_OPTION_OF("--env") },
		{ .kind = ENV_SET, .name = "FOO", .value = "bar", .source = SOURCE_OPTION_OF("--env") },
		{ .kind = ENV_SET, .name = "HOME", .value = "/jail/home" },
		{ .kind = ENV_UNSET, .name = "LANG", .source = SOURCE_OPTION_OF("--unset") },
		{ .kind = ENV_PASS, .name = "NOT_THERE_TOKEN" },
		{ .kind = ENV_SET, .name = "EMPTYVAL", .value = "" },
		{ .kind = ENV_UNSET, .name = "NEVER_SET" },
	};
	struct env p = { 0 };
	env_begin(&p, caller, ops, ARRAY_SIZE(ops));
	const char *want[] = { "PATH=/usr/bin", "GITHUB_TOKEN=ghp_x", "HOME=/jail/home", "EDITOR=vi",
			       "FOO=bar", "EMPTYVAL=", NULL };
	check_env(&p, want,
		  "--env passes GITHUB_TOKEN in place, --env HOME= replaces in place, new ones appended, --unset removes");

	const struct env_change *c = change(&p, "GITHUB_TOKEN");
	ok(c && c->value && streq(c->value, "(the caller's value)") &&
		   streq(c->why, "--env on the command line passes it through"),
	   "the passed secret is recorded as passed through, without its value");
	c = change(&p, "NPM_TOKEN");
	ok(c && !c->value, "NPM_TOKEN (not passed) recorded as removed");
	c = change(&p, "FOO");
	ok(c && c->value && streq(c->value, "bar") && streq(c->why, "--env on the command line"),
	   "FOO=bar recorded with --env");
	c = change(&p, "HOME");
	ok(c && c->value && streq(c->value, "/jail/home"), "HOME recorded with its new value");
	c = change(&p, "LANG");
	ok(c && !c->value && streq(c->why, "--unset on the command line"), "LANG recorded as unset");
	ok(!change(&p, "NOT_THERE_TOKEN"), "--env of a name the caller lacks changes nothing");
	ok(!change(&p, "NEVER_SET"), "--unset of a name the caller lacks records nothing");
	ok(!change(&p, "PATH") && !change(&p, "EDITOR"), "untouched names are not recorded");
	is_int(p.n_changes, 6, "six changes recorded (GITHUB_TOKEN, NPM_TOKEN, FOO, HOME, LANG, EMPTYVAL)");

	/* The jail's own locations, but for what the user decided. */
	struct env jailed;
	env_copy(&jailed, &p);
	char *decided[] = { "HOME", "LANG", NULL };
	env_point_into_jail(&jailed, "/run/h", "/run/t", "/ws", decided);
	is_str(env_get(jailed.envp, "HOME"), "/jail/home", "env_point_into_jail: HOME the user set stands");
	is_str(env_get(jailed.envp, "TMPDIR"), "/run/t", "TMPDIR points into the jail");
	is_str(env_get(jailed.envp, "XDG_CONFIG_HOME"), "/run/h/.config", "XDG_CONFIG_HOME below the jail's home");
	is_str(env_get(jailed.envp, "PWD"), "/ws", "PWD is where the command starts");
	ok(!env_get(jailed.envp, "LANG"), "LANG stays unset");
	ok(change(&jailed, "TMPDIR") && !change(&p, "TMPDIR"), "the copy records its own changes, the original none");
	env_free(&jailed);

	/* The jail's own values after the command line. */
	env_put(&p, "TMPDIR", "/tmp", "the jail's temporary directory");
	env_put(&p, "EDITOR", NULL, "test removal");
	const char *want2[] = { "PATH=/usr/bin", "GITHUB_TOKEN=ghp_x", "HOME=/jail/home", "FOO=bar",
				"EMPTYVAL=", "TMPDIR=/tmp", NULL };
	check_env(&p, want2, "env_put appends a new name and removes one in place");
	c = change(&p, "TMPDIR");
	ok(c && streq(c->value, "/tmp") && streq(c->why, "the jail's temporary directory"), "TMPDIR recorded");
	env_put(&p, "TMPDIR", "/tmp2", "again");
	c = change(&p, "TMPDIR");
	ok(c && streq(c->value, "/tmp2") && streq(c->why, "again"), "a second change replaces the record");
	is_int(p.n_changes, 8, "one record per name");
	env_free(&p);
}

static void test_begin_set_secret(void)
{
	char *caller[] = { "GITHUB_TOKEN=ghp_x", "PATH=/bin", NULL };
	struct env_op ops[] = { { .kind = ENV_SET, .name = "GITHUB_TOKEN", .value = "fake" } };
	struct env p = { 0 };
	env_begin(&p, caller, ops, ARRAY_SIZE(ops));
	const char *want[] = { "PATH=/bin", "GITHUB_TOKEN=fake", NULL };
	check_env(&p, want, "--env SECRET=VALUE: the caller's value is gone, the given one is set");
	const struct env_change *c = change(&p, "GITHUB_TOKEN");
	ok(c && c->value && streq(c->value, "fake"), "recorded with the given value");
	env_free(&p);

	/* --env NAME then --unset NAME: the last word wins. */
	struct env_op ops2[] = {
		{ .kind = ENV_PASS, .name = "GITHUB_TOKEN" },
		{ .kind = ENV_UNSET, .name = "GITHUB_TOKEN" },
	};
	p = (struct env){ 0 };
	env_begin(&p, caller, ops2, ARRAY_SIZE(ops2));
	const char *want2[] = { "PATH=/bin", NULL };
	check_env(&p, want2, "--env GITHUB_TOKEN --unset GITHUB_TOKEN: removed");
	env_free(&p);

	/* No caller environment at all. */
	p = (struct env){ 0 };
	env_begin(&p, NULL, NULL, 0);
	ok(p.envp && p.envp[0] == NULL, "a NULL caller environment gives an empty one");
	env_free(&p);
}

/* A caller environment may hold a name twice (execve allows it; shells
 * keep the last). --unset and the jail's own values must leave no copy
 * behind, or `--unset X` and HOME pointing into the jail do not hold for
 * a program that reads the other copy. */
static void test_duplicates(void)
{
	char *caller[] = { "HOME=/home/u", "LANG=C", "HOME=/home/other", "LANG=de_DE", NULL };
	struct env_op ops[] = { { .kind = ENV_UNSET, .name = "LANG" } };
	struct env p = { 0 };
	env_begin(&p, caller, ops, ARRAY_SIZE(ops));
	env_put(&p, "HOME", "/jail/home", "the jail's home");
	size_t homes = 0, langs = 0;
	for (size_t i = 0; p.envp[i]; i++) {
		homes += str_has_prefix(p.envp[i], "HOME=");
		langs += str_has_prefix(p.envp[i], "LANG=");
	}
	ok(langs == 0, "--unset LANG removes every LANG of the caller (got %zu left)", langs);
	ok(homes == 1 && streq(env_get(p.envp, "HOME"), "/jail/home"),
	   "env_put HOME leaves exactly one HOME, the jail's (got %zu)", homes);
	if (langs || homes != 1)
		for (size_t i = 0; p.envp[i]; i++)
			diag("  [%zu] %s", i, p.envp[i]);
	env_free(&p);
}

int main(void)
{
	test_is_secret();
	test_begin_scrubs();
	test_begin_ops();
	test_begin_set_secret();
	test_duplicates();
	return tap_done();
}
