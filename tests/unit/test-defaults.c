/* defaults and policy_build: the built-in defaults for a fake user (a home
 * with toolchains, caches, credentials stowed elsewhere, PATH entries),
 * then layers on top, later ones winning, every rule with its source; each
 * failure handed back as data naming the option and path; and nothing made
 * on the way: building a policy writes nothing. */
#include "policy/build.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/defaults.h"
#include "tests/tap.h"
#include "tests/tree.h"

static char *home, *ws;


static void link_to(const char *rel, const char *target_rel)
{
	_cleanup_free_ char *path = tree_at(rel), *target = tree_at(target_rel);
	if (symlink(target, path) < 0)
		diag("symlink %s: %m", path);
}


static const struct rule *rule_on(const struct policy *p, const char *rel, enum access a)
{
	_cleanup_free_ char *path = rel[0] == '/' ? xstrdup(rel) : tree_at(rel);
	for (size_t i = 0; i < p->n_rules; i++)
		if (streq(p->rules[i].path, path) && p->rules[i].access == a)
			return &p->rules[i];
	return NULL;
}

static void expect_rule(const struct policy *p, const char *rel, enum access a, const char *origin_part)
{
	const struct rule *r = rule_on(p, rel, a);
	if (!ok(r && strstr(r->origin, origin_part), "%s %s (%s)", access_name(a), rel, origin_part))
		diag("got %s", r ? r->origin : "no such rule");
}

static char **environment(void)
{
	char **env = strv_new();
	strv_push(&env, xstrcat3("HOME=", home, ""));
	_cleanup_free_ char *cargo = path_join(home, ".cargo/bin"), *local = path_join(home, ".local/bin");
	_cleanup_free_ char *path = xasprintf("PATH=%s:%s:/usr/bin:/bin:.::relative", cargo, local);
	strv_add(&env, path);
	strv_add(&env, "GITHUB_TOKEN=ghp_secret");
	strv_add(&env, "LANG=C.UTF-8");
	return env;
}

