/* seatbelt: fixed policies rendered as SBPL against golden files (the
 * defaults' shape, deep carve-outs, hostile paths); control characters
 * refused, naming the path; and for every golden policy thousands of
 * sampled questions (an operation on a path) answered by evaluating the
 * profile (tests/sbpl.h) the same as policy_allows() answers them.
 * Nothing here runs sandbox-exec: that needs a Mac. */
#include "seatbelt/seatbelt.h"

#include "lib/path.h"
#include "lib/util.h"
#include "tests/golden.h"
#include "tests/sbpl.h"
#include "tests/tap.h"
#include "tests/tree.h"
#include "policy/build.h"
#include "handoff/handoff.h"

static void add(struct policy *p, const char *path, enum access a, const char *origin)
{
	policy_add_rule(p, path, a, 0, SOURCE_OPTION_OF("--test"), origin);
}

static void base_policy(struct policy *p, enum net_mode net)
{
	policy_init(p);
	p->uid = 501;
	p->workspace = xstrdup("/Users/u/ws");
	p->user_home = xstrdup("/Users/u");
	p->net = net;
	add(p, "/usr", ACCESS_READ, "default: system");
	add(p, "/bin", ACCESS_READ, "default: system");
	add(p, "/etc", ACCESS_READ, "default: system");
	add(p, "/dev/null", ACCESS_WRITE, "default: device");
	add(p, "/Users/u/.gitconfig", ACCESS_READ, "default: git configuration");
	add(p, "/Users/u/.ssh", ACCESS_HIDE, "default: credentials");
	add(p, "/Users/u/.aws", ACCESS_HIDE, "default: credentials");
	add(p, "/Users/u/ws", ACCESS_WRITE, "workspace");
	add(p, "/Users/u/ws/.git/hooks", ACCESS_PROTECT, "default: trust hand-off");
	add(p, "/Users/u/ws/.git/config", ACCESS_PROTECT, "default: trust hand-off");
	add(p, "/Users/u/ws/.env", ACCESS_HIDE, "--hide on the command line");
	add(p, "/Users/u/Library/Caches/stockade", ACCESS_WRITE, "stockade's own build caches");
}

static void deep_policy(struct policy *p)
{
	base_policy(p, NET_OFF);
	add(p, "/Users/u/ws/secrets", ACCESS_HIDE, "stockade.ini line 4 (hide)");
	add(p, "/Users/u/ws/secrets/public", ACCESS_WRITE, "--write on the command line");
	add(p, "/Users/u/ws/secrets/public/ro", ACCESS_READ, "--read on the command line");
	add(p, "/Users/u/ws/secrets/public/ro/key", ACCESS_HIDE, "--hide on the command line");
	add(p, "/Users/u/ws/both", ACCESS_WRITE, "--write on the command line");
	add(p, "/Users/u/ws/both", ACCESS_READ, "--read on the command line");
	add(p, "/Users/u/ws/kept", ACCESS_WRITE, "--write on the command line");
	add(p, "/Users/u/ws/kept", ACCESS_PROTECT, "default: trust hand-off");
	add(p, "/Users/u/ws/docs", ACCESS_READ, "--read on the command line");
	add(p, "/Users/u/ws/docs/gen", ACCESS_WRITE, "--write on the command line");
	add(p, "/tmp/shared", ACCESS_WRITE, "--write on the command line");
	add(p, "/private/var/folders/xy/T/sock", ACCESS_READ, "--read on the command line");
	add(p, "/Users/u/.ssh/agent", ACCESS_READ, "--read on the command line");
}

static void hostile_policy(struct policy *p)
{
	base_policy(p, NET_ON);
	add(p, "/Users/u/ws/quote\"d", ACCESS_HIDE, "--hide on the command line");
	add(p, "/Users/u/ws/back\\slash", ACCESS_READ, "--read on the command line");
	add(p, "/Users/u/ws/paren (1)", ACCESS_HIDE, "--hide on the command line");
	add(p, "/Users/u/ws/semi;colon) (deny default", ACCESS_HIDE, "--hide on the command line");
	add(p, "/Users/u/ws/space here/and\\\"both", ACCESS_PROTECT, "--hide on the command line");
	add(p, "/Users/u/ws/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac", ACCESS_READ, "--read on the command line");
	add(p, "/Users/u/dotfiles (old)", ACCESS_WRITE, "--write on the command line; (deny default)\n(allow default)");
}

