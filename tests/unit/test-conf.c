/* conf/: parsing (every error with its line and key), sections into
 * layers with their sources, precedence through policy_build, what an
 * untrusted file widens (key by key), [command] matching, trust records,
 * and the keys stockade.5 documents. */
#include <sys/stat.h>

#include "conf/conf.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/util.h"
#include "policy/layer.h"
#include "tests/tree.h"

static char *home, *ws;

static int parse(const char *text, struct conf_file *f, struct conf_error *e)
{
	return conf_parse("/x/stockade.ini", text, strlen(text), f, e);
}

static void test_parse(void)
{
	struct conf_file f;
	struct conf_error e;
	const char *text = "; a comment\n"
			   "# another\n"
			   "[sandbox]            ; every command\n"
			   "network = loopback\n"
			   "  write = ~/.m2 ; indented, with a comment\n"
			   "hide = .env, secrets/\n"
			   "\n"
			   "[profile test]\n"
			   "hide-ignored = true\n"
			   "[command \"cargo  fetch\"]\n"
			   "network = on\n"
			   "env = CARGO_TERM_COLOR=always, RUST_LOG\n"
			   "unset = LANG\n";
	is_int(parse(text, &f, &e), 0, "a file with every kind of section parses");
	is_int(f.n, 3, "three sections");
	ok(f.v[0].kind == CONF_SANDBOX && f.v[0].line == 3 && f.v[0].n == 3, "[sandbox] at line 3 with three keys");
	ok(f.v[0].v[1].line == 5 && streq(f.v[0].v[1].key, "write") && streq(f.v[0].v[1].value, "~/.m2"),
	   "an indented key with an inline comment: line 5, value '%s'", f.v[0].v[1].value);
	ok(f.v[1].kind == CONF_PROFILE && streq(f.v[1].name, "test"), "[profile test]");
	ok(f.v[2].kind == CONF_COMMAND && streq(f.v[2].name, "cargo fetch") && streq(f.v[2].words[0], "cargo") &&
		   streq(f.v[2].words[1], "fetch") && !f.v[2].words[2],
	   "[command \"cargo  fetch\"]: two words");
	is_str(f.dir, "/x", "relative paths start at the file's folder");
	ok(!f.hash[0], "the hash is not made until asked for");
	is_int(strlen(conf_file_hash(&f)), 64, "the contents' hash");
	is_str(f.hash, "c61a326d041ede43f541ad31a581d687eff4f896720c470b8a297f708963c20c", "SHA-256 of the bytes (as Python's hashlib gives it)");
	ok(conf_find_section(&f, CONF_PROFILE, "test") == &f.v[1] && !conf_find_section(&f, CONF_PROFILE, "lint"),
	   "sections found by kind and name");

	/* the layer of a section: each rule with its file and line */
	struct layer l;
	conf_section_layer(&f, &f.v[0], &l);
	ok(l.net_set && l.net == NET_LOOPBACK && l.net_source.line == 4 && streq(l.net_source.file, "/x/stockade.ini"),
	   "network = loopback, from line 4");
	is_int(l.n_rules, 3, "write and two hides");
	ok(l.rules[1].access == ACCESS_HIDE && streq(l.rules[1].path, ".env") && l.rules[1].source.line == 6 &&
		   l.rules[2].access == ACCESS_HIDE && streq(l.rules[2].path, "secrets/"),
	   "a list, comma-separated, each item a rule of its line");
	ok(l.needs_trust, "a file nobody trusted: its layer needs trust");
	layer_free(&l);
	conf_section_layer(&f, &f.v[2], &l);
	ok(l.n_env_ops == 3 && l.env_ops[0].kind == ENV_SET && streq(l.env_ops[0].value, "always") &&
		   l.env_ops[1].kind == ENV_PASS && l.env_ops[2].kind == ENV_UNSET,
	   "env NAME=VALUE, env NAME, unset NAME");
	layer_free(&l);
	conf_section_layer(&f, &f.v[1], &l);
	ok(l.hide_ignored_set && l.hide_ignored && l.hide_ignored_source.line == 9, "hide-ignored = true, line 9");
	layer_free(&l);
	conf_file_free(&f);

	/* The limits, each as its option takes it. */
	is_int(parse("[sandbox]\nmax-procs = 50\nmemory = 512M\ntmp-size = 25%\n", &f, &e), 0, "the limits' keys parse");
	conf_section_layer(&f, &f.v[0], &l);
	ok(l.max_procs == 50 && l.max_procs_source.line == 2 && streq(l.max_procs_source.key, "max-procs"),
	   "max-procs = 50, from line 2");
	ok(l.memory.bytes == 512ull << 20 && !l.memory.percent && l.memory_source.line == 3, "memory = 512M, line 3");
	ok(!l.tmp_size.bytes && l.tmp_size.percent == 25 && l.tmp_size_source.line == 4 &&
		   streq(l.tmp_size_source.key, "tmp-size"),
	   "tmp-size = 25%%, line 4");
	layer_free(&l);
	conf_file_free(&f);
}