static void test_defaults(void)
{
	tree_file("home/.gitconfig", 0644);
	tree_dir("home/.config/git");
	tree_file("home/.cargo/bin/cargo", 0755);
	tree_dir("home/.cargo/registry");
	tree_file("home/.cargo/credentials.toml", 0600);
	tree_dir("home/.rustup");
	tree_file("home/.ssh/id_ed25519", 0600);
	tree_file("dotfiles/aws-credentials", 0600);
	tree_dir("home/.aws");
	link_to("home/.aws/credentials", "dotfiles/aws-credentials");
	tree_dir("dotfiles/kube");
	link_to("home/.kube", "dotfiles/kube");
	tree_dir("home/.cache/pip");
	tree_file("home/.cache/other/token", 0600);
	tree_dir("home/.npm/_cacache");
	tree_file("home/.npmrc", 0600);
	tree_file("home/.local/bin/tool", 0755);
	tree_file("home/notes.txt", 0644);
	tree_dir("ws/.git/hooks");
	tree_file("ws/.git/config", 0644);
	tree_file("ws/.envrc", 0644);
	tree_dir("extra");

	struct layer cli = { 0 };
	cli.workspace = xstrdup(ws);
	cli.workspace_source = SOURCE_OPTION_OF("--workspace");
	_cleanup_free_ char *extra = tree_at("extra"), *nope = tree_at("ws/no-such-secret");
	layer_add_rule(&cli, extra, ACCESS_READ, SOURCE_OPTION_OF("--read"));
	layer_add_rule(&cli, nope, ACCESS_HIDE, SOURCE_OPTION_OF("--hide"));
	layer_add_env(&cli, ENV_SET, "FOO", "1", SOURCE_OPTION_OF("--env"));
	_cleanup_strv_ char **env = environment();
	char *argv[] = { "cargo", "build", NULL };
	struct policy p;
	struct policy_failure f;
	int r = policy_build(&cli, 1, argv, env, NULL, &p, &f);
	if (!is_int(r, 0, "policy_build"))
		diag("fault %d err %d path %s", f.fault, f.err, f.path ? f.path : "-");

	expect_rule(&p, "/usr", ACCESS_READ, "default: system");
	expect_rule(&p, "/etc", ACCESS_READ, "default: system");
	expect_rule(&p, "/dev/null", ACCESS_WRITE, "default: device");
	expect_rule(&p, "home/.gitconfig", ACCESS_READ, "default: git configuration");
	expect_rule(&p, "home/.config/git", ACCESS_READ, "default: git configuration");
	expect_rule(&p, "home/.cargo", ACCESS_READ, "default: toolchain cargo (PATH has");
	expect_rule(&p, "home/.rustup", ACCESS_READ, "default: toolchain rustup");
	expect_rule(&p, "home/.local/bin", ACCESS_READ, "default: PATH directory");
	expect_rule(&p, "home/.cache/pip", ACCESS_READ, "default: package cache");
	expect_rule(&p, "home/.npm/_cacache", ACCESS_READ, "default: package cache");
	ok(!rule_on(&p, "home/.cache", ACCESS_READ) && !rule_on(&p, "home", ACCESS_READ),
	   "never all of ~/.cache, never the home");
	ok(!rule_on(&p, "home/.cache/other", ACCESS_READ), "a cache not on the list is not read");
	expect_rule(&p, "home/.ssh", ACCESS_HIDE, "default: credentials");
	expect_rule(&p, "home/.aws", ACCESS_HIDE, "default: credentials");
	expect_rule(&p, "dotfiles/aws-credentials", ACCESS_HIDE, "the target of");
	expect_rule(&p, "dotfiles/kube", ACCESS_HIDE, "the target of");
	expect_rule(&p, "home/.cargo/credentials.toml", ACCESS_HIDE, "default: credentials");
	expect_rule(&p, "home/.npmrc", ACCESS_HIDE, "default: credentials");
	ok(!rule_on(&p, "home/.netrc", ACCESS_HIDE), "a credential that does not exist needs no rule");
	expect_rule(&p, "ws", ACCESS_WRITE, "workspace");
	/* the hand-offs are the guard's to find, added after the build */
	ok(!rule_on(&p, "ws/.git/hooks", ACCESS_PROTECT), "the build itself looks for no trust hand-off");
	char *handoffs[] = { ".git/hooks", ".git/config", ".envrc", ".claude", NULL };
	policy_add_handoffs(&p, p.workspace, handoffs);
	expect_rule(&p, "ws/.git/hooks", ACCESS_PROTECT, "default: trust hand-off");
	expect_rule(&p, "ws/.git/config", ACCESS_PROTECT, "default: trust hand-off");
	expect_rule(&p, "ws/.envrc", ACCESS_PROTECT, "default: trust hand-off");
	expect_rule(&p, "ws/.claude", ACCESS_PROTECT, "default: trust hand-off");
	/* one set of caches per workspace, named after it */
	ok(p.cache_dir && str_has_prefix(p.cache_dir, tree_base) &&
		   strstr(p.cache_dir, "/home/.cache/stockade/ws/ws-") && strlen(strrchr(p.cache_dir, '-')) == 17,
	   "stockade's own build caches: one set per workspace (%s)", p.cache_dir ? p.cache_dir : "-");
	const struct rule *c = p.cache_dir ? policy_rule_for(&p, p.cache_dir) : NULL;
	ok(c && c->access == ACCESS_WRITE && streq(c->path, p.cache_dir) && strstr(c->origin, "stockade's own build caches"),
	   "write them (stockade's own build caches)");
	expect_rule(&p, "extra", ACCESS_READ, "--read on the command line");
	const struct rule *x = rule_on(&p, "extra", ACCESS_READ);
	ok(x && x->source.kind == SOURCE_OPTION && streq(x->source.key, "--read"), "its source: the option --read");
	ok(p.uid != 0 || rule_on(&p, "/root", ACCESS_HIDE), "run as root: root's home is hidden");
	ok(!rule_on(&p, ".", ACCESS_READ), "neither '.' nor an empty or relative PATH entry is granted");
	ok(p.n_skipped == 1 && streq(p.skipped[0].path, nope) && streq(p.skipped[0].source.key, "--hide"),
	   "a --hide target that does not exist: skipped, named with its option");
	_cleanup_free_ char *cargo = tree_at("home/.cargo/bin/cargo");
	is_str(p.program, cargo, "the program, resolved on PATH");
	expect_rule(&p, "home/.cargo/bin/cargo", ACCESS_READ, "the command's program");

	ok(!env_get(p.env.envp, "GITHUB_TOKEN"), "a token is not in the environment");
	is_str(env_get(p.env.envp, "FOO"), "1", "--env FOO=1");
	_cleanup_free_ char *cargo_home = tree_at("home/.cargo"), *xdg = path_join(p.cache_dir, "xdg");
	is_str(env_get(p.env.envp, "CARGO_HOME"), cargo_home, "CARGO_HOME points at the real toolchain");
	is_str(env_get(p.env.envp, "XDG_CACHE_HOME"), xdg, "XDG_CACHE_HOME: stockade's own cache");
	is_str(env_get(p.env.envp, "HOME"), home, "HOME is the caller's until a backend's places say otherwise");
	ok(strv_contains(p.env_decided, "FOO"), "FOO was decided by the user");
	ok(p.net == NET_LOOPBACK && p.net_source.kind == SOURCE_DEFAULT, "the network: loopback, by default");
	ok(!p.home, "no --home: a fresh one each run");

	/* Nothing made: the cache and state directories come with a run. */
	_cleanup_free_ char *cache = tree_at("home/.cache/stockade"), *state = tree_at("home/.local/state");
	struct stat st;
	ok(lstat(cache, &st) < 0 && errno == ENOENT, "building made no cache directory");
	ok(lstat(state, &st) < 0 && errno == ENOENT, "building made no state directory");
	policy_free(&p);
	policy_failure_free(&f);
	layer_free(&cli);
}