static struct rule places[] = {
	{ .path = (char *)"/private/var/folders/xy/T/stockade-run-XXXXXX/tmp", .access = ACCESS_WRITE,
	  .origin = (char *)"private tmp (TMPDIR)" },
	{ .path = (char *)"/private/var/folders/xy/T/stockade-run-XXXXXX/home", .access = ACCESS_WRITE,
	  .origin = (char *)"fresh home" },
};

/* Every rule in both of its macOS spellings, as one policy: the profile
 * writes each rule for both, so this is what it must answer. */
static void spelled(const struct policy *p, const struct seatbelt_plan *pl, struct policy *ret)
{
	policy_init(ret);
	for (size_t i = 0; i < p->n_rules + pl->n_rules; i++) {
		const struct rule *r = i < p->n_rules ? &p->rules[i] : &pl->rules[i - p->n_rules];
		policy_add_rule(ret, r->path, r->access, r->flags, r->source, "x");
		_cleanup_free_ char *other = NULL;
		if (seatbelt_other_spelling(r->path, &other))
			policy_add_rule(ret, other, r->access, r->flags, r->source, "x");
	}
}

static const struct {
	enum path_op op;
	const char *sbpl;
	enum sbq_kind kind;
} questions[] = {
	{ PATH_OP_READ, "file-read-data", SBQ_PATH },
	{ PATH_OP_READ, "file-read-xattr", SBQ_PATH },
	{ PATH_OP_EXEC, "process-exec", SBQ_PATH },
	{ PATH_OP_EXEC, "file-map-executable", SBQ_PATH },
	{ PATH_OP_WRITE, "file-write-data", SBQ_PATH },
	{ PATH_OP_WRITE, "file-write-create", SBQ_PATH },
	{ PATH_OP_WRITE, "file-write-mode", SBQ_PATH },
	{ PATH_OP_MOVE, "file-write-unlink", SBQ_PATH },
	{ PATH_OP_CONNECT, "network-outbound", SBQ_UNIX_REMOTE },
	{ PATH_OP_BIND, "network-bind", SBQ_UNIX_LOCAL },
};

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned pick(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* Paths around every rule: itself, its other spelling, beneath it, its
 * folders, names that share its prefix but not its folder, and random
 * walks from one rule's path into another's. */
static char **sample_paths(const struct policy *all)
{
	static const char *const tails[] = { "", "/a", "/a/b", "x", "-y/z", "/.git", "/.git/config", "/secrets", "/ro" };
	char **v = strv_new();
	strv_add(&v, "/");
	strv_add(&v, "/var/run/docker.sock");
	strv_add(&v, "/private/var/run/docker.sock");
	strv_add(&v, "/Users/u/.ssh/id_rsa");
	for (size_t i = 0; i < all->n_rules; i++) {
		const char *r = all->rules[i].path;
		for (size_t t = 0; t < ARRAY_SIZE(tails); t++)
			strv_push(&v, xstrcat3(r, tails[t], ""));
		for (char *a = path_parent(r, NULL); a;) {
			char *up = path_parent(a, NULL);
			strv_push(&v, a);
			a = up;
		}
	}
	for (int k = 0; k < 400; k++) {
		const char *a = all->rules[pick((unsigned)all->n_rules)].path;
		const char *b = all->rules[pick((unsigned)all->n_rules)].path;
		strv_push(&v, xstrcat3(a, "/", strrchr(b, '/') + 1));
	}
	return v;
}

static void agree(const struct policy *p, const struct seatbelt_plan *pl, const char *name)
{
	struct sbpl e;
	if (!ok(sbpl_load(&e, pl->profile) == 0, "%s: the evaluator reads the profile", name)) {
		diag("%s", e.err);
		sbpl_free(&e);
		return;
	}
	struct policy all;
	spelled(p, pl, &all);
	_cleanup_strv_ char **paths = sample_paths(&all);
	size_t asked = 0, wrong = 0;
	for (size_t i = 0; paths[i]; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(questions); k++) {
			/* --net on's one socket beyond the policy: the name
			 * lookups' (seatbelt/base.c). */
			if (p->net == NET_ON && questions[k].op == PATH_OP_CONNECT &&
			    streq(paths[i], "/private/var/run/mDNSResponder"))
				continue;
			struct sbq q = { .op = questions[k].sbpl, .kind = questions[k].kind, .arg = paths[i] };
			bool want = policy_allows(&all, questions[k].op, paths[i]);
			bool got = sbpl_allows(&e, &q);
			asked++;
			if (want != got && wrong++ < 10)
				diag("%s %s: the policy says %s, the profile %s", questions[k].sbpl, paths[i],
				     want ? "allow" : "deny", got ? "allow" : "deny");
		}
	}
	ok(wrong == 0 && asked >= 3000, "%s: %zu sampled questions, %zu answered otherwise by the profile", name, asked,
	   wrong);
	policy_free(&all);
	sbpl_free(&e);
}