struct bad_case {
	const char *what;
	const char *text;
	unsigned line;
	const char *key;
	const char *says;	/* part of the message */
};

static void test_errors(void)
{
	_cleanup_free_ char *longtext = NULL;
	{
		struct text t = { 0 };
		text_adds(&t, "[sandbox]\nread = ");
		for (int i = 0; i < 5000; i++)
			text_addc(&t, 'a');
		text_adds(&t, "\n");
		longtext = text_take(&t);
	}
	const struct bad_case cases[] = {
		{ "an unknown section", "[sandbox]\nnetwork = on\n[sandbx]\n", 3, NULL, "unknown section [sandbx]" },
		{ "an unknown section without keys", "[weird]\n", 1, NULL, "[sandbox], [profile NAME]" },
		{ "an unknown key", "[sandbox]\nnetwrok = on\n", 2, "netwrok", "the keys are network, allow, read" },
		{ "an unknown value", "[sandbox]\nnetwork = maybe\n", 2, "network", "use off, loopback, allow or on" },
		{ "a bad mode", "[profile p]\nmode = lax\n", 2, "mode", "auto, required or off" },
		{ "a bad backend", "[sandbox]\nbackend = docker\n", 2, "backend", "namespaces, landlock or seatbelt" },
		{ "a bad boolean", "[sandbox]\nhide-ignored = yes\n", 2, "hide-ignored", "true or false" },
		{ "max-procs below 2", "[sandbox]\nmax-procs = 1\n", 2, "max-procs", "from 2 to 4194304" },
		{ "max-procs not a number", "[sandbox]\nmax-procs = lots\n", 2, "max-procs", "a number of processes" },
		{ "max-procs negative", "[sandbox]\nmax-procs = -5\n", 2, "max-procs", "a number of processes" },
		{ "max-procs too high", "[sandbox]\nmax-procs = 4194305\n", 2, "max-procs", "from 2 to 4194304" },
		{ "a bad memory unit", "[profile p]\nmemory = 12Q\n", 2, "memory", "a size (512M, 4G)" },
		{ "memory above 100%", "[sandbox]\nnetwork = off\nmemory = 150%\n", 3, "memory", "a share of memory" },
		{ "tmp-size of 0", "[sandbox]\ntmp-size = 0\n", 2, "tmp-size", "a size (512M, 4G)" },
		{ "a duplicate key", "[sandbox]\nread = a\n\nread = b\n", 4, "read", "set at line 2 already" },
		{ "a duplicate section", "[profile a]\nread = x\n[profile a]\n", 3, NULL, "began at line 1" },
		{ "a key before any section", "network = on\n", 1, "network", "before any section" },
		{ "an empty list item", "[sandbox]\nhide = a,,b\n", 2, "hide", "an empty item" },
		{ "an empty value", "[sandbox]\nhome =\n", 2, "home", "use one path" },
		{ "a bad variable name", "[sandbox]\nenv = A B\n", 2, "env", "NAME or NAME=VALUE" },
		{ "a bad unset", "[sandbox]\nunset = X=1\n", 2, "unset", "a variable name" },
		{ "a line inih cannot parse", "[sandbox]\nnetwork on\n", 2, NULL, "cannot parse the line" },
		{ "an unclosed section", "[sandbox]\n[profile x\n", 2, NULL, "cannot parse the line" },
		{ "bytes that are not UTF-8", "[sandbox]\n; ok\nhide = \xff\xfe\n", 3, NULL, "not UTF-8" },
		{ "an overlong UTF-8 form", "[sandbox]\nhide = \xc0\xaf\n", 2, NULL, "not UTF-8" },
		{ "a command section unquoted", "[command cargo]\n", 1, NULL, "in double quotes" },
		{ "an empty command section", "[command \"\"]\n", 1, NULL, "at least the program" },
		{ "a profile with a space", "[profile \"a b\"]\n", 1, NULL, "a profile's name" },
		{ "a line too long", longtext, 2, NULL, "longer than 4096 bytes" },
		{ "text after a section's header", "[sandbox] x\n", 1, NULL, "text after the section's ']'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct conf_file f;
		struct conf_error e;
		int r = parse(cases[i].text, &f, &e);
		bool right = r == -EINVAL && e.line == cases[i].line &&
			     (cases[i].key ? e.key && streq(e.key, cases[i].key) : !e.key) && e.msg &&
			     strstr(e.msg, cases[i].says) && streq(e.file, "/x/stockade.ini");
		ok(right, "%s: an error at line %u%s%s", cases[i].what, cases[i].line, cases[i].key ? ", key " : "",
		   cases[i].key ? cases[i].key : "");
		if (!right)
			diag("got %d, line %u, key %s: %s", r, e.line, e.key ? e.key : "-", e.msg ? e.msg : "-");
		conf_error_free(&e);
	}
	/* a NUL byte, which a C string would hide */
	struct conf_file f;
	struct conf_error e;
	const char nul[] = "[sandbox]\nhide = a\0b\n";
	ok(conf_parse("/x/s.ini", nul, sizeof(nul) - 1, &f, &e) == -EINVAL && e.line == 2 && strstr(e.msg, "a NUL byte"),
	   "a NUL byte is an error at its line, named as one");
	conf_error_free(&e);
	/* a byte order mark first, as editors write it: not part of line 1 */
	const char bom[] = "\xef\xbb\xbf[sandbox]\nnetwork = on\n";
	ok(parse(bom, &f, &e) == 0 && f.n == 1 && f.v[0].kind == CONF_SANDBOX && f.v[0].line == 1 && f.v[0].n == 1 &&
	   f.v[0].v[0].line == 2,
	   "a leading UTF-8 byte order mark: the section at line 1, its key at line 2");
	if (f.path) {
		ok(f.len == sizeof(bom) - 1, "and the bytes kept for the hash are every byte");
		conf_file_free(&f);
	} else {
		diag("line %u: %s", e.line, e.msg ? e.msg : "-");
		conf_error_free(&e);
	}
	ok(parse("\xef\xbb\xbf[sandbox]\nnetwrok = on\n", &f, &e) == -EINVAL && e.line == 2 && e.key &&
	   streq(e.key, "netwrok") && strstr(e.msg, "unknown key"),
	   "after a byte order mark, an error keeps its line");
	conf_error_free(&e);
	ok(parse("[sandbox]\n\xef\xbb\xbfnetwork = on\n", &f, &e) == -EINVAL && e.line == 2,
	   "a byte order mark elsewhere is no blank: an error at its line");
	conf_error_free(&e);
}

static char **environment(const char *path_env)
{
	char **env = strv_new();
	strv_push(&env, xstrcat3("HOME=", home, ""));
	strv_push(&env, xstrcat3("PATH=", path_env, ""));
	strv_add(&env, "GITHUB_TOKEN=ghp_secret");
	return env;
}

static struct conf_file file_of(const char *path, const char *text, bool trusted)
{
	struct conf_file f;
	struct conf_error e;
	if (conf_parse(path, text, strlen(text), &f, &e) < 0) {
		diag("cannot parse: line %u: %s", e.line, e.msg);
		conf_error_free(&e);
		return (struct conf_file){ 0 };
	}
	f.trusted = trusted;
	return f;
}

static const struct rule *rule_on(const struct policy *p, const char *path, enum access a)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (streq(p->rules[i].path, path) && p->rules[i].access == a)
			return &p->rules[i];
	return NULL;
}