/* Layers: the later wins for a setting, every rule of every layer counts,
 * and a relative path starts at the layer's folder. */
static void test_layers(void)
{
	struct layer first = { 0 }, second = { 0 };
	first.dir = xstrdup(tree_base);
	first.net_set = true;
	first.net = NET_ON;
	first.net_source = (struct source){ .kind = SOURCE_FILE, .file = "first.ini", .line = 2, .key = "network" };
	layer_add_rule(&first, "extra", ACCESS_READ,
		       (struct source){ .kind = SOURCE_FILE, .file = "first.ini", .line = 3, .key = "read" });
	second.workspace = xstrdup(ws);
	second.net_set = true;
	second.net = NET_OFF;
	second.net_source = SOURCE_OPTION_OF("--net");
	struct layer layers[] = { first, second };
	_cleanup_strv_ char **env = environment();
	struct policy p;
	struct policy_failure f;
	is_int(policy_build(layers, 2, NULL, env, NULL, &p, &f), 0, "two layers build");
	ok(p.net == NET_OFF && streq(p.net_source.key, "--net"), "the later layer's network wins, with its source");
	const struct rule *x = rule_on(&p, "extra", ACCESS_READ);
	ok(x && x->source.kind == SOURCE_FILE && x->source.line == 3, "a relative path in a layer starts at its folder");
	ok(x && streq(x->origin, "first.ini line 3 (read)"), "and says where it came from ('%s')", x ? x->origin : "-");
	ok(!p.argv && !p.program, "no command: explain's policy");
	policy_free(&p);
	policy_failure_free(&f);
	layer_free(&first);
	layer_free(&second);
}

struct bad {
	const char *what;
	const char *workspace;	/* relative to tree_base, or absolute */
	const char *rule;	/* --read PATH, relative to tree_base */
	enum access access;
	const char *home;	/* --home */
	enum policy_fault fault;
	int err;
	const char *key;	/* the source it names */
};

static void test_failures(void)
{
	tree_file("notdir", 0644);
	tree_dir("open-home");
	chmod(tree_base, 0755);
	_cleanup_free_ char *open_home = tree_at("open-home");
	chmod(open_home, 0777);
	const struct bad bads[] = {
		{ "the home as the workspace", "home", NULL, 0, NULL, POLICY_WORKSPACE_HOLDS_HOME, 0, "--workspace" },
		{ "an ancestor of the home", ".", NULL, 0, NULL, POLICY_WORKSPACE_HOLDS_HOME, 0, "--workspace" },
		{ "/ as the workspace", "/", NULL, 0, NULL, POLICY_WORKSPACE_IS_ROOT, 0, "--workspace" },
		{ "a workspace that is a file", "notdir", NULL, 0, NULL, POLICY_WORKSPACE_NOT_DIR, ENOTDIR, "--workspace" },
		{ "a workspace that does not exist", "nope", NULL, 0, NULL, POLICY_WORKSPACE_UNUSABLE, ENOENT, "--workspace" },
		{ "a workspace with a control character", "a\nb", NULL, 0, NULL, POLICY_PATH_CONTROL, 0, "--workspace" },
		{ "a --read target that does not exist", "ws", "missing", ACCESS_READ, NULL, POLICY_PATH_MISSING, ENOENT, "--read" },
		{ "a --write target that does not exist", "ws", "missing", ACCESS_WRITE, NULL, POLICY_PATH_MISSING, ENOENT, "--write" },
		{ "a path with a control character", "ws", "x\ty", ACCESS_READ, NULL, POLICY_PATH_CONTROL, 0, "--read" },
		{ "an empty path", "ws", "", ACCESS_READ, NULL, POLICY_PATH_EMPTY, 0, "--read" },
		{ "--home the real home", "ws", NULL, 0, "home", POLICY_HOME_HOLDS_HOME, 0, "--home" },
		{ "--home a directory others may write", "ws", NULL, 0, "open-home", POLICY_HOME_UNUSABLE, EPERM, "--home" },
		{ "--home a file", "ws", NULL, 0, "notdir", POLICY_HOME_UNUSABLE, ENOTDIR, "--home" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bads); i++) {
		const struct bad *b = &bads[i];
		struct layer l = { 0 };
		l.workspace = b->workspace[0] == '/' || strchr(b->workspace, '\n') ? xstrdup(b->workspace) : tree_at(b->workspace);
		l.workspace_source = SOURCE_OPTION_OF("--workspace");
		if (b->rule) {
			_cleanup_free_ char *path = *b->rule ? tree_at(b->rule) : xstrdup("");
			layer_add_rule(&l, path, b->access, SOURCE_OPTION_OF(b->access == ACCESS_READ ? "--read" : "--write"));
		}
		if (b->home) {
			l.home = tree_at(b->home);
			l.home_source = SOURCE_OPTION_OF("--home");
		}
		_cleanup_strv_ char **env = environment();
		struct policy p;
		struct policy_failure f;
		int r = policy_build(&l, 1, NULL, env, NULL, &p, &f);
		if (!ok(r < 0 && f.fault == b->fault && f.err == b->err && f.source.key && streq(f.source.key, b->key) &&
			(!b->rule || f.access == b->access),
			"%s: fault %d, errno %d, naming %s", b->what, b->fault, b->err, b->key))
			diag("got r %d fault %d err %d key %s", r, f.fault, f.err, f.source.key ? f.source.key : "-");
		policy_free(&p);
		policy_failure_free(&f);
		layer_free(&l);
	}
}