static void check(struct policy *p, const char *golden)
{
	policy_sort(p);
	struct seatbelt_plan pl;
	const struct rule_list list = { places, ARRAY_SIZE(places) };
	p->places = &list;
	if (!is_int(seatbelt_plan(p, &pl), 0, "%s: rendered", golden)) {
		p->places = NULL;
		return;
	}
	_cleanup_free_ char *name = xstrcat3("tests/golden/", golden, "");
	golden_check(name, pl.profile, strlen(pl.profile), golden);
	agree(p, &pl, golden);
	seatbelt_plan_free(&pl);
	p->places = NULL;
}

/* Answers the profile must give whatever the policy: what is not a path. */
static void test_non_paths(void)
{
	static const struct {
		enum net_mode net;
		const char *op;
		enum sbq_kind kind;
		const char *arg;
		bool allow;
	} cases[] = {
		{ NET_LOOPBACK, "mach-lookup", SBQ_NAME, "com.apple.system.opendirectoryd.libinfo", true },
		{ NET_LOOPBACK, "mach-lookup", SBQ_NAME, "com.apple.coreservices.launchservicesd", false },
		{ NET_LOOPBACK, "mach-lookup", SBQ_NAME, "com.apple.SecurityServer", false },
		{ NET_LOOPBACK, "mach-lookup", SBQ_NAME, "com.apple.cfprefsd.agent", false },
		{ NET_LOOPBACK, "mach-lookup", SBQ_NAME, "com.apple.pasteboard.1", false },
		{ NET_LOOPBACK, "mach-lookup", SBQ_NAME, "com.apple.dnssd.service", false },
		{ NET_ON, "mach-lookup", SBQ_NAME, "com.apple.dnssd.service", true },
		{ NET_LOOPBACK, "sysctl-read", SBQ_NAME, "hw.ncpu", true },
		{ NET_LOOPBACK, "sysctl-read", SBQ_NAME, "kern.proc.all", false },
		{ NET_LOOPBACK, "sysctl-write", SBQ_NAME, "hw.ncpu", false },
		{ NET_LOOPBACK, "sysctl-write", SBQ_NAME, "kern.hostname", false },
		{ NET_LOOPBACK, "signal", SBQ_TARGET, "same-sandbox", true },
		{ NET_LOOPBACK, "signal", SBQ_TARGET, "others", false },
		{ NET_LOOPBACK, "process-info-pidinfo", SBQ_TARGET, "others", false },
		{ NET_LOOPBACK, "process-fork", SBQ_NONE, "", true },
		{ NET_LOOPBACK, "ipc-posix-shm-read-data", SBQ_NAME, "some.other.app.shm", false },
		{ NET_OFF, "network-outbound", SBQ_IP_REMOTE, "localhost:5432", false },
		{ NET_OFF, "network-bind", SBQ_IP_LOCAL, "localhost:8000", false },
		{ NET_LOOPBACK, "network-outbound", SBQ_IP_REMOTE, "localhost:5432", true },
		{ NET_LOOPBACK, "network-bind", SBQ_IP_LOCAL, "localhost:8000", true },
		{ NET_LOOPBACK, "network-bind", SBQ_IP_LOCAL, "*:8000", false },
		{ NET_LOOPBACK, "network-outbound", SBQ_IP_REMOTE, "10.203.0.2:80", false },
		{ NET_ON, "network-outbound", SBQ_IP_REMOTE, "10.203.0.2:80", true },
		{ NET_ON, "network-outbound", SBQ_UNIX_REMOTE, "/private/var/run/docker.sock", false },
		{ NET_ON, "network-outbound", SBQ_UNIX_REMOTE, "/Users/u/.ssh/agent.sock", false },
		{ NET_LOOPBACK, "network-outbound", SBQ_UNIX_REMOTE, "/Users/u/ws/.s.PGSQL", true },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct policy p;
		base_policy(&p, cases[i].net);
		policy_sort(&p);
		struct seatbelt_plan pl;
		struct sbpl e;
		if (seatbelt_plan(&p, &pl) == 0 && sbpl_load(&e, pl.profile) == 0) {
			struct sbq q = { .op = cases[i].op, .kind = cases[i].kind, .arg = cases[i].arg };
			is_int(sbpl_allows(&e, &q), cases[i].allow, "net %s: %s %s is %s", net_mode_name(cases[i].net),
			       cases[i].op, cases[i].arg, cases[i].allow ? "allowed" : "denied");
			sbpl_free(&e);
		} else {
			ok(false, "net %s: rendered and read", net_mode_name(cases[i].net));
		}
		seatbelt_plan_free(&pl);
		policy_free(&p);
	}
}