/* The user's file, the workspace's, the command line: later wins, every
 * rule keeps its file and line; what an untrusted file widens is named,
 * key by key, and what it narrows applies. */
static void test_precedence_and_trust(void)
{
	tree_dir("ws/secrets");
	tree_dir("ws/.git/hooks");
	tree_file("ws/.vscode/tasks.json", 0644);
	tree_dir("ws/sub/.github");
	tree_dir("outside");
	tree_dir("ws/sub");
	tree_dir("ws/sub/x");
	_cleanup_free_ char *user_path = tree_at("home/.config/stockade/stockade.ini");
	_cleanup_free_ char *ws_path = tree_at("ws/stockade.ini");
	_cleanup_free_ char *outside = tree_at("outside");
	_cleanup_free_ char *user_text = xasprintf("[sandbox]\nnetwork = on\nread = %s\n", outside);
	struct conf_file user = file_of(user_path, user_text, true);
	struct conf_file wsf = file_of(ws_path, "[sandbox]\nnetwork = off\nhide = secrets\nread = sub\n", false);
	struct layer layers[4];
	conf_section_layer(&user, &user.v[0], &layers[0]);
	conf_section_layer(&wsf, &wsf.v[0], &layers[1]);
	layers[2] = (struct layer){ .workspace = xstrdup(ws) };
	_cleanup_strv_ char **env = environment("/usr/bin:/bin");
	struct policy p;
	struct policy_failure pf;
	is_int(policy_build(layers, 3, NULL, env, NULL, &p, &pf), 0, "the user's file, the workspace's, the command line");
	ok(p.net == NET_OFF && p.net_source.line == 2 && streq(p.net_source.file, ws_path),
	   "the workspace's network = off narrows the user's on, at once");
	_cleanup_free_ char *secrets = tree_at("ws/secrets");
	const struct rule *h = rule_on(&p, secrets, ACCESS_HIDE);
	ok(h && h->source.line == 3 && streq(h->source.file, ws_path), "hide = secrets, relative to its file, line 3");
	const struct rule *o = rule_on(&p, outside, ACCESS_READ);
	ok(o && streq(o->source.file, user_path), "the user's read outside, without trust ('%s')", o ? o->origin : "-");
	_cleanup_free_ char *sub = tree_at("ws/sub");
	ok(rule_on(&p, sub, ACCESS_READ) != NULL, "a read inside the workspace narrows: applied");
	is_int(p.n_widenings, 0, "nothing widened");
	policy_free(&p);
	policy_failure_free(&pf);

	/* The command line after the files. */
	layers[2].net_set = true;
	layers[2].net = NET_LOOPBACK;
	layers[2].net_source = SOURCE_OPTION_OF("--net");
	is_int(policy_build(layers, 3, NULL, env, NULL, &p, &pf), 0, "with --net");
	ok(p.net == NET_LOOPBACK && p.net_source.kind == SOURCE_OPTION, "the command line wins over both files");
	policy_free(&p);
	policy_failure_free(&pf);
	for (int i = 0; i < 3; i++)
		layer_free(&layers[i]);
	conf_file_free(&wsf);

	/* Key by key, what an untrusted workspace file widens. */
	struct widen_case {
		const char *text;
		bool widens;
		const char *key;
		const char *what;
	} cases[] = {
		{ "network = on", true, "network", "a network wider than loopback" },
		{ "network = loopback", false, NULL, "the same network" },
		{ "network = off", false, NULL, "a narrower network" },
		{ "allow = registry.example", true, "allow", "a name to reach (THREATS 77)" },
		{ "network = allow", true, "network", "network allow, wider than loopback" },
		{ "mode = off", true, "mode", "mode = off" },
		{ "mode = required", false, NULL, "mode = required" },
		{ "mode = auto", false, NULL, "mode = auto after auto" },
		{ "backend = landlock", true, "backend", "a backend choice" },
		{ "home = kept", true, "home", "a kept home (written, outside the workspace)" },
		{ "env = GITHUB_TOKEN", true, "env", "passing a variable the scrub removes" },
		{ "env = LANG", false, NULL, "passing a variable that passes anyway" },
		{ "env = X=1", false, NULL, "setting a variable" },
		{ "unset = PATH", false, NULL, "unset" },
		{ "hide = secrets", false, NULL, "hide" },
		{ "hide-ignored = true", false, NULL, "hide-ignored" },
		{ "max-procs = 9000", true, "max-procs", "more processes than the default" },
		{ "max-procs = 50", false, NULL, "fewer processes" },
		{ "memory = 90%", true, "memory", "a larger share of memory" },
		{ "memory = 64M", false, NULL, "less memory" },
		{ "memory = 1024T", true, "memory", "more bytes of memory than the host's share" },
		{ "tmp-size = 16M", false, NULL, "a smaller tmpfs" },
		{ "tmp-size = 100%", true, "tmp-size", "a larger tmpfs" },
		{ "read = sub", false, NULL, "a read inside the workspace" },
		{ "write = .git/hooks", true, "write", "a write into .git (a trust hand-off)" },
		{ "write = .vscode/tasks.json", true, "write", "a write into .vscode (a trust hand-off)" },
		{ "write = sub/.github", false, NULL, "a write into a name that only starts like .git" },
		{ "hide = sub\nread = sub/x", false, NULL, "a read inside what the file itself hides (against the layers before it)" },
		{ "write = sub", false, NULL, "a write inside the workspace" },
		{ "read = /usr/share", false, NULL, "a read of what the system gives anyway" },
		{ "read = ../outside", true, "read", "a read outside the workspace" },
		{ "write = ../outside", true, "write", "a write outside the workspace" },
		{ "write = /usr/share", true, "write", "a write where the system is read-only" },
		{ "read = ~/.config", true, "read", "a read in the home" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *text = xasprintf("[sandbox]\n%s\n", cases[i].text);
		struct conf_file f = file_of(ws_path, text, false);
		struct layer ls[2];
		conf_section_layer(&f, &f.v[0], &ls[0]);
		ls[1] = (struct layer){ .workspace = xstrdup(ws) };
		tree_dir("home/.config");
		int r = policy_build(ls, 2, NULL, env, NULL, &p, &pf);
		bool right = r == 0 && (cases[i].widens ? p.n_widenings == 1 && p.widenings[0].source.line == 2 &&
								 streq(p.widenings[0].source.key, cases[i].key)
							 : p.n_widenings == 0);
		ok(right, "untrusted: %s %s", cases[i].what, cases[i].widens ? "widens, named by key and line" : "does not widen");
		if (!right)
			diag("build %d, %zu widenings", r, p.n_widenings);
		policy_free(&p);
		policy_failure_free(&pf);
		/* trusted, the same file widens nothing that is refused */
		ls[0].needs_trust = false;
		r = policy_build(ls, 2, NULL, env, NULL, &p, &pf);
		ok(r == 0 && p.n_widenings == 0, "trusted: %s applies", cases[i].what);
		policy_free(&p);
		policy_failure_free(&pf);
		layer_free(&ls[0]);
		layer_free(&ls[1]);
		conf_file_free(&f);
	}
	/* A widened setting gives nothing: not even explain shows it. */
	struct conf_file f = file_of(ws_path, "[sandbox]\nnetwork = on\n", false);
	struct layer ls[2];
	conf_section_layer(&f, &f.v[0], &ls[0]);
	ls[1] = (struct layer){ .workspace = xstrdup(ws) };
	policy_build(ls, 2, NULL, env, NULL, &p, &pf);
	ok(p.net == NET_LOOPBACK, "an untrusted network = on is not applied");
	policy_free(&p);
	policy_failure_free(&pf);
	layer_free(&ls[0]);
	layer_free(&ls[1]);
	conf_file_free(&f);
	conf_file_free(&user);
}

/* [command] sections against a command, programs in a PATH of the
 * test's own. */
static void test_matching(void)
{
	tree_file("bin/tool", 0755);
	tree_file("bin2/other", 0755);
	tree_link("tool", "bin/alias");
	tree_file("ws/bin/tool", 0755);
	_cleanup_free_ char *bin = tree_at("bin"), *bin2 = tree_at("bin2"), *wsbin = tree_at("ws/bin");
	_cleanup_free_ char *ws_path = tree_at("ws/stockade.ini");
	struct conf_set set = { .n = 1 };
	set.v = xcalloc(1, sizeof(*set.v));
	set.v[0] = file_of(ws_path,
			   "[command \"tool\"]\nnetwork = off\n"
			   "[command \"tool fetch\"]\nnetwork = off\n"
			   "[command \"tool fetch --all\"]\nnetwork = off\n"
			   "[command \"other\"]\nnetwork = off\n"
			   "[command \"missing-program\"]\nnetwork = off\n",
			   true);
	struct layer cli = { .workspace = xstrdup(ws) };
	_cleanup_free_ char *path_env = xasprintf("%s:%s", bin, bin2);
	_cleanup_strv_ char **env = environment(path_env);
	struct policy p;
	struct policy_failure pf;
	is_int(policy_build(&cli, 1, NULL, env, NULL, &p, &pf), 0, "a policy to match against");

	struct conf_matches m;
	char *argv1[] = { "tool", "fetch", "x", NULL };
	conf_match_commands(&set, argv1, path_env, path_env, ws, &p, &m);
	is_int(m.n, 5, "every command section is looked at");
	ok(m.v[0].matched && streq(m.v[0].section->name, "tool") && m.v[1].matched &&
		   streq(m.v[1].section->name, "tool fetch") && !m.v[2].matched,
	   "'tool fetch x' matches [tool] then [tool fetch], fewer words first");
	bool said = false;
	for (size_t i = 0; i < m.n; i++)
		if (streq(m.v[i].section->name, "tool fetch --all"))
			said = !m.v[i].matched && strstr(m.v[i].why, "word 3 is 'x', not '--all'");
	ok(said, "and says why [tool fetch --all] does not");
	for (size_t i = 0; i < m.n; i++)
		if (streq(m.v[i].section->name, "missing-program"))
			ok(!m.v[i].matched && strstr(m.v[i].why, "not found on PATH"), "a program not on PATH: said");
		else if (streq(m.v[i].section->name, "other"))
			ok(!m.v[i].matched && strstr(m.v[i].why, "the command's program is"), "another program: said");
	conf_matches_free(&m);

	char *argv2[] = { "alias", NULL };
	conf_match_commands(&set, argv2, path_env, path_env, ws, &p, &m);
	ok(m.n && m.v[0].matched && streq(m.v[0].section->name, "tool"), "a symlink to the program matches it (canonical)");
	conf_matches_free(&m);

	char *argv3[] = { "tool", NULL };
	_cleanup_free_ char *planted_path = xasprintf("%s:%s", wsbin, bin);
	conf_match_commands(&set, argv3, planted_path, planted_path, ws, &p, &m);
	bool none = true;
	for (size_t i = 0; i < m.n; i++)
		none = none && !m.v[i].matched;
	ok(none, "a program found in the workspace (a writable tree) matches nothing");
	ok(m.n && strstr(m.v[0].why, "which the run may write"), "and says why ('%s')", m.n ? m.v[0].why : "-");
	conf_matches_free(&m);
	char *argv4[] = { "/nonexistent/tool", NULL };
	conf_match_commands(&set, argv4, path_env, path_env, ws, &p, &m);
	ok(m.n && !m.v[0].matched && strstr(m.v[0].why, "not found"), "a command that is not found matches nothing");
	conf_matches_free(&m);
	policy_free(&p);
	policy_failure_free(&pf);
	layer_free(&cli);
	conf_set_free(&set);
}

static void test_trust(void)
{
	_cleanup_free_ char *state = tree_at("state");
	_cleanup_free_ char *path = tree_at("ws/stockade.ini");
	struct conf_file f = file_of(path, "[sandbox]\nnetwork = on\n", false);
	ok(!conf_trust_check(state, &f), "not trusted before stockade trust");
	is_int(conf_trust_record(state, &f), 0, "trust recorded");
	struct stat st;
	_cleanup_free_ char *dir = tree_at("state/trust");
	ok(stat(dir, &st) == 0 && (st.st_mode & 077) == 0, "in a private folder of the state directory");
	ok(conf_trust_check(state, &f), "trusted as it is");
	struct conf_file edited = file_of(path, "[sandbox]\nnetwork = on\nwrite = /\n", false);
	ok(!conf_trust_check(state, &edited), "an edited file is not trusted");
	struct conf_file moved = file_of("/elsewhere/stockade.ini", "[sandbox]\nnetwork = on\n", false);
	ok(!conf_trust_check(state, &moved), "the same contents at another path are not trusted");
	struct conf_trusted *v;
	size_t n;
	is_int(conf_trust_list(state, &v, &n), 0, "the list");
	ok(n == 1 && streq(v[0].path, path) && streq(v[0].hash, conf_file_hash(&f)), "holds the path and the hash");
	conf_trusted_free(v, n);
	/* a record under another path's name counts for nothing */
	_cleanup_free_ char *forged = xasprintf("%s/%064d", dir, 0);
	_cleanup_free_ char *text = xasprintf("%s %s\n", conf_file_hash(&moved), moved.path);
	int fd = open(forged, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ok(fd >= 0 && write_all(fd, text, strlen(text)) == 0, "a forged record written");
	if (fd >= 0)
		close(fd);
	ok(!conf_trust_check(state, &moved), "a record whose name is not its path's hash is ignored");
	is_int(conf_trust_list(state, &v, &n), 0, "the list again");
	is_int(n, 1, "without the forged record");
	conf_trusted_free(v, n);
	is_int(conf_trust_revoke(state, path), 0, "revoked");
	ok(!conf_trust_check(state, &f), "not trusted after --revoke");
	is_int(conf_trust_revoke(state, path), -ENOENT, "revoking again: not trusted");
	conf_file_free(&f);
	conf_file_free(&edited);
	conf_file_free(&moved);
}

/* The files a run reads. */
static void test_find(void)
{
	_cleanup_free_ char *user = tree_at("home/.config/stockade/stockade.ini");
	tree_dir("home/.config/stockade");
	tree_dir("ws2");
	_cleanup_free_ char *ws2 = tree_at("ws2");
	_cleanup_free_ char *a = tree_at("ws2/stockade.ini"), *b = tree_at("ws2/.stockade.ini");
	FILE *fp = fopen(user, "w");
	fputs("[sandbox]\nhide = x\n", fp);
	fclose(fp);
	fp = fopen(a, "w");
	fputs("[sandbox]\nnetwork = off\n", fp);
	fclose(fp);
	_cleanup_strv_ char **env = environment("/usr/bin");
	struct conf_set s;
	struct conf_error e;
	is_int(conf_find(ws2, NULL, env, &s, &e), 0, "the user's and the workspace's files");
	ok(s.n == 2 && s.v[0].origin == CONF_USER && s.v[1].origin == CONF_WORKSPACE && streq(s.v[1].path, a),
	   "the user's first, then the workspace's");
	conf_set_free(&s);
	fp = fopen(b, "w");
	fclose(fp);
	ok(conf_find(ws2, NULL, env, &s, &e) < 0 && strstr(e.msg, "two stockade files"), "both names in one workspace: an error");
	conf_error_free(&e);
	unlink(b);
	tree_link("/etc/passwd", "ws2/.stockade.ini");
	unlink(a);
	ok(conf_find(ws2, NULL, env, &s, &e) < 0 && strstr(e.msg, "symlink"), "a symlink as the workspace's file: refused");
	conf_error_free(&e);
}

/* A file of comments padded to n bytes, its last line the key: at most
 * 1 MiB is read whole, a byte more is an error, never a file cut short. */
static char *padded_file(const char *name, size_t n, const char *last)
{
	char *path = tree_at(name);
	struct text t = { 0 };
	text_adds(&t, "[sandbox]\n");
	while (t.n + strlen(last) + 80 < n)
		text_adds(&t, "; a comment that pads the file out, as a long one written by hand might be\n");
	while (t.n + strlen(last) + 1 < n)
		text_addc(&t, ';');
	text_adds(&t, "\n");
	text_adds(&t, last);
	_cleanup_free_ char *text = text_take(&t);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok(fd >= 0 && write_all(fd, text, strlen(text)) == 0 && strlen(text) == n, "a file of %zu bytes written", n);
	if (fd >= 0)
		close(fd);
	return path;
}

static void test_size(void)
{
	struct conf_file f;
	struct conf_error e;
	_cleanup_free_ char *at = padded_file("ws/at-limit.ini", (size_t)1 << 20, "hide = x\n");
	is_int(conf_read(at, CONF_WORKSPACE, &f, &e), 0, "a file of exactly 1 MiB is read");
	ok(f.n == 1 && f.v[0].n == 1 && streq(f.v[0].v[0].key, "hide"), "whole, to its last key");
	conf_file_free(&f);
	/* a byte over, and a line over: each once read as a file cut at
	 * 1 MiB, its last key dropped without a word */
	const size_t over_by[] = { 1, 4096 };
	for (size_t i = 0; i < ARRAY_SIZE(over_by); i++) {
		_cleanup_free_ char *name = xasprintf("ws/over-%zu.ini", over_by[i]);
		_cleanup_free_ char *over = padded_file(name, ((size_t)1 << 20) + over_by[i], "hide = x\n");
		int r = conf_read(over, CONF_WORKSPACE, &f, &e);
		ok(r == -EFBIG && e.file && streq(e.file, over) && e.line == 0 && e.msg && strstr(e.msg, "larger than 1 MiB"),
		   "%zu bytes over 1 MiB: an error naming the file and the limit", over_by[i]);
		if (r != -EFBIG)
			diag("got %d: %s", r, e.msg ? e.msg : "-");
		if (r == 0)
			conf_file_free(&f);
		conf_error_free(&e);
	}
}

/* The keys the loader accepts are the keys stockade.5 documents (its
 * KEYS section, one ".B key" a key), and the sections are the same. */
static void test_manual(void)
{
	_cleanup_free_ char *man = NULL;
	size_t len = 0;
	if (read_file_at(AT_FDCWD, "stockade.5", 1 << 20, &man, &len) < 0) {
		ok(0, "stockade.5 is readable from the tree's top");
		return;
	}
	char *keys = strstr(man, "\n.SH KEYS\n");
	ok(keys != NULL, "stockade.5 has a KEYS section");
	if (!keys)
		return;
	char *end = strstr(keys + 1, "\n.SH ");
	if (end)
		*end = '\0';
	_cleanup_strv_ char **documented = strv_new();
	for (char *l = strstr(keys, "\n.TP\n.B "); l; l = strstr(l + 1, "\n.TP\n.B ")) {
		char *k = l + 8;
		/* roff's "\-" is a "-" */
		struct text t = { 0 };
		for (size_t i = 0; k[i] && k[i] != ' ' && k[i] != '\n'; i++)
			if (!(k[i] == '\\' && k[i + 1] == '-'))
				text_addc(&t, k[i]);
		strv_push(&documented, text_take(&t));
	}
	size_t n_keys = 0;
	for (const struct layer_key *k = layer_keys; k->name; k++)
		n_keys++;
	bool same = strv_length(documented) == n_keys;
	for (const struct layer_key *k = layer_keys; k->name; k++)
		if (!strv_contains(documented, k->name)) {
			diag("the loader's key '%s' is not in stockade.5", k->name);
			same = false;
		}
	for (size_t i = 0; documented[i]; i++)
		if (!layer_key_find(documented[i])) {
			diag("stockade.5 documents '%s', which the loader does not accept", documented[i]);
			same = false;
		}
	ok(same, "stockade.5's keys are the loader's (%zu)", n_keys);
	char *sections = strstr(man, "\n.SH SECTIONS\n");
	bool all = sections != NULL;
	for (size_t i = 0; all && conf_section_names[i]; i++) {
		_cleanup_free_ char *want = xasprintf("\n.TP\n.B [%s]", conf_section_names[i]);
		_cleanup_free_ char *want_arg = xasprintf("\n.TP\n.BI \"[%s ", conf_section_names[i]);
		all = strstr(sections, want) || strstr(sections, want_arg);
	}
	ok(all, "stockade.5's SECTIONS names every section the loader accepts");
}

/* Every key through its own row: a good value is taken, set where the
 * row says, and a bad one refused with what the key allows; the keys a
 * session settles once say where a layer set them, and no other does. */
static void test_keys(void)
{
	static const struct {
		const char *key, *good, *bad;
		bool per_session;
	} cases[] = {
		{ "network", "loopback", "lan", false },
		{ "allow", "registry.npmjs.org", "*", false },
		{ "read", "docs", "a\tb", false },
		{ "write", "out", "a\nb", false },
		{ "hide", ".env", "a\x01", false },
		{ "env", "FOO=1", "=1", false },
		{ "unset", "FOO", "A=B", false },
		{ "home", "/tmp/h", "", true },
		{ "hide-ignored", "false", "yes", true },
		{ "mode", "required", "strict", true },
		{ "backend", "landlock", "docker", true },
		{ "max-procs", "64", "1", true },
		{ "memory", "4G", "4Q", true },
		{ "tmp-size", "50%", "0%", true },
	};
	size_t rows = 0;
	for (const struct layer_key *k = layer_keys; k->name; k++)
		rows++;
	ok(rows == ARRAY_SIZE(cases), "every key has a case here (%zu rows)", rows);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct layer_key *k = layer_key_find(cases[i].key);
		if (!k) {
			ok(false, "%s: a row", cases[i].key);
			continue;
		}
		struct layer l = { 0 };
		struct source src = { .kind = SOURCE_FILE, .file = "/w/stockade.ini", .line = 7, .key = k->name };
		char *why = NULL;
		ok(layer_key_set(k, &l, cases[i].good, src, &why) == 0 && !why, "%s = %s is taken", k->name,
		   cases[i].good);
		const struct source *at = layer_session_setting(&l);
		ok(cases[i].per_session ? at && at->line == 7 && streq(at->key, k->name) : at == NULL,
		   "%s: %s", k->name, cases[i].per_session ? "a session settles it once, and says where" : "an exec may narrow it");
		free(why);
		why = NULL;
		struct layer bad = { 0 };
		int r = layer_key_set(k, &bad, cases[i].bad, src, &why);
		ok(r == -EINVAL && why && (k->list ? strstr(why, "'") != NULL : strncmp(why, "use ", 4) == 0),
		   "%s: a bad value is refused, saying what is allowed", k->name);
		if (!why || k->list)
			diag("%s", why ? "(an item named)" : "(nothing said)");
		else
			diag("%s", why);
		free(why);
		layer_free(&bad);
		layer_free(&l);
	}
	/* Two keys of one shape are two rows, each setting its own field. */
	struct layer l = { 0 };
	char *why = NULL;
	(void)layer_key_set(layer_key_find("memory"), &l, "1G", (struct source){ 0 }, &why);
	(void)layer_key_set(layer_key_find("tmp-size"), &l, "2G", (struct source){ 0 }, &why);
	ok(l.memory.bytes == 1ull << 30 && l.tmp_size.bytes == 2ull << 30, "memory and tmp-size set their own fields");
	layer_free(&l);
}

int main(void)
{
	tree_begin("conf");
	home = tree_at("home");
	ws = tree_at("ws");
	tree_dir("home");
	tree_dir("ws");
	test_parse();
	test_errors();
	test_precedence_and_trust();
	test_matching();
	test_trust();
	test_find();
	test_size();
	test_manual();
	test_keys();
	tree_end();
	free(home);
	free(ws);
	return tap_done();
}
