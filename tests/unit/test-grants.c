/* Where a grant comes from: the command line, the user's own file, a
 * trusted file, a built-in default and the input of the caller's it was
 * derived from. Each case builds a run's policy from a fresh tree (a home,
 * a workspace, the settings files) the way stockade does (config_policy),
 * then asks why about one path: allowed or not, and the source named.
 * Then each trick a run could play on a later run's grants: a settings
 * file that widens through the environment, a [command] section lent to
 * another program, the user's own file planted, a trusted path or a
 * built-in one steered through a writable tree; each refused, beside a
 * control where the same mechanism grants what it should. */
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "jail/cli.h"
#include "jail/config.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/steer.h"
#include "policy/why.h"
#include "tests/tap.h"
#include "tests/tree.h"

/* "@rel" anywhere in s is tree_at(rel): the tree's paths, in a table
 * written before the tree exists. */
static char *expand(const char *s)
{
	struct text t = { 0 };
	for (; s && *s; s++) {
		if (*s == '@') {
			text_adds(&t, tree_base);
			text_addc(&t, '/');
		} else {
			text_addc(&t, *s);
		}
	}
	return text_take(&t);
}

static void put(const char *rel, const char *text, mode_t mode)
{
	tree_file(rel, mode);
	_cleanup_free_ char *path = tree_at(rel), *body = expand(text);
	FILE *f = fopen(path, "w");
	if (!f) {
		diag("cannot write %s: %m", path);
		return;
	}
	fputs(body, f);
	fclose(f);
}

static void link_at(const char *rel, const char *target)
{
	_cleanup_free_ char *t = expand(target);
	_cleanup_free_ char *parent = path_parent(rel, NULL);
	if (parent && *parent)
		tree_dir(parent);
	tree_link(t, rel);
}

static char *state_dir(void)
{
	return tree_at("state/stockade");
}

/* stockade trust FILE, as the verb records it. */
static void trust(const char *rel)
{
	_cleanup_free_ char *path = tree_at(rel), *canon = NULL, *state = state_dir();
	struct conf_file f;
	struct conf_error e;
	if (conf_file_path(path, &canon) < 0 || conf_read(canon, CONF_OPTION, &f, &e) < 0) {
		diag("cannot read %s to trust it", path);
		return;
	}
	if (conf_trust_record(state, &f) < 0)
		diag("cannot trust %s", path);
	conf_file_free(&f);
}

/* ------------------------------------------------------------- the tree */

/* What every case has: a home with a private folder, a PATH directory of
 * the home with a tool linked into ~/opt, a toolchain, a cache; a program
 * outside the home; a workspace; a folder to --read. */
static void common_tree(void)
{
	put("home/private/notes.txt", "private\n", 0600);
	put("home/private/bin/python", "", 0755);
	put("home/private/tool", "#!/bin/sh\n", 0755);
	put("home/opt/tool/bin/tool", "#!/bin/sh\n", 0755);
	put("home/opt/tool/share/x", "x\n", 0644);
	link_at("home/.local/bin/tool", "@home/opt/tool/bin/tool");
	put("home/.cargo/bin/cargo", "", 0755);
	put("home/.cargo/env", "", 0644);
	tree_dir("home/.cache/pip");
	put("sys/bin/tool", "#!/bin/sh\n", 0755);
	put("extra/f", "extra\n", 0644);
	tree_dir("home/ws");
	tree_dir("state");
}

static void user_file_read(void)
{
	put("home/.config/stockade/stockade.ini", "[sandbox]\nread = @userdata\n", 0644);
	put("userdata/f", "u\n", 0644);
}

static void trusted_read(void)
{
	put("home/ws/stockade.ini", "[sandbox]\nread = ../../trusted\n", 0644);
	put("trusted/f", "t\n", 0644);
	trust("home/ws/stockade.ini");
}

static void untrusted_hide(void)
{
	put("home/ws/stockade.ini", "[sandbox]\nhide = secret\n", 0644);
	put("home/ws/secret", "s\n", 0644);
}

