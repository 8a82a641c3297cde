/* policy: which rule decides a path (the deepest; on one path hide beats
 * protect beats read beats write), what protect leaves (read under a wider
 * read or write, nothing otherwise), duplicate rules, the sort order
 * backends walk, and the name tables. Pure: no system call. */
#include <stdbool.h>

#include "policy/policy.h"

#include <errno.h>

#include "lib/util.h"
#include "tests/tap.h"

static const char *rule_access(const struct policy *p, const char *path)
{
	const struct rule *r = policy_rule_for(p, path);
	return r ? access_name(r->access) : "(none)";
}

static const char *rule_path(const struct policy *p, const char *path)
{
	const struct rule *r = policy_rule_for(p, path);
	return r ? r->path : "(none)";
}

static const char *effect(const struct policy *p, const char *path)
{
	return effect_name(policy_effect(p, path));
}

static void test_deepest_wins(void)
{
	struct policy p;
	policy_init(&p);
	/* Added deepest first, so that the answer cannot come from the order. */
	policy_add_rule(&p, "/w/.env", ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "--hide .env");
	policy_add_rule(&p, "/w/.git", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "--read .git");
	policy_add_rule(&p, "/w", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "--write .");
	policy_add_rule(&p, "/", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "root");
	policy_add_rule(&p, "/w/.git/hooks/pre-commit.d", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "deeper write");

	is_str(rule_path(&p, "/w"), "/w", "the workspace itself: its own rule");
	is_str(rule_access(&p, "/w/src/main.c"), "write", "beneath the workspace: write");
	is_str(rule_access(&p, "/w/.git"), "read", ".git: the deeper read wins over the write");
	is_str(rule_access(&p, "/w/.git/config"), "read", "beneath .git: read");
	is_str(rule_access(&p, "/w/.env"), "hide", ".env: hide");
	is_str(rule_access(&p, "/w/.env/x"), "hide", "beneath a hidden path: hide");
	is_str(rule_access(&p, "/w/.git/hooks/pre-commit.d/x"), "write",
	       "a write deeper than a read wins (deepest, not strongest)");
	is_str(rule_path(&p, "/w/.envrc"), "/w", "/w/.envrc is not beneath /w/.env (component boundary)");
	is_str(rule_path(&p, "/w/.gitignore"), "/w", "/w/.gitignore is not beneath /w/.git");
	is_str(rule_path(&p, "/wx"), "/", "/wx is not beneath /w");
	is_str(rule_path(&p, "/etc/passwd"), "/", "a rule on / covers everything");

	is_str(effect(&p, "/w/src"), "write", "effect beneath the workspace: write");
	is_str(effect(&p, "/w/.git/HEAD"), "read", "effect beneath .git: read");
	is_str(effect(&p, "/w/.env"), "none", "effect of .env: none");
	is_str(effect(&p, "/etc"), "read", "effect of /etc under / read: read");
	policy_free(&p);

	policy_init(&p);
	policy_add_rule(&p, "/w", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "w");
	ok(policy_rule_for(&p, "/") == NULL, "no rule covers / when the only rule is /w");
	ok(policy_rule_for(&p, "/usr") == NULL, "no rule covers /usr");
	is_str(effect(&p, "/usr"), "none", "no rule: effect none");
	policy_free(&p);
}

/* Every order of adding two rules on one path gives the same winner. */
static void test_same_path_precedence(void)
{
	static const enum access order[] = { ACCESS_WRITE, ACCESS_READ, ACCESS_PROTECT, ACCESS_HIDE };
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		for (size_t j = 0; j < ARRAY_SIZE(order); j++) {
			if (i == j)
				continue;
			struct policy p;
			policy_init(&p);
			policy_add_rule(&p, "/s", order[i], 0, SOURCE_DEFAULT_OF("test"), "first");
			policy_add_rule(&p, "/s", order[j], 0, SOURCE_DEFAULT_OF("test"), "second");
			enum access want = order[i] > order[j] ? order[i] : order[j];
			const struct rule *r = policy_rule_for(&p, "/s/child");
			is_str(r ? access_name(r->access) : "(none)", access_name(want),
			       "on one path %s then %s: %s wins", access_name(order[i]),
			       access_name(order[j]), access_name(want));
			policy_free(&p);
		}

	/* All four on one path, added weakest first and strongest first. */
	struct policy p;
	policy_init(&p);
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		policy_add_rule(&p, "/s", order[i], 0, SOURCE_DEFAULT_OF("test"), "x");
	is_str(rule_access(&p, "/s"), "hide", "write, read, protect, hide on one path: hide");
	policy_free(&p);
	policy_init(&p);
	policy_add_rule(&p, "/s", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "x");
	policy_add_rule(&p, "/s", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "x");
	policy_add_rule(&p, "/s", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "x");
	is_str(rule_access(&p, "/s"), "protect", "write, read, protect on one path: protect");
	policy_free(&p);
	policy_init(&p);
	policy_add_rule(&p, "/s", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "x");
	policy_add_rule(&p, "/s", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "x");
	is_str(rule_access(&p, "/s"), "read", "read then write on one path: read");
	is_str(effect(&p, "/s/f"), "read", "read and write on one path: effect read");
	policy_free(&p);
}

