/* ignored: hide-ignored on a real git repository made for the test: the
 * entries git ignores become hide rules (an ignored directory once, names
 * with spaces as they are), tracked files that match a pattern, negated
 * ones and what is not ignored stay, a nested .gitignore counts, a
 * symlink and a toolchain's own trees are left alone; a workspace that is
 * no git working tree hides nothing and says so; hide-ignored off asks
 * nothing. git's answer is a fact the build is given (policy_facts):
 * asked once for every build of a run, and only when hide-ignored is on. */
#include "jail/ignored.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "jail/git.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/build.h"
#include "policy/ignored.h"
#include "policy/report.h"
#include "tests/tap.h"
#include "tests/tree.h"

static char *home, *state;

static void put(const char *rel, const char *content)
{
	tree_file(rel, 0644);
	_cleanup_free_ char *p = tree_at(rel);
	int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write_all(fd, content, strlen(content)) < 0)
		diag("write %s: %m", p);
	if (fd >= 0)
		close(fd);
}

/* git in the tree, with the test's own HOME and no system config. */
static int git(const char *args)
{
	_cleanup_free_ char *cmd = xasprintf("git -C '%s' -c user.name=test -c user.email=test@example.com %s >/dev/null 2>&1",
					     tree_base, args);
	return system(cmd);
}

/* The policy as the jail builds it for hide-ignored, on the tree. */
static void policy_for(struct policy *p, bool hide)
{
	policy_init(p);
	p->workspace = xstrdup(tree_base);
	p->cwd = xstrdup(tree_base);
	p->user_home = xstrdup(home);
	p->state_dir = xstrdup(state);
	p->uid = getuid();
	p->gid = getgid();
	p->hide_ignored = hide;
	p->hide_ignored_source = SOURCE_OPTION_OF("--hide-ignored");
}

/* What a run does with hide-ignored, on a policy made by hand: git asked
 * (jail/), its list hidden (the build's last step), the notes said. */
static int hide(struct policy *p, struct report *rep)
{
	int r = 0;
	if (p->hide_ignored) {
		struct ignored_answer a = { 0 };
		const char *list = NULL;
		size_t len = 0;
		r = ignored_ask(&a, p->workspace, p->user_home, &list, &len);
		if (r == 0)
			policy_hide_ignored(p, list, len);
		p->ignored.no_tree = r > 0;
		ignored_answer_free(&a);
	}
	ignored_say(p, rep);
	return r < 0 ? r : 0;
}

/* The hide rules, relative to the workspace, one a line, in the
 * policy's order. */
static char *hidden(const struct policy *p)
{
	struct text t = { 0 };
	text_adds(&t, "");
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if (r->access != ACCESS_HIDE)
			continue;
		text_adds(&t, path_is_beneath(r->path, tree_base) ? path_below(r->path, tree_base) : r->path);
		text_addc(&t, '\n');
	}
	return text_take(&t);
}

static void test_repository(void)
{
	tree_begin("ignored-repo");
	if (git("init -q") != 0) {
		ok(0, "git init");
		tree_end();
		return;
	}
	put(".gitignore", "*.log\n!keep.log\nbuild/\nspace dir/\nold/\nnode_modules/\n__pycache__/\n.venv/\n");
	put("a.log", "");
	put("keep.log", "");
	put("tracked.log", "");
	put("build/out.o", "");
	put("build/sub/deeper.o", "");
	put("src/.gitignore", "gen.c\n/local-only\n");
	put("src/gen.c", "");
	put("src/main.c", "");
	put("src/local-only", "");
	put("src/deep/gen.c", "");
	put("src/deep/local-only", "");
	put("file with space.log", "");
	put("space dir/x", "");
	put("old/a.log", "");
	put("new.txt", "");
	/* a folder that holds only what git ignores: git lists it, then
	 * what is in it */
	put("only/a.log", "");
	put("only/__pycache__/m.pyc", "");
	put("node_modules/x.js", "");
	put("pkg/__pycache__/m.pyc", "");
	put(".venv/pyvenv.cfg", "");
	tree_link("a.log", "link.log");
	/* tracked before it matched a pattern: git does not ignore it */
	if (git("add -f tracked.log .gitignore src/.gitignore src/main.c") != 0 || git("commit -q -m init") != 0)
		ok(0, "git add and commit");

	struct policy p;
	policy_for(&p, true);
	struct report rep;
	report_init(&rep);
	is_int(hide(&p, &rep), 0, "hide-ignored in a repository");
	_cleanup_free_ char *got = hidden(&p);
	/* shallow to deep, as the policy sorts: build/ and old/ once, not
	 * what is in them; only/ not itself, but its log; the symlink,
	 * node_modules, __pycache__ and the virtualenv are kept */
	is_str(got,
	       "a.log\n"
	       "build\n"
	       "file with space.log\n"
	       "old\n"
	       "space dir\n"
	       "only/a.log\n"
	       "src/gen.c\n"
	       "src/local-only\n"
	       "src/deep/gen.c\n",
	       "what git ignores is hidden, each entry once");
	ok(strv_length(rep.notes) == 0, "no note in a repository");
	bool all_hide_source = true;
	for (size_t i = 0; i < p.n_rules; i++)
		if (p.rules[i].access == ACCESS_HIDE &&
		    (p.rules[i].source.kind != SOURCE_OPTION || !streq(p.rules[i].source.key, "--hide-ignored")))
			all_hide_source = false;
	ok(all_hide_source, "each hide rule comes from --hide-ignored");
	report_free(&rep);
	policy_free(&p);

	/* asked from a subfolder: only what lies in it */
	policy_for(&p, true);
	free(p.workspace);
	p.workspace = path_join(tree_base, "src");
	is_int(hide(&p, NULL), 0, "hide-ignored in a subfolder of a repository");
	_cleanup_free_ char *sub = hidden(&p);
	is_str(sub, "src/gen.c\nsrc/local-only\nsrc/deep/gen.c\n", "a subfolder: what git ignores in it");
	policy_free(&p);

	/* off: git is not asked, nothing hidden */
	policy_for(&p, false);
	is_int(hide(&p, NULL), 0, "hide-ignored off");
	is_int(p.n_rules, 0, "hide-ignored off: no rule");
	policy_free(&p);
	tree_end();
}