static void trusted_path_env(void)
{
	put("home/ws/stockade.ini", "[sandbox]\nenv = PATH=@home/tools:/usr/bin:/bin\n", 0644);
	tree_dir("home/tools");
	trust("home/ws/stockade.ini");
}

static void untrusted_path_env(void)
{
	put("home/ws/stockade.ini", "[sandbox]\nenv = PATH=@home/private:/usr/bin:/bin\n", 0644);
}

static void trusted_private_path_env(void)
{
	untrusted_path_env();
	trust("home/ws/stockade.ini");
}

static void untrusted_cargo_home(void)
{
	put("home/ws/stockade.ini", "[sandbox]\nenv = CARGO_HOME=@home/private\n", 0644);
}

static void command_section(void)
{
	put("home/.config/stockade/stockade.ini", "[command \"tool\"]\nnetwork = on\n", 0644);
}

static void program_linked_in_ws(void)
{
	command_section();
	put("home/ws/stockade.ini", "[sandbox]\nenv = PATH=tools:@sys/bin:/usr/bin:/bin\n", 0644);
	link_at("home/ws/tools/tool", "@sys/bin/tool");
}

static void program_on_another_files_path(void)
{
	command_section();
	put("home/ws/stockade.ini", "[sandbox]\nenv = PATH=@other/bin:@sys/bin:/usr/bin:/bin\n", 0644);
	tree_dir("other/bin");
	_cleanup_free_ char *real = tree_at("sys/bin/tool"), *hard = tree_at("other/bin/tool");
	if (link(real, hard) < 0)
		diag("link %s: %m", hard);
	trust("home/ws/stockade.ini");
}

static void config_dir(void)
{
	tree_dir("home/.config");
}

static void config_in_ws(void)
{
	tree_dir("home/ws/dotfiles");
	link_at("home/.config", "@home/ws/dotfiles");
}

static void config_through_writable(void)
{
	tree_dir("wr/cfg");
	link_at("home/.config", "@wr/cfg");
}

static void trusted_fixtures(const char *target)
{
	put("home/ws/stockade.ini", "[profile t]\nread = fixtures\n", 0644);
	trust("home/ws/stockade.ini");
	link_at("home/ws/fixtures", target);
}

static void fixtures_to_private(void)
{
	trusted_fixtures("@home/private");
}

static void fixtures_inside(void)
{
	put("home/ws/data/x", "x\n", 0644);
	trusted_fixtures("data");
}

static void fixtures_dir_swapped(void)
{
	put("home/ws/stockade.ini", "[profile t]\nread = sub/fixtures\n", 0644);
	trust("home/ws/stockade.ini");
	tree_dir("home/private/fixtures");
	link_at("home/ws/sub", "@home/private");
}

static void venv_link(void)
{
	link_at("home/ws/.venv/bin/x", "@home/private/notes.txt");
}

static void home_bin_link(void)
{
	link_at("home/.local/bin/notes", "@home/private/notes.txt");
}

static void node_bin_swapped(void)
{
	tree_dir("home/ws/node_modules");
	link_at("home/ws/node_modules/.bin", "@home/private");
}

static void venv_cfg(bool planted)
{
	put("home/venvs/v/bin/x", "", 0755);
	link_at("home/.local/bin/x", "@home/venvs/v/bin/x");
	if (planted) {
		put("home/ws/evil.cfg", "home = @home/private/bin\n", 0644);
		link_at("home/venvs/v/pyvenv.cfg", "@home/ws/evil.cfg");
	} else {
		put("home/venvs/v/pyvenv.cfg", "home = @home/private/bin\n", 0644);
	}
}

static void venv_cfg_planted(void)
{
	venv_cfg(true);
}

static void venv_cfg_real(void)
{
	venv_cfg(false);
}

static void cache_through_ws(void)
{
	_cleanup_free_ char *pip = tree_at("home/.cache/pip");
	tree_remove(pip);
	link_at("home/.cache/pip", "@home/ws/pip");
	link_at("home/ws/pip", "@home/private");
}

static void cargo_home_in_ws(void)
{
	tree_dir("home/ws/cargo-real/bin");
	link_at("home/ws/cargo", "@home/private");
	tree_dir("home/private/bin");
}