static void test_protect(void)
{
	struct policy p;
	policy_init(&p);
	policy_add_rule(&p, "/w", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "write");
	policy_add_rule(&p, "/w/.vscode", ACCESS_PROTECT, RULE_HANDOFF, SOURCE_DEFAULT_OF("test"), "hand-off");
	policy_add_rule(&p, "/r", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "read");
	policy_add_rule(&p, "/r/p", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect");
	policy_add_rule(&p, "/h", ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "hide");
	policy_add_rule(&p, "/h/p", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect");
	policy_add_rule(&p, "/nowhere/p", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect alone");
	policy_add_rule(&p, "/same", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "write");
	policy_add_rule(&p, "/same", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect");
	policy_add_rule(&p, "/same-r", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect");
	policy_add_rule(&p, "/same-r", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "read");
	policy_add_rule(&p, "/same-h", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect");
	policy_add_rule(&p, "/same-h", ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "hide");
	policy_add_rule(&p, "/w/a", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect");
	policy_add_rule(&p, "/w/a/b", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect under protect");
	policy_add_rule(&p, "/w/a/b/c", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "write under protect");
	policy_add_rule(&p, "/", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "root write");
	policy_add_rule(&p, "/rootp", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect under /");

	is_str(effect(&p, "/w/.vscode"), "read", "protect under a wider write: read");
	is_str(effect(&p, "/w/.vscode/settings.json"), "read", "beneath protect under write: read");
	is_str(effect(&p, "/w/x"), "write", "beside the protected path: write");
	is_str(effect(&p, "/r/p"), "read", "protect under a wider read: read");
	is_str(effect(&p, "/h/p"), "none", "protect under hide: none");
	is_str(effect(&p, "/h/p/q"), "none", "beneath protect under hide: none");
	is_str(effect(&p, "/same"), "read", "protect and write on the same path: read");
	is_str(effect(&p, "/same/f"), "read", "beneath protect+write on one path: read");
	is_str(effect(&p, "/same-r"), "read", "protect and read on the same path: read");
	is_str(effect(&p, "/same-h"), "none", "protect and hide on the same path: none");
	is_str(effect(&p, "/w/a/b"), "read", "protect under protect under write: read");
	is_str(effect(&p, "/w/a/b/c"), "write", "a write under protect: write (deepest wins)");
	is_str(effect(&p, "/rootp"), "read", "protect under a write on /: read");
	policy_free(&p);

	policy_init(&p);
	policy_add_rule(&p, "/nowhere/p", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "protect alone");
	is_str(effect(&p, "/nowhere/p"), "none", "protect with no rule above: none");
	is_str(effect(&p, "/nowhere/p/deeper"), "none", "beneath a lone protect: none");
	policy_free(&p);
}

static void test_rule_for(void)
{
	struct policy p;
	policy_init(&p);
	struct rule *a = policy_add_rule(&p, "/a", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "a");
	is_str(a->path, "/a", "policy_add_rule returns the new rule");
	policy_add_rule(&p, "/a/b", ACCESS_WRITE, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "a/b");
	policy_add_rule(&p, "/ab", ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "ab");

	const struct rule *r = policy_rule_for(&p, "/a/b");
	ok(r && streq(r->path, "/a/b") && r->access == ACCESS_WRITE && r->flags == RULE_SYSTEM &&
		   streq(r->origin, "a/b"),
	   "rule_for /a/b: the rule itself, with its flags and origin");
	r = policy_rule_for(&p, "/a/bc");
	ok(r && streq(r->path, "/a"), "rule_for /a/bc: /a (not /a/b)");
	r = policy_rule_for(&p, "/ab/c");
	ok(r && streq(r->path, "/ab"), "rule_for /ab/c: /ab (not /a)");
	r = policy_rule_for(&p, "/a");
	ok(r && streq(r->path, "/a"), "rule_for /a: /a");
	ok(policy_rule_for(&p, "/b") == NULL, "rule_for /b: none");
	ok(policy_rule_for(&p, "/") == NULL, "rule_for /: none");
	policy_free(&p);
}

static void test_has_rule_beneath(void)
{
	struct policy p;
	policy_init(&p);
	policy_add_rule(&p, "/w", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "w");
	policy_add_rule(&p, "/w/.git/hooks", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "hooks");
	policy_add_rule(&p, "/x", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "x");

	ok(policy_has_rule_beneath(&p, "/"), "/ has rules beneath");
	ok(policy_has_rule_beneath(&p, "/w"), "/w has /w/.git/hooks beneath");
	ok(policy_has_rule_beneath(&p, "/w/.git"), "/w/.git (no rule of its own) has hooks beneath");
	ok(!policy_has_rule_beneath(&p, "/w/.git/hooks"), "/w/.git/hooks: its own rule is not beneath it");
	ok(!policy_has_rule_beneath(&p, "/w/.gi"), "/w/.gi: a name prefix is not a path prefix");
	ok(!policy_has_rule_beneath(&p, "/x"), "/x: only its own rule");
	ok(!policy_has_rule_beneath(&p, "/y"), "/y: nothing");
	policy_free(&p);
}

/* Whether the command can meet a hide where it looks (a run that names
 * each open of one): a hide of the person's anywhere; a built-in one
 * beneath a grant of the person's or a tree of the home; never beneath
 * the system's trees or a place a backend makes (the fresh home). */
static void test_hides_in_reach(void)
{
	struct policy p;
	policy_init(&p);
	p.user_home = xstrdup("/h");
	policy_add_rule(&p, "/etc", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "default: system");
	policy_add_rule(&p, "/etc/shadow", ACCESS_HIDE, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "default: secrets");
	policy_add_rule(&p, "/w", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "workspace");
	policy_add_rule(&p, "/h/.ssh", ACCESS_HIDE, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "default: credentials");
	ok(!policy_hides_in_reach(&p, false), "a credential in the home, a secret beneath /etc: none in reach");
	policy_add_rule(&p, "/h", ACCESS_WRITE, RULE_FRESH, SOURCE_DEFAULT_OF("test"), "fresh home");
	ok(!policy_hides_in_reach(&p, false), "the fresh home around a credential does not bring it in reach");
	policy_add_rule(&p, "/h/.cargo/credentials.toml", ACCESS_HIDE, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"),
			"default: credentials");
	policy_add_rule(&p, "/h/.cargo", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "default: toolchain");
	ok(policy_hides_in_reach(&p, false), "a credential inside a toolchain's tree of the home: in reach");
	policy_free(&p);

	policy_init(&p);
	p.user_home = xstrdup("/h");
	policy_add_rule(&p, "/h/.config/gh", ACCESS_HIDE, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "default: credentials");
	ok(!policy_hides_in_reach(&p, false), "a credential alone: not in reach");
	ok(policy_hides_in_reach(&p, true), "a credential alone: a hide, which -v names");
	policy_add_rule(&p, "/h/.config", ACCESS_READ, 0, SOURCE_OPTION_OF("--read"), "--read");
	ok(policy_hides_in_reach(&p, false), "a credential inside a tree you grant: in reach");
	policy_free(&p);

	policy_init(&p);
	policy_add_rule(&p, "/w/.env", ACCESS_HIDE, 0, SOURCE_OPTION_OF("--hide"), "--hide");
	ok(policy_hides_in_reach(&p, false), "a hide of yours: in reach");
	policy_free(&p);
}

static void test_duplicates(void)
{
	struct policy p;
	policy_init(&p);
	policy_add_rule(&p, "/usr/bin", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "PATH entry /usr/bin");
	struct rule *r = policy_add_rule(&p, "/usr//bin/", ACCESS_READ, RULE_DEVICE, SOURCE_DEFAULT_OF("test"), "PATH entry /bin");
	is_int(p.n_rules, 1, "the same path and access twice (spelled differently): one rule");
	is_str(p.rules[0].path, "/usr/bin", "the path is normalised");
	is_str(p.rules[0].origin, "PATH entry /usr/bin", "the first origin is kept");
	is_int(p.rules[0].flags, RULE_SYSTEM | RULE_DEVICE, "the flags of both are kept");
	ok(r == &p.rules[0], "the duplicate returns the existing rule");

	policy_add_rule(&p, "/usr/bin", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "write");
	is_int(p.n_rules, 2, "the same path with another access: a second rule");
	policy_add_rule(&p, "/usr/./lib/../bin", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "write again");
	is_int(p.n_rules, 2, "'/usr/./lib/../bin' write collapses into /usr/bin write");
	policy_add_rule(&p, "/usr/bin/x", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "deeper");
	is_int(p.n_rules, 3, "a deeper path is another rule");
	policy_free(&p);
	is_int(p.n_rules, 0, "policy_free leaves an empty policy");
	ok(p.rules == NULL && p.net == NET_LOOPBACK, "policy_free re-initialises (net back to loopback)");
	policy_free(&p);
	ok(1, "policy_free twice is harmless");
}

static void test_sort(void)
{
	struct policy p;
	policy_init(&p);
	policy_add_rule(&p, "/w/.git/hooks", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "1");
	policy_add_rule(&p, "/w/b", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "2");
	policy_add_rule(&p, "/w/.git", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "3");
	policy_add_rule(&p, "/w/.git", ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "4");
	policy_add_rule(&p, "/w/.git", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "5");
	policy_add_rule(&p, "/w", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "6");
	policy_add_rule(&p, "/", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "7");
	policy_add_rule(&p, "/w/a", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "8");
	policy_add_rule(&p, "/v", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "9");
	policy_add_rule(&p, "/w/.git", ACCESS_PROTECT, 0, SOURCE_DEFAULT_OF("test"), "10");
	policy_sort(&p);

	static const char *const want[] = {
		"/ read", "/v read", "/w write", "/w/.git hide", "/w/.git protect", "/w/.git read",
		"/w/.git write", "/w/a read", "/w/b write", "/w/.git/hooks protect",
	};
	is_int(p.n_rules, ARRAY_SIZE(want), "ten rules after sorting");
	for (size_t i = 0; i < ARRAY_SIZE(want) && i < p.n_rules; i++) {
		_cleanup_free_ char *got = xasprintf("%s %s", p.rules[i].path, access_name(p.rules[i].access));
		is_str(got, want[i], "sorted rule %zu: shallow to deep, then path, then strongest first", i);
	}
	/* Sorting must not change any answer. */
	is_str(rule_access(&p, "/w/.git/x"), "hide", "after sorting, /w/.git/x is still hide");
	policy_free(&p);
}

static void test_names(void)
{
	static const struct {
		enum access a;
		const char *name;
	} accesses[] = {
		{ ACCESS_WRITE, "write" }, { ACCESS_READ, "read" },
		{ ACCESS_PROTECT, "protect" }, { ACCESS_HIDE, "hide" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(accesses); i++) {
		enum access a = (enum access)-1;
		is_str(access_name(accesses[i].a), accesses[i].name, "access_name(%d)", (int)accesses[i].a);
		is_int(access_from_name(accesses[i].name, &a), 0, "access_from_name(%s) succeeds", accesses[i].name);
		is_int(a, accesses[i].a, "access '%s' round trips", accesses[i].name);
	}
	static const struct {
		enum net_mode m;
		const char *name;
	} nets[] = { { NET_OFF, "off" }, { NET_LOOPBACK, "loopback" }, { NET_ON, "on" } };
	for (size_t i = 0; i < ARRAY_SIZE(nets); i++) {
		enum net_mode m = (enum net_mode)-1;
		is_str(net_mode_name(nets[i].m), nets[i].name, "net_mode_name(%d)", (int)nets[i].m);
		is_int(net_mode_from_name(nets[i].name, &m), 0, "net_mode_from_name(%s) succeeds", nets[i].name);
		is_int(m, nets[i].m, "net mode '%s' round trips", nets[i].name);
	}
	static const struct {
		enum backend b;
		const char *name;
	} backends[] = {
		{ BACKEND_AUTO, "auto" }, { BACKEND_NAMESPACES, "namespaces" },
		{ BACKEND_LANDLOCK, "landlock" }, { BACKEND_SEATBELT, "seatbelt" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(backends); i++) {
		enum backend b = (enum backend)-1;
		is_str(backend_name(backends[i].b), backends[i].name, "backend_name(%d)", (int)backends[i].b);
		is_int(backend_from_name(backends[i].name, &b), 0, "backend_from_name(%s) succeeds", backends[i].name);
		is_int(b, backends[i].b, "backend '%s' round trips", backends[i].name);
	}
	is_str(backend_name(BACKEND_NONE), "none", "backend_name(BACKEND_NONE) is 'none'");
	enum backend b = BACKEND_LANDLOCK;
	is_int(backend_from_name("none", &b), -EINVAL, "'none' is what a report says, not a choice: -EINVAL");
	is_int(b, BACKEND_LANDLOCK, "a refused name leaves the output alone");

	static const struct {
		enum run_mode m;
		const char *name;
	} modes[] = { { MODE_AUTO, "auto" }, { MODE_REQUIRED, "required" }, { MODE_OFF, "off" } };
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		enum run_mode m = (enum run_mode)-1;
		is_int(run_mode_from_name(modes[i].name, &m), 0, "run_mode_from_name(%s) succeeds", modes[i].name);
		is_int(m, modes[i].m, "run mode '%s' round trips", modes[i].name);
	}
	is_str(effect_name(EFFECT_NONE), "none", "effect_name none");
	is_str(effect_name(EFFECT_READ), "read", "effect_name read");
	is_str(effect_name(EFFECT_WRITE), "write", "effect_name write");

	enum access a;
	enum net_mode m;
	enum run_mode rm;
	is_int(access_from_name("READ", &a), -EINVAL, "access names are case-sensitive: 'READ' is -EINVAL");
	is_int(access_from_name("", &a), -EINVAL, "empty access name: -EINVAL");
	is_int(access_from_name("readx", &a), -EINVAL, "'readx': -EINVAL");
	is_int(net_mode_from_name("bogus", &m), -EINVAL, "net 'bogus': -EINVAL");
	is_int(net_mode_from_name("loop", &m), -EINVAL, "net 'loop' (a prefix): -EINVAL");
	is_int(backend_from_name("bwrap", &b), -EINVAL, "backend 'bwrap': -EINVAL");
	is_int(run_mode_from_name("strict", &rm), -EINVAL, "mode 'strict': -EINVAL");
}

static void test_init(void)
{
	struct policy p;
	policy_init(&p);
	is_int(p.net, NET_LOOPBACK, "the default network is loopback");
	is_int(p.backend, BACKEND_AUTO, "the default backend is auto");
	is_int(p.mode, MODE_AUTO, "the default mode is auto");
	is_int(p.n_rules, 0, "no rules");
	policy_free(&p);
}

/* Sizes as --memory and --tmp-size take them. */
static void test_sizes(void)
{
	static const struct {
		const char *in;
		int r;
		uint64_t bytes;
		unsigned percent;
	} cases[] = {
		{ "512M", 0, 512ULL << 20, 0 },	 { "4G", 0, 4ULL << 30, 0 },	  { "4GiB", 0, 4ULL << 30, 0 },
		{ "64k", 0, 64ULL << 10, 0 },	 { "1048576", 0, 1048576, 0 },	  { "1T", 0, 1ULL << 40, 0 },
		{ "50%", 0, 0, 50 },		 { "100%", 0, 0, 100 },		  { "101%", -EINVAL, 0, 0 },
		{ "0", -EINVAL, 0, 0 },		 { "0%", -EINVAL, 0, 0 },	  { "", -EINVAL, 0, 0 },
		{ "-1G", -EINVAL, 0, 0 },	 { "12Q", -EINVAL, 0, 0 },	  { "4GB", 0, 4ULL << 30, 0 },
		{ "4Gx", -EINVAL, 0, 0 },	 { "99999999999T", -EINVAL, 0, 0 }, { " 4G", -EINVAL, 0, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct size_spec s;
		int r = size_spec_parse(cases[i].in, &s);
		ok(r == cases[i].r && (r < 0 || (s.bytes == cases[i].bytes && s.percent == cases[i].percent)),
		   "size '%s': %s", cases[i].in, cases[i].r ? "refused" : "parsed");
	}
	struct size_spec half = { .percent = 50 };
	ok(size_spec_bytes(&half, 8ULL << 30) == 4ULL << 30, "50%% of 8 GiB is 4 GiB");
	char buf[64];
	size_spec_format(&half, 8ULL << 30, buf, sizeof(buf));
	is_str(buf, "50% of memory (4.0 GiB)", "said as a share, with its bytes");
}

/* --publish and --connect values, as the command line (and the INI keys
 * that mirror it) give them. */
static void test_grants(void)
{
	static const struct {
		enum grant_kind kind;
		const char *spec;
		bool ok;
		enum grant_kind got;
		const char *host;
		unsigned port, jail_port;
		const char *text;
	} rows[] = {
		{ GRANT_PUBLISH, "8080", true, GRANT_PUBLISH, "127.0.0.1", 8080, 8080, "127.0.0.1:8080" },
		{ GRANT_PUBLISH, "8080:80", true, GRANT_PUBLISH, "127.0.0.1", 8080, 80, "127.0.0.1:8080 -> the run's port 80" },
		{ GRANT_PUBLISH, "127.0.0.2:8080", true, GRANT_PUBLISH, "127.0.0.2", 8080, 8080, "127.0.0.2:8080" },
		{ GRANT_PUBLISH, "10.1.2.3:8080:3000", true, GRANT_PUBLISH, "10.1.2.3", 8080, 3000, NULL },
		{ GRANT_PUBLISH, "[::1]:8080", true, GRANT_PUBLISH, "::1", 8080, 8080, "[::1]:8080" },
		{ GRANT_PUBLISH, "[::1]:8080:80", true, GRANT_PUBLISH, "::1", 8080, 80, NULL },
		{ GRANT_PUBLISH, "localhost:8080", true, GRANT_PUBLISH, "localhost", 8080, 8080, NULL },
		{ GRANT_PUBLISH, "0", .ok = false },
		{ GRANT_PUBLISH, "65536", .ok = false },
		{ GRANT_PUBLISH, "8080:", .ok = false },
		{ GRANT_PUBLISH, "8080:80:1", .ok = false },
		{ GRANT_PUBLISH, "example.com:80", .ok = false },
		{ GRANT_PUBLISH, "[::1:80", .ok = false },
		{ GRANT_PUBLISH, "", .ok = false },
		{ GRANT_PUBLISH, "+80", .ok = false },
		{ GRANT_CONNECT, "127.0.0.1:5432", true, GRANT_CONNECT, "127.0.0.1", 5432, 0, "127.0.0.1:5432" },
		{ GRANT_CONNECT, "localhost:6379", true, GRANT_CONNECT, "localhost", 6379, 0, NULL },
		{ GRANT_CONNECT, "[fd00::1]:5432", true, GRANT_CONNECT, "fd00::1", 5432, 0, "[fd00::1]:5432" },
		{ GRANT_CONNECT, "unix:/run/postgresql/.s.PGSQL.5432", true, GRANT_CONNECT_UNIX, NULL, 0, 0, "unix:/run/postgresql/.s.PGSQL.5432" },
		{ GRANT_CONNECT, "unix:pg.sock", .ok = false },
		{ GRANT_CONNECT, "5432", .ok = false },
		{ GRANT_CONNECT, "db:5432", .ok = false },
		{ GRANT_CONNECT, "127.0.0.1:0", .ok = false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct net_grant g;
		const char *why = NULL;
		int r = net_grant_parse(rows[i].kind, rows[i].spec, &g, &why);
		if (!rows[i].ok) {
			ok(r == -EINVAL && why, "'%s' is refused, with why (%s)", rows[i].spec, why ? why : "none");
			continue;
		}
		bool same = r == 0 && g.kind == rows[i].got && g.port == rows[i].port && g.jail_port == rows[i].jail_port &&
			    (rows[i].host ? g.host && streq(g.host, rows[i].host) : !g.host);
		_cleanup_free_ char *text = r == 0 ? net_grant_text(&g) : NULL;
		if (rows[i].text)
			same = same && text && streq(text, rows[i].text);
		ok(same, "'%s' parses (%s)", rows[i].spec, text ? text : "?");
		net_grant_free(&g);
	}
}

/* Which published hosts only this host reaches. */
static void test_grant_loopback(void)
{
	static const struct {
		const char *host;
		bool loopback;
	} rows[] = {
		{ "127.0.0.1", true }, { "127.1.2.3", true }, { "::1", true }, { "::ffff:127.0.0.1", true },
		{ "0.0.0.0", false }, { "::", false }, { "10.203.0.1", false }, { "fd00::1", false },
		{ "::ffff:10.0.0.1", false }, { "128.0.0.1", false }, { "localhost", true },
	};
	bool all = true;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct net_grant g = { .kind = GRANT_PUBLISH, .host = (char *)rows[i].host, .port = 80 };
		if (net_grant_on_loopback(&g) != rows[i].loopback) {
			diag("%s: %s", rows[i].host, rows[i].loopback ? "loopback, said not" : "not loopback, said it is");
			all = false;
		}
	}
	ok(all, "net_grant_on_loopback: localhost, 127/8, ::1 and a mapped 127/8 only (%zu hosts)", ARRAY_SIZE(rows));
}

/* A policy of many rules is looked up through an index by path: the
 * same answers as reading every rule, for every path, before and after a
 * sort and an added rule. */
static const struct rule *linear_rule_for(const struct rule *v, size_t n, const char *path)
{
	const struct rule *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i].path);
		bool beneath = len == 1 ? path[0] == '/' : strncmp(path, v[i].path, len) == 0 && (path[len] == '\0' || path[len] == '/');
		if (beneath && (!best || len > best_len || (len == best_len && v[i].access > best->access))) {
			best = &v[i];
			best_len = len;
		}
	}
	return best;
}

static void test_index(void)
{
	static const char *const parts[] = { "a", "b", "ab", "a.b", "c-d" };
	struct policy p;
	policy_init(&p);
	unsigned seed = 12345;
	char **paths = strv_new();
	for (int i = 0; i < 400; i++) {
		char path[64] = "";
		int depth = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 4;
		for (int d = 0; d < depth; d++) {
			strcat(path, "/");
			strcat(path, parts[((seed = seed * 1103515245 + 12345) >> 16) % ARRAY_SIZE(parts)]);
		}
		strv_add(&paths, path);
		if (i < 300)
			policy_add_rule(&p, path, (enum access)(((seed = seed * 1103515245 + 12345) >> 16) % 4), 0,
					SOURCE_DEFAULT_OF("test"), NULL);
	}
	policy_add_rule(&p, "/", ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), NULL);
	strv_add(&paths, "/");
	strv_add(&paths, "/zz/a");
	struct rule extra[] = { { .path = "/a/b", .access = ACCESS_HIDE }, { .path = "/ab", .access = ACCESS_WRITE } };
	size_t wrong = 0, checked = 0;
	for (int round = 0; round < 3; round++) {
		if (round == 1)
			policy_sort(&p);
		if (round == 2)
			policy_add_rule_new(&p, "/c-d/c-d/c-d/c-d/c-d", ACCESS_HIDE, SOURCE_DEFAULT_OF("test"));
		for (size_t i = 0; paths[i]; i++) {
			const struct rule *want = linear_rule_for(p.rules, p.n_rules, paths[i]);
			const struct rule *got = policy_rule_for(&p, paths[i]);
			checked++;
			if (want != got && !(want && got && streq(want->path, got->path) && want->access == got->access))
				wrong++;
			/* the same with places beside the rules */
			const struct rule_list places = { extra, ARRAY_SIZE(extra) };
			p.places = &places;
			const struct rule *w2 = policy_rule_for(&p, paths[i]);
			p.places = NULL;
			const struct rule *e = linear_rule_for(extra, ARRAY_SIZE(extra), paths[i]);
			const struct rule *want2 = !e ? want : !want ? e
						: strlen(e->path) > strlen(want->path) ||
								  (strlen(e->path) == strlen(want->path) && e->access > want->access)
							  ? e
							  : want;
			if (w2 != want2 && !(w2 && want2 && streq(w2->path, want2->path) && w2->access == want2->access))
				wrong++;
		}
	}
	ok(p.n_rules > 64 && wrong == 0, "%zu rules through the index: the same answers as reading them all (%zu paths, %zu wrong)",
	   p.n_rules, checked, wrong);
	strv_free(paths);
	policy_free(&p);
}

int main(void)
{
	test_grants();
	test_init();
	test_sizes();
	test_deepest_wins();
	test_same_path_precedence();
	test_protect();
	test_rule_for();
	test_has_rule_beneath();
	test_hides_in_reach();
	test_duplicates();
	test_sort();
	test_names();
	test_index();
	test_grant_loopback();
	return tap_done();
}