static void test_refused(void)
{
	static const char *const bad[] = { "/Users/u/ws/new\nline", "/Users/u/ws/tab\there", "/Users/u/ws/del\x7f" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct policy p;
		base_policy(&p, NET_LOOPBACK);
		add(&p, bad[i], ACCESS_HIDE, "--hide on the command line");
		struct seatbelt_plan pl;
		is_int(seatbelt_plan(&p, &pl), -EINVAL, "a control character is refused (%zu)", i);
		ok(pl.bad_path && streq(pl.bad_path, bad[i]) && !pl.profile, "the refusal names the path, and no profile is made");
		seatbelt_plan_free(&pl);
		policy_free(&p);
	}
	/* A place of the backend's own is held to the same. */
	struct policy p;
	base_policy(&p, NET_LOOPBACK);
	struct rule odd = { .path = (char *)"/private/tmp/x\ny", .access = ACCESS_WRITE, .origin = (char *)"fresh home" };
	struct seatbelt_plan pl;
	const struct rule_list one = { &odd, 1 };
	p.places = &one;
	is_int(seatbelt_plan(&p, &pl), -EINVAL, "a place with a newline is refused too");
	p.places = NULL;
	seatbelt_plan_free(&pl);
	policy_free(&p);
}

static void test_evaluator_refuses(void)
{
	static const char *const unknown[] = {
		"(version 1)\n(deny default)\n(allow file-read* (regex #\"^/x\"))\n",
		"(version 1)\n(allow default)\n",
		"(version 1)\n(deny default)\n(allow file-write-flags (literal \"/x\"))\n",
		"(version 1)\n(deny default)\n(allow file-read* (prefix \"/x\"))\n",
		"(version 1)\n(deny default)\n(allow network-outbound (remote tcp \"*:*\"))\n",
		"(version 1)\n(deny default)\n(import \"system.sb\")\n",
		"(version 1)\n(deny default)\n(allow file-read* (literal \"/x\\n\"))\n",
		"(version 1)\n(deny default)\n(allow file-read* (literal \"/x\")\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++) {
		struct sbpl e;
		int r = sbpl_load(&e, unknown[i]);
		ok(r < 0, "the evaluator refuses what it does not know (%zu: %s)", i, e.err ? e.err : "?");
		sbpl_free(&e);
	}
	/* and decides by the last match, deny by default */
	struct sbpl e;
	is_int(sbpl_load(&e, "(version 1)\n(deny default)\n(allow file-read* (subpath \"/a\"))\n"
			    "(deny file-read-data (subpath \"/a/b\"))\n(allow file-read* (literal \"/a/b/c\"))\n"),
	       0, "a small profile is read");
	is_int(sbpl_allows(&e, &(struct sbq){ "file-read-data", SBQ_PATH, "/a/x" }), 1, "the wider allow");
	is_int(sbpl_allows(&e, &(struct sbq){ "file-read-data", SBQ_PATH, "/a/b/d" }), 0, "the deeper deny, later");
	is_int(sbpl_allows(&e, &(struct sbq){ "file-read-data", SBQ_PATH, "/a/b/c" }), 1, "the last, deepest allow");
	is_int(sbpl_allows(&e, &(struct sbq){ "file-read-metadata", SBQ_PATH, "/a/b/d" }), 1,
	       "an operation the deny does not name");
	is_int(sbpl_allows(&e, &(struct sbq){ "file-read-data", SBQ_PATH, "/ab" }), 0, "subpath is by folder, not prefix");
	sbpl_free(&e);
}