static void program_link_in_ws(void)
{
	link_at("home/ws/run", "@home/private/tool");
}

/* ------------------------------------------------------------- the table */

#define STD_PATH "/usr/bin:/bin"

struct grant_case {
	const char *name;
	void (*setup)(void);
	const char *path;		/* the caller's PATH */
	const char *env;		/* one more variable of the caller's, or NULL */
	const char *opts[6];		/* options before the target */
	const char *target;		/* what why is asked about */
	const char *cmd[3];		/* the command, or none */
	int status;			/* config_policy's */
	bool allowed;			/* the target is readable */
	const char *says;		/* in why's from: or note: lines, or (status 125) in the error */
	const char *match;		/* in the first [command] section's reason, or NULL */
	int net;			/* the network mode, or -1 */
	const char *handoff;		/* a settings file hand-off the guard keeps, or NULL */
};

static const struct grant_case cases[] = {
	/* ---- every kind of source */
	{ "an option", NULL, STD_PATH, NULL, { "--read", "@extra" }, "@extra/f", { 0 }, 0, true,
	  "--read on the command line", NULL, -1, NULL },
	{ "a line of your own file", user_file_read, STD_PATH, NULL, { 0 }, "@userdata/f", { 0 }, 0, true,
	  "@home/.config/stockade/stockade.ini line 2 (read): your own settings file", NULL, -1, NULL },
	{ "a line of a trusted file", trusted_read, STD_PATH, NULL, { 0 }, "@trusted/f", { 0 }, 0, true,
	  "@home/ws/stockade.ini line 2 (read): a file you trusted with stockade trust", NULL, -1, NULL },
	{ "a narrowing of a file nobody trusted", untrusted_hide, STD_PATH, NULL, { 0 }, "@home/ws/secret", { 0 }, 0, false,
	  "@home/ws/stockade.ini line 2 (hide): a file nobody trusted", NULL, -1, NULL },
	{ "built in: a PATH directory of your environment's", NULL, "@home/.local/bin:" STD_PATH, NULL, { 0 },
	  "@home/.local/bin", { 0 }, 0, true, "built in: PATH directory @home/.local/bin, from your environment's PATH",
	  NULL, -1, NULL },
	{ "built in: a PATH directory a trusted file set", trusted_path_env, STD_PATH, NULL, { 0 }, "@home/tools", { 0 },
	  0, true, "built in: PATH directory @home/tools, from PATH as @home/ws/stockade.ini line 2 (env) sets it", NULL, -1,
	  NULL },
	{ "built in: a toolchain your PATH reaches", NULL, "@home/.cargo/bin:" STD_PATH, NULL, { 0 }, "@home/.cargo/env",
	  { 0 }, 0, true, "toolchain cargo (PATH has @home/.cargo/bin, from your environment's PATH)", NULL, -1, NULL },
	{ "built in: the tree a link in a PATH directory reaches", NULL, "@home/.local/bin:" STD_PATH, NULL, { 0 },
	  "@home/opt/tool/share/x", { 0 }, 0, true,
	  "linked from PATH (@home/.local/bin/tool, from your environment's PATH)", NULL, -1, NULL },
	{ "built in: the command's program", NULL, "@sys/bin:" STD_PATH, NULL, { 0 }, "@sys/bin/tool", { "tool" }, 0, true,
	  "the command's program ('tool' on your environment's PATH)", NULL, -1, NULL },
	{ "built in: the workspace", NULL, STD_PATH, NULL, { 0 }, "@home/ws/new", { 0 }, 0, true, "built in: workspace", NULL,
	  -1, NULL },
	{ "built in: the system", NULL, STD_PATH, NULL, { 0 }, "/usr/bin", { 0 }, 0, true, "built in: system", NULL, -1,
	  NULL },
	{ "built in: a package cache", NULL, STD_PATH, NULL, { 0 }, "@home/.cache/pip", { 0 }, 0, true,
	  "built in: package cache", NULL, -1, NULL },

	/* ---- THREATS 71: a widening through the environment */
	{ "T71: an untrusted file's env = PATH=~/private is a widening", untrusted_path_env, STD_PATH, NULL, { 0 }, NULL,
	  { 0 }, 125, false,
	  "@home/ws/stockade.ini line 2: env: 'PATH=@home/private:/usr/bin:/bin' widens the jail: with it the built-in "
	  "defaults would read '@home/private'",
	  NULL, -1, NULL },
	{ "T71: any variable the defaults read (a toolchain's)", untrusted_cargo_home,
	  "@home/private/bin:@home/.cargo/bin:" STD_PATH, NULL, { 0 }, NULL, { 0 }, 125, false,
	  "line 2: env: 'CARGO_HOME=@home/private' widens the jail: with it the built-in defaults would read "
	  "'@home/private' (default: toolchain cargo",
	  NULL, -1, NULL },
	{ "T71 control: the same file, trusted, grants it", trusted_private_path_env, STD_PATH, NULL, { 0 },
	  "@home/private/notes.txt", { 0 }, 0, true, "from PATH as @home/ws/stockade.ini line 2 (env) sets it", NULL, -1,
	  NULL },

	/* ---- THREATS 72: a [command] section lent to another program */
	{ "T72 control: your program on your PATH takes your section", command_section, "@sys/bin:" STD_PATH, NULL,
	  { 0 }, NULL, { "tool" }, 0, false, NULL, "the program is '@sys/bin/tool'", NET_ON, NULL },
	{ "T72: the same program through a link a run could plant matches nothing", program_linked_in_ws,
	  "@sys/bin:" STD_PATH, NULL, { 0 }, NULL, { "tool" }, 0, false, NULL,
	  "is reached through the link '@home/ws/tools/tool' in '@home/ws', which the run may write", NET_LOOPBACK, NULL },
	{ "T72: found in a PATH entry another file set (even trusted), it matches nothing", program_on_another_files_path,
	  "@sys/bin:" STD_PATH, NULL, { 0 }, NULL, { "tool" }, 0, false, NULL,
	  "a settings file other than yours set that PATH entry", NET_LOOPBACK, NULL },

	/* ---- THREATS 73: the user's own file planted */
	{ "T73: ~/.config writable: refused though the file is not there", config_dir, STD_PATH, NULL,
	  { "--write", "@home/.config" }, NULL, { 0 }, 125, false,
	  "your own settings file '@home/.config/stockade/stockade.ini' (not there yet) could be made from the jail",
	  NULL, -1, NULL },
	{ "T73: through a link in another writable tree: refused", config_through_writable, STD_PATH, NULL,
	  { "--write", "@wr" }, NULL, { 0 }, 125, false, "your own settings file", NULL, -1, NULL },
	{ "T73: ~/.config linked into the workspace: the file is a hand-off", config_in_ws, STD_PATH, NULL, { 0 }, NULL,
	  { 0 }, 0, false, NULL, NULL, -1, "dotfiles/stockade/stockade.ini" },

	/* ---- THREATS 74: a trusted file's meaning changed without its bytes */
	{ "T74: a trusted path replaced by a symlink out of the workspace", fixtures_to_private, STD_PATH, NULL,
	  { "-p", "t" }, NULL, { 0 }, 125, false,
	  "cannot read 'fixtures' in @home/ws/stockade.ini line 2 (read): it leads to '@home/private' through "
	  "'@home/ws/fixtures'",
	  NULL, -1, NULL },
	{ "T74: a directory on the way swapped for a symlink", fixtures_dir_swapped, STD_PATH, NULL, { "-p", "t" }, NULL,
	  { 0 }, 125, false, "cannot read 'sub/fixtures' in @home/ws/stockade.ini line 2 (read): it leads to", NULL, -1,
	  NULL },
	{ "T74 control: a link that stays in the workspace", fixtures_inside, STD_PATH, NULL, { "-p", "t" },
	  "@home/ws/data/x", { 0 }, 0, true, NULL, NULL, -1, NULL },

	/* ---- THREATS 75: built-in grants through a writable tree */
	{ "T75 control: a link in a PATH directory of the home grants its tree", home_bin_link,
	  "@home/.local/bin:" STD_PATH, NULL, { 0 }, "@home/private/notes.txt", { 0 }, 0, true,
	  "linked from PATH (@home/.local/bin/notes", NULL, -1, NULL },
	{ "T75: a link planted in a PATH directory of the workspace", venv_link, "@home/ws/.venv/bin:" STD_PATH, NULL, { 0 },
	  "@home/private/notes.txt", { 0 }, 0, false,
	  "not granted by default (default: linked from PATH (@home/ws/.venv/bin/x", NULL, -1, NULL },
	{ "T75: a PATH directory of the workspace swapped for a symlink", node_bin_swapped,
	  "@home/ws/node_modules/.bin:" STD_PATH, NULL, { 0 }, "@home/private/notes.txt", { 0 }, 0, false,
	  "through the symlink '@home/ws/node_modules/.bin'", NULL, -1, NULL },
	{ "T75 control: a venv's pyvenv.cfg names its interpreter", venv_cfg_real, "@home/.local/bin:" STD_PATH, NULL,
	  { 0 }, "@home/private/bin/python", { 0 }, 0, true, "linked from PATH", NULL, -1, NULL },
	{ "T75: a pyvenv.cfg read through a link into the workspace", venv_cfg_planted, "@home/.local/bin:" STD_PATH,
	  NULL, { 0 }, "@home/private/bin/python", { 0 }, 0, false, NULL, NULL, -1, NULL },
	{ "T75: a package cache reached through the workspace", cache_through_ws, STD_PATH, NULL, { 0 },
	  "@home/private/notes.txt", { 0 }, 0, false, NULL, NULL, -1, NULL },
	{ "T75: a toolchain's variable pointing into the workspace", cargo_home_in_ws, "@home/ws/cargo/bin:" STD_PATH,
	  "CARGO_HOME=@home/ws/cargo", { 0 }, "@home/private/notes.txt", { 0 }, 0, false, NULL, NULL, -1, NULL },
	{ "T75: the command's program through a link in the workspace", program_link_in_ws, STD_PATH, NULL, { 0 },
	  "@home/private/tool", { "@home/ws/run" }, 0, false,
	  "not granted by default (the command's program): the way to it passes through the symlink '@home/ws/run'", NULL,
	  -1, NULL },
};