static void test_not_a_repository(void)
{
	tree_begin("ignored-plain");
	put(".gitignore", "*.log\n");
	put("a.log", "");
	struct policy p;
	policy_for(&p, true);
	struct report rep;
	report_init(&rep);
	is_int(hide(&p, &rep), 0, "hide-ignored outside a git working tree: 0");
	is_int(p.n_rules, 0, "outside a git working tree: nothing hidden");
	_cleanup_free_ char *want = xasprintf(
		"hide-ignored (--hide-ignored on the command line): '%s' is not a git working tree git will read: nothing hidden",
		tree_base);
	is_int(strv_length(rep.notes), 1, "outside a git working tree: one note");
	is_str(rep.notes ? rep.notes[0] : NULL, want, "outside a git working tree: the note says so");
	report_free(&rep);
	policy_free(&p);
	tree_end();
}

/* The build asks for the fact only when hide-ignored is on, and the
 * answer is kept for the run's other builds; a git that cannot be asked
 * fails the build, naming where hide-ignored was set. */
static unsigned asked;
static int fake_ignored(void *data, const char *workspace, const char *user_home, const char **ret, size_t *ret_len)
{
	asked++;
	if (data)
		return -*(int *)data;
	static const char list[] = "a.log\0build/\0";
	*ret = list;
	*ret_len = sizeof(list) - 1;
	return 0;
}

static void test_facts(void)
{
	tree_begin("ignored-facts");
	put("a.log", "");
	put("build/x.o", "");
	char *env[] = { NULL, NULL };
	_cleanup_free_ char *home_env = xasprintf("HOME=%s", home);
	env[0] = home_env;
	struct layer l = { 0 };
	l.workspace = xstrdup(tree_base);
	l.workspace_source = SOURCE_OPTION_OF("--workspace");
	struct policy_facts facts = { .ignored = fake_ignored };
	struct policy p;
	struct policy_failure f;
	is_int(policy_build(&l, 1, NULL, env, &facts, &p, &f), 0, "a build with hide-ignored off");
	is_int(asked, 0, "hide-ignored off: the fact is never asked for");
	policy_free(&p);
	policy_failure_free(&f);

	l.hide_ignored_set = l.hide_ignored = true;
	l.hide_ignored_source = SOURCE_OPTION_OF("--hide-ignored");
	is_int(policy_build(&l, 1, NULL, env, &facts, &p, &f), 0, "a build with hide-ignored on");
	is_int(asked, 1, "hide-ignored on: asked once");
	_cleanup_free_ char *joined = path_join(tree_base, "build");
	const struct rule *hid = policy_rule_for(&p, joined);
	ok(hid && hid->access == ACCESS_HIDE && p.ignored.n_hidden == 2 && p.ignored.asked,
	   "what the fact lists is hidden by the build itself");
	policy_free(&p);
	policy_failure_free(&f);

	int e = EACCES;
	facts.data = &e;
	is_int(policy_build(&l, 1, NULL, env, &facts, &p, &f), -EACCES, "git that cannot be asked fails the build");
	ok(f.fault == POLICY_IGNORED && f.err == EACCES && f.source.key && streq(f.source.key, "--hide-ignored"),
	   "the failure names hide-ignored's source");
	policy_free(&p);
	policy_failure_free(&f);
	layer_free(&l);

	/* the real answer, kept for the run's builds */
	struct ignored_answer a = { 0 };
	const char *one = NULL, *two = NULL;
	size_t n1 = 0, n2 = 0;
	int r1 = ignored_ask(&a, tree_base, home, &one, &n1), r2 = ignored_ask(&a, tree_base, home, &two, &n2);
	ok(r1 == 1 && r2 == 1 && one == two && n1 == n2, "git asked once for two builds (no working tree here: 1)");
	ignored_answer_free(&a);
	tree_end();
}

static void test_missing_workspace(void)
{
	struct policy p;
	tree_begin("ignored-missing");
	policy_for(&p, true);
	free(p.workspace);
	p.workspace = path_join(tree_base, "gone");
	is_int(hide(&p, NULL), 0, "a workspace that does not exist: git fails, 0");
	is_int(p.n_rules, 0, "a workspace that does not exist: nothing hidden");
	policy_free(&p);
	tree_end();
}

int main(void)
{
	if (!git_find())
		tap_skip_all("git is not in /usr/bin or /bin");
	/* -q: the notes go to the report only */
	log_verbosity = -1;
	char home_tmpl[] = "/tmp/stockade-test-ignored-home-XXXXXX";
	if (!mkdtemp(home_tmpl))
		tap_skip_all("cannot make a temporary directory");
	home = home_tmpl;
	state = path_join(home, "state");
	/* the test's own git calls read no config of the user's */
	setenv("HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	test_repository();
	test_not_a_repository();
	test_missing_workspace();
	test_facts();
	tree_remove(home);
	free(state);
	return tap_done();
}