/* The defaults as policy_build() makes them on this host, for a home
 * with credentials (one a symlink), toolchains and a git workspace: the
 * profile answers as that policy does. Host-dependent, so no golden
 * file; the sampled agreement is what must hold everywhere. */
static void test_built(void)
{
	tree_begin("seatbelt");
	tree_dir("home/.ssh");
	tree_file("home/.ssh/id_ed25519", 0600);
	tree_file("home/.gitconfig", 0644);
	tree_file("home/.cargo/bin/cargo", 0755);
	tree_dir("home/.rustup");
	tree_file("dotfiles/aws-credentials", 0600);
	tree_dir("home/.aws");
	tree_link("../../dotfiles/aws-credentials", "home/.aws/credentials");
	tree_dir("ws/.git/hooks");
	tree_file("ws/.git/config", 0644);
	tree_file("ws/.env", 0600);
	_cleanup_free_ char *home = tree_at("home"), *ws = tree_at("ws"), *env_file = tree_at("ws/.env");
	_cleanup_free_ char *home_var = xstrcat3("HOME=", home, "");
	_cleanup_free_ char *path_var = xasprintf("PATH=%s/.cargo/bin:/usr/bin:/bin", home);
	char *env[] = { home_var, path_var, "LANG=C.UTF-8", NULL };
	struct layer cli = { 0 };
	cli.workspace = xstrdup(ws);
	cli.workspace_source = SOURCE_OPTION_OF("--workspace");
	layer_add_rule(&cli, env_file, ACCESS_HIDE, SOURCE_OPTION_OF("--hide"));
	char *argv[] = { "cargo", "build", NULL };
	struct policy p;
	struct policy_failure f;
	if (is_int(policy_build(&cli, 1, argv, env, NULL, &p, &f), 0, "built: the policy of this host")) {
		_cleanup_strv_ char **handoffs = NULL;
		struct handoff_scan scan = { .workspace = p.workspace, .user_home = p.user_home };
		if (is_int(handoffs_list(&scan, &handoffs), 0, "built: the workspace's hand-offs"))
			policy_add_handoffs(&p, p.workspace, handoffs);
		policy_sort(&p);
		struct seatbelt_plan pl;
		const struct rule_list list = { places, ARRAY_SIZE(places) };
		p.places = &list;
		if (is_int(seatbelt_plan(&p, &pl), 0, "built: rendered"))
			agree(&p, &pl, "built");
		seatbelt_plan_free(&pl);
		p.places = NULL;
	}
	policy_failure_free(&f);
	policy_free(&p);
	layer_free(&cli);
	tree_end();
}

int main(void)
{
	struct policy p;
	base_policy(&p, NET_LOOPBACK);
	check(&p, "seatbelt-defaults.sbpl");
	policy_free(&p);
	deep_policy(&p);
	check(&p, "seatbelt-deep.sbpl");
	policy_free(&p);
	hostile_policy(&p);
	check(&p, "seatbelt-hostile.sbpl");
	policy_free(&p);
	test_built();
	test_non_paths();
	test_refused();
	test_evaluator_refuses();
	return tap_done();
}