/* ------------------------------------------------------------- the driver */

static void tap_line(const char *line, void *data)
{
	struct text *t = data;
	text_adds(t, line);
	text_addc(t, '\n');
}

static char *target_path(const char *expanded)
{
	char *c = NULL;
	if (path_canonical(expanded, &c) == 0)
		return c;
	return path_normalize(expanded);
}

static void run_case(const struct grant_case *c)
{
	tree_begin("grants");
	common_tree();
	if (c->setup)
		c->setup();

	char **env = strv_new();
	_cleanup_free_ char *home = tree_at("home"), *state = tree_at("state"), *path = expand(c->path);
	strv_push(&env, xstrcat3("HOME=", home, ""));
	strv_push(&env, xstrcat3("XDG_STATE_HOME=", state, ""));
	strv_push(&env, xstrcat3("PATH=", path, ""));
	if (c->env)
		strv_push(&env, expand(c->env));

	_cleanup_free_ char *ws = tree_at("home/ws");
	char **args = strv_new();
	strv_add(&args, "stockade");
	strv_add(&args, "why");
	strv_add(&args, "-C");
	strv_add(&args, ws);
	for (size_t i = 0; i < ARRAY_SIZE(c->opts) && c->opts[i]; i++)
		strv_push(&args, expand(c->opts[i]));
	_cleanup_free_ char *target = c->target ? expand(c->target) : NULL;
	strv_add(&args, target ? target : "/");
	if (c->cmd[0]) {
		strv_add(&args, "--");
		for (size_t i = 0; i < ARRAY_SIZE(c->cmd) && c->cmd[i]; i++)
			strv_push(&args, expand(c->cmd[i]));
	}

	struct options o;
	char *usage = NULL;
	if (!ok(cli_parse((int)strv_length(args), args, &o, &usage) == 0, "%s: the command line parses", c->name)) {
		diag("%s", usage ? usage : "?");
		free(usage);
		strv_free(args);
		strv_free(env);
		tree_end();
		return;
	}
	struct text said = { 0 };
	log_tap_set(tap_line, &said);
	struct run_config rc;
	struct policy p;
	int st = config_policy(&o, env, NULL, &rc, &p);
	log_tap_set(NULL, NULL);
	_cleanup_free_ char *lines = text_take(&said);
	_cleanup_free_ char *says = c->says ? expand(c->says) : NULL;

	if (!ok(st == c->status, "%s: %s", c->name, c->status ? "refused (125)" : "built")) {
		diag("status %d; said: %s", st, lines);
	} else if (st != 0) {
		if (!ok(says && strstr(lines, says), "%s: the refusal names it", c->name))
			diag("want '%s' in: %s", says, lines);
	} else {
		if (target) {
			_cleanup_free_ char *t = target_path(target);
			struct why w;
			why_path(&p, t, WANT_READ, &w);
			if (!ok(w.allowed == c->allowed, "%s: %s %s", c->name, c->allowed ? "read" : "not read", t))
				diag("%s (%s)", w.rule ? w.rule : "no rule", w.source);
			if (says) {
				bool found = (w.source && strstr(w.source, says)) || (w.note && strstr(w.note, says));
				if (!ok(found, "%s: why names where it came from", c->name))
					diag("want '%s'; from: %s; note: %s", says, w.source, w.note ? w.note : "-");
			}
			why_free(&w);
		}
		if (c->match) {
			_cleanup_free_ char *want = expand(c->match);
			const char *why = rc.matches.n ? rc.matches.v[0].why : "no section";
			if (!ok(strstr(why, want) != NULL, "%s: the section says so", c->name))
				diag("want '%s' in '%s'", want, why);
		}
		if (c->net >= 0)
			ok(p.net == (enum net_mode)c->net, "%s: the network is %s", c->name,
			   net_mode_name((enum net_mode)c->net));
		if (c->handoff)
			ok(strv_contains(p.conf_handoffs, c->handoff), "%s: '%s' is kept by the guard", c->name, c->handoff);
		policy_free(&p);
	}
	config_free(&rc);
	options_free(&o);
	strv_free(args);
	strv_free(env);
	tree_end();
}