/* A nested run (under no_new_privs) whose XDG_STATE_HOME cannot be
 * written keeps its state in its TMPDIR; one that can, or a run not
 * nested, keeps it where XDG_STATE_HOME says. Run in a child: no_new_privs
 * is for good. */
static void test_nested_state(void)
{
	_cleanup_free_ char *file = tree_at("not-a-dir"), *tmp = tree_at("tmp"), *state = tree_at("state");
	int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	mkdir(tmp, 0700);
	mkdir(state, 0700);
	char uid[21];
	_cleanup_free_ char *want = xasprintf("%s/stockade-%s/state", tmp, fmt_u64(uid, getuid()));
	_cleanup_free_ char *want_kept = path_join(state, "stockade");
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		char got[2][PATH_MAX] = { "", "" };
		const char *xdg[2] = { file, state };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
			for (int i = 0; i < 2; i++) {
				char **env = environment();
				strv_push(&env, xstrcat3("XDG_STATE_HOME=", xdg[i], ""));
				strv_push(&env, xstrcat3("TMPDIR=", tmp, ""));
				char *dir = NULL;
				struct policy_failure f;
				if (policy_find_state_dir(env, &dir, &f) == 0)
					snprintf(got[i], sizeof(got[i]), "%s", dir);
				free(dir);
				policy_failure_free(&f);
				strv_free(env);
			}
		(void)!write(pipefd[1], got, sizeof(got));
		_exit(0);
	}
	close(pipefd[1]);
	char got[2][PATH_MAX] = { "", "" };
	(void)!read(pipefd[0], got, sizeof(got));
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	if (!ok(streq(got[0], want), "nested, XDG_STATE_HOME unwritable: the state goes to TMPDIR/stockade-UID/state"))
		diag("got '%s', want '%s'", got[0], want);
	if (!ok(streq(got[1], want_kept), "nested, XDG_STATE_HOME writable: the state stays there"))
		diag("got '%s', want '%s'", got[1], want_kept);
	_cleanup_free_ char *left = path_join(state, "stockade");
	ok(access(left, F_OK) < 0, "finding it made nothing");
	if (proc_self_status("NoNewPrivs") == 0) {
		char **env = environment();
		strv_push(&env, xstrcat3("XDG_STATE_HOME=", file, ""));
		char *dir = NULL;
		struct policy_failure f;
		_cleanup_free_ char *as_said = path_join(file, "stockade");
		ok(policy_find_state_dir(env, &dir, &f) == 0 && dir && streq(dir, as_said),
		   "not nested: the state stays where XDG_STATE_HOME says, writable or not");
		free(dir);
		policy_failure_free(&f);
		strv_free(env);
	}
}

int main(void)
{
	tree_begin("defaults");
	home = tree_at("home");
	ws = tree_at("ws");
	/* A user of the test's own: the caller's real state and cache
	 * directories stay out of it. */
	unsetenv("XDG_CACHE_HOME");
	unsetenv("XDG_STATE_HOME");
	test_defaults();
	test_layers();
	test_failures();
	test_nested_state();
	free(home);
	free(ws);
	tree_end();
	return tap_done();
}
