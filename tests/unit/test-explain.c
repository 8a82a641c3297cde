/* explain: a fixed policy on a fixed host (Landlock ABI 7, no Yama),
 * planned for each backend and printed as `stockade explain` prints it,
 * against golden files: the rules with their sources, the backend's own
 * places, the mounts, the Landlock rules with their rights, the seccomp
 * plan, the environment, and what is enforced and what is not. Nothing is
 * made: the run directory the plans name does not exist afterwards. */
#include "jail/explain.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "lib/path.h"
#include "lib/util.h"
#include "policy/env.h"
#include "tests/golden.h"
#include "tests/tap.h"
#include "tests/tree.h"



static void add(struct policy *p, const char *rel, enum access a, unsigned flags, struct source src, const char *origin)
{
	_cleanup_free_ char *path = tree_at(rel);
	policy_add_rule(p, path, a, flags, src, origin);
}

static void fixed_policy(struct policy *p)
{
	static const char *const dirs[] = { "ws", "ws/.git", "ws/.git/hooks", "ws/secrets", "ws/docs", "ws/src",
					    "sys", "sys/bin", "home", "home/.ssh", "cache", "run" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		tree_dir(dirs[i]);
	tree_file("ws/.env", 0755);
	tree_file("ws/README", 0755);
	tree_file("sys/bin/tool", 0755);
	tree_file("home/.gitconfig", 0755);

	policy_init(p);
	p->uid = 1000;
	p->gid = 1000;
	p->workspace = tree_at("ws");
	p->cwd = tree_at("ws");
	p->user_home = tree_at("home");
	p->cache_dir = tree_at("cache");
	p->state_dir = tree_at("state");
	p->net = NET_LOOPBACK;
	p->net_source = SOURCE_DEFAULT_OF("network");
	add(p, "sys", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("system"), "default: system tree");
	add(p, "home/.gitconfig", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("git"), "default: git configuration");
	add(p, "home/.ssh", ACCESS_HIDE, RULE_SYSTEM, SOURCE_DEFAULT_OF("credentials"), "default: credentials");
	add(p, "ws", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("workspace"), "workspace");
	add(p, "ws/.git/hooks", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH, SOURCE_DEFAULT_OF("trust hand-off"),
	    "default: trust hand-off");
	add(p, "ws/.env", ACCESS_HIDE, 0, SOURCE_OPTION_OF("--hide"), NULL);
	add(p, "ws/secrets", ACCESS_HIDE, 0,
	    (struct source){ .kind = SOURCE_FILE, .file = "stockade.ini", .line = 4, .key = "hide" }, NULL);
	add(p, "ws/docs", ACCESS_READ, 0, SOURCE_OPTION_OF("--read"), NULL);
	add(p, "cache", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("caches"), "stockade's own build caches");
	add(p, "sys/bin/tool", ACCESS_READ, 0, SOURCE_DEFAULT_OF("the command's program"), "the command's program");
	policy_sort(p);
	p->argv = strv_new();
	strv_add(&p->argv, "tool");
	strv_add(&p->argv, "--flag");
	p->program = tree_at("sys/bin/tool");
	char *caller[] = { "PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x", "LANG=C", NULL };
	env_begin(&p->env, caller, NULL, 0);
	_cleanup_free_ char *xdg = tree_at("cache/xdg");
	env_put(&p->env, "XDG_CACHE_HOME", xdg, "stockade's own build cache");
}

static int rule_cmp(const void *a, const void *b)
{
	return strcmp(((const struct landlock_rule *)a)->path, ((const struct landlock_rule *)b)->path);
}

static void check(struct policy *p, enum backend backend, const char *why, const char *golden)
{
	static const struct host host = { .landlock_abi = 7, .yama = -1 };
	_cleanup_free_ char *tmpdir = xstrcat3("TMPDIR=", tree_base, "/run");
	char *environ[] = { tmpdir, NULL };
	struct plan pl;
	plan_init(&pl, backend);
	places_plan(p, backend, environ, &pl.places);
	is_int(plan_filter(&pl, p, &host), 0, "%s: the filter", golden);
	plan_mounts(&pl, p);
	is_int(plan_landlock(&pl, p, &host), 0, "%s: the Landlock rules", golden);
	/* Rules in the order of the names: a directory is read in whatever
	 * order its file system keeps. */
	if (pl.landlock.n_rules)
		qsort(pl.landlock.rules, pl.landlock.n_rules, sizeof(*pl.landlock.rules), rule_cmp);
	struct report rep;
	report_init(&rep);
	plan_describe(&pl, p, &host, backend == BACKEND_LANDLOCK, &rep);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	explain_print(f, p, &pl, why, &rep);
	fclose(f);

	_cleanup_free_ char *no_run = golden_replace(text, strrchr(pl.places.run_dir, '/') + 1, "run-@RANDOM@");
	_cleanup_free_ char *no_base = golden_replace(no_run, tree_base, "@T@");
	_cleanup_free_ char *got = golden_drop_lines(no_base, "(default: system)\n");
	_cleanup_free_ char *name = xstrcat3("tests/golden/", golden, "");
	golden_check(name, got, strlen(got), golden);

	struct stat st;
	ok(lstat(pl.places.run_dir, &st) < 0 && errno == ENOENT, "%s: the run directory the plan names was not made",
	   golden);
	free(text);
	report_free(&rep);
	plan_free(&pl);
}

int main(void)
{
	tree_begin("explain");
	struct policy p;
	fixed_policy(&p);
	check(&p, BACKEND_NAMESPACES, "user namespaces work here", "explain-namespaces.txt");
	check(&p, BACKEND_LANDLOCK, "chosen with --backend", "explain-landlock.txt");
	check(&p, BACKEND_NONE, "--mode off", "explain-none.txt");
	policy_free(&p);
	tree_end();
	return tap_done();
}