/* The walk under all of it: each lookup, a link's target, where a path
 * leads when part of it is missing. */
static void test_walk(void)
{
	tree_begin("walk");
	tree_dir("a/b");
	link_at("a/l", "b");
	link_at("a/abs", "@a/b");
	_cleanup_free_ char *w = tree_at("w");
	tree_dir("w/x");
	link_at("w/out", "@a");
	char *trees[] = { w, NULL };
	struct steer s;
	_cleanup_free_ char *p1 = tree_at("a/l/c/d"), *want1 = tree_at("a/b/c/d");
	ok(steer_path(trees, p1, &s) == 0 && s.missing && streq(s.target, want1) && !s.dir && !steer_steerable(&s),
	   "a missing rest is as written, past a link outside any writable tree");
	steer_free(&s);
	_cleanup_free_ char *p2 = tree_at("w/out/b"), *want2 = tree_at("a/b");
	ok(steer_path(trees, p2, &s) == 0 && streq(s.target, want2) && s.dir && streq(s.dir, w) && s.link &&
		   s.escapes,
	   "a link in a writable tree that leads out of it escapes");
	steer_free(&s);
	_cleanup_free_ char *p3 = tree_at("w/x/../x");
	ok(steer_path(trees, p3, &s) == 0 && s.inside && !s.escapes && s.dir, "'..' inside a writable tree stays in it");
	steer_free(&s);
	_cleanup_free_ char *p4 = tree_at("a/abs/../l");
	_cleanup_free_ char *want4 = tree_at("a/b");
	ok(steer_path(trees, p4, &s) == 0 && streq(s.target, want4), "'..' after a link goes up from where the link led");
	steer_free(&s);
	tree_end();
}

int main(void)
{
	/* the rules stockade makes are its own, whatever umask the caller has */
	umask(022);
	test_walk();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(&cases[i]);
	return tap_done();
}
