/* landlock: the rights table per ABI, and landlock_plan() on real
 * temporary trees: carve-outs by enumeration (a read or hide under a
 * write, NULL, 0, a hide two levels down, a hide in a read tree), hand-offs never
 * enumerated, LANDLOCK_PLAN_NO_CARVE, missing targets, ABI capping, procfs,
 * and the time a 100,000-file workspace with 1,000 hidden entries takes.
 *
 * Each plan is checked twice: rule by rule against a list written by hand,
 * and by what Landlock would make of it (the union of the rules at and
 * above a path), so that an equivalent but differently split plan fails
 * only the first check. Nothing here applies a ruleset. */
#include "landlock/landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "lib/path.h"
#include "lib/util.h"
#include "landlock/internal.h"
#include "tests/tap.h"
#include "tests/tree.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x

/* The expected masks, written from DESIGN.md's table rather than taken
 * from the code under test. */
static uint64_t read_dir_rights(int abi)
{
	return FS(EXECUTE) | FS(READ_FILE) | FS(READ_DIR) | (abi >= 5 ? FS(IOCTL_DEV) : 0);
}

static uint64_t read_file_rights(int abi)
{
	return FS(EXECUTE) | FS(READ_FILE) | (abi >= 5 ? FS(IOCTL_DEV) : 0);
}

static uint64_t write_dir_rights(int abi)
{
	return read_dir_rights(abi) | FS(WRITE_FILE) | FS(REMOVE_DIR) | FS(REMOVE_FILE) | FS(MAKE_DIR) |
	       FS(MAKE_REG) | FS(MAKE_SOCK) | FS(MAKE_FIFO) | FS(MAKE_SYM) | (abi >= 2 ? FS(REFER) : 0) |
	       (abi >= 3 ? FS(TRUNCATE) : 0);
}

static uint64_t write_file_rights(int abi)
{
	return read_file_rights(abi) | FS(WRITE_FILE) | (abi >= 3 ? FS(TRUNCATE) : 0);
}

static uint64_t handled_rights(int abi)
{
	return ((1ULL << 13) - 1) | (abi >= 2 ? FS(REFER) : 0) | (abi >= 3 ? FS(TRUNCATE) : 0) |
	       (abi >= 5 ? FS(IOCTL_DEV) : 0);
}

/* The rights Landlock knows to apply to a file (not only a directory). */
#define FILE_MASK (FS(EXECUTE) | FS(WRITE_FILE) | FS(READ_FILE) | FS(TRUNCATE) | FS(IOCTL_DEV))

static char *rights_str(uint64_t mask)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	landlock_rights_print(f, mask);
	fclose(f);
	return buf;
}

/* ---- the rights table ---- */

static void test_rights(void)
{
	for (int abi = 1; abi <= 7; abi++) {
		is_int(landlock_rights(EFFECT_READ, true, abi), read_dir_rights(abi), "abi %d: read, directory", abi);
		is_int(landlock_rights(EFFECT_READ, false, abi), read_file_rights(abi), "abi %d: read, file", abi);
		is_int(landlock_rights(EFFECT_WRITE, true, abi), write_dir_rights(abi), "abi %d: write, directory", abi);
		is_int(landlock_rights(EFFECT_WRITE, false, abi), write_file_rights(abi), "abi %d: write, file", abi);
		is_int(landlock_rights(EFFECT_NONE, true, abi), 0, "abi %d: none, directory", abi);
		is_int(landlock_rights(EFFECT_NONE, false, abi), 0, "abi %d: none, file", abi);
		is_int(landlock_handled_fs(abi), handled_rights(abi), "abi %d: every right of the ABI is handled", abi);
		uint64_t all = landlock_rights(EFFECT_WRITE, true, abi) | landlock_rights(EFFECT_WRITE, false, abi);
		ok(!(all & (FS(MAKE_CHAR) | FS(MAKE_BLOCK))), "abi %d: make_char and make_block are never granted", abi);
		ok((landlock_handled_fs(abi) & (FS(MAKE_CHAR) | FS(MAKE_BLOCK))) == (FS(MAKE_CHAR) | FS(MAKE_BLOCK)),
		   "abi %d: make_char and make_block are handled (so refused)", abi);
		ok(!(landlock_rights(EFFECT_WRITE, false, abi) & ~FILE_MASK), "abi %d: a file gets only file rights", abi);
	}
	is_int(landlock_handled_fs(0), 0, "abi 0 handles nothing");

	_cleanup_free_ char *r1 = rights_str(read_dir_rights(1));
	is_str(r1, "execute,read_file,read_dir", "read at abi 1 prints as the table names it");
	_cleanup_free_ char *w7 = rights_str(write_file_rights(7));
	is_str(w7, "execute,write_file,read_file,truncate,ioctl_dev", "write on a file at abi 7 prints in table order");
	_cleanup_free_ char *none = rights_str(0);
	is_str(none, "-", "no right prints as '-'");

	/* What each ABI leaves out, as the report says it: the landlock
	 * gaps, beside the one every ABI has (other processes' /proc). */
	static const struct {
		int abi;
		enum net_mode net;
		size_t gaps;
		const char *what;
	} described[] = {
		{ 1, NET_OFF, 4, "abi 1, net off: refer, tcp, ioctl, scoping" },
		{ 3, NET_LOOPBACK, 2, "abi 3, loopback: ioctl and scoping" },
		{ 4, NET_OFF, 2, "abi 4, net off: ioctl and scoping" },
		{ 6, NET_OFF, 0, "abi 6: none" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(described); i++) {
		struct report rep;
		report_init(&rep);
		landlock_describe(described[i].abi, 0, described[i].net, &rep);
		size_t n = 0;
		for (size_t k = 0; k < rep.n_gaps; k++)
			n += streq(rep.gaps[k].what, "landlock");
		is_int(n, described[i].gaps, "%s", described[i].what);
		ok(rep.n_gaps == n + 1 && streq(rep.gaps[rep.n_gaps - 1].what, "/proc of other processes"),
		   "and other processes' /proc");
		report_free(&rep);
	}
	struct report rep;
	report_init(&rep);
	landlock_describe(0, LANDLOCK_PLAN_NO_CARVE, NET_LOOPBACK, &rep);
	ok(rep.n_gaps == 1 && streq(rep.gaps[0].what, "landlock") && !rep.enforced[0],
	   "no Landlock under the namespace jail: one gap, nothing claimed");
	report_free(&rep);
	report_init(&rep);
	landlock_describe(7, LANDLOCK_PLAN_NO_CARVE, NET_LOOPBACK, &rep);
	ok(rep.n_gaps == 0 && rep.enforced[0] && strstr(rep.enforced[0], "Landlock ABI 7 on top"),
	   "ABI 7 under the namespace jail: on top, no gap");
	report_free(&rep);

	int abi = landlock_abi();
	ok(abi >= 0, "landlock_abi() on this kernel: %d", abi);
}

/* ---- trees ---- */

static void add(struct policy *p, const char *rel, enum access a, unsigned flags, const char *origin)
{
	_cleanup_free_ char *path = tree_at(rel);
	policy_add_rule(p, path, a, flags, SOURCE_DEFAULT_OF("test"), origin);
}

/* ---- checking a plan ---- */

struct want {
	const char *rel;	/* relative to tree_base */
	uint64_t access;
	bool dir;
	bool carve;
	const char *origin;	/* NULL: not checked */
};

static const struct landlock_rule *find_rule(const struct landlock_plan *plan, const char *rel)
{
	_cleanup_free_ char *p = tree_at(rel);
	const struct landlock_rule *found = NULL;
	for (size_t i = 0; i < plan->n_rules; i++)
		if (streq(plan->rules[i].path, p)) {
			if (found)
				diag("two rules for %s", p);
			found = &plan->rules[i];
		}
	return found;
}

static void diag_plan(const struct landlock_plan *plan)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	landlock_plan_print(f, plan);
	fclose(f);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		diag("  %s", line);
	free(text);
}

/* Exactly these rules, in any order. */
static void check_rules(const char *what, const struct landlock_plan *plan, const struct want *w, size_t n)
{
	bool all = is_int(plan->n_rules, n, "%s: %zu rules", what, n);
	for (size_t i = 0; i < n; i++) {
		const struct landlock_rule *r = find_rule(plan, w[i].rel);
		if (!ok(r != NULL, "%s: a rule for %s", what, w[i].rel)) {
			all = false;
			continue;
		}
		if (r->access != w[i].access) {
			_cleanup_free_ char *g = rights_str(r->access);
			_cleanup_free_ char *e = rights_str(w[i].access);
			diag("%s: got %s, want %s", w[i].rel, g, e);
		}
		all &= ok(r->access == w[i].access && r->dir == w[i].dir && r->carve == w[i].carve,
			  "%s: %s gets %#llx, %s, %s", what, w[i].rel, (unsigned long long)w[i].access,
			  w[i].dir ? "dir" : "file", w[i].carve ? "carved" : "its own rule");
		if (w[i].origin)
			all &= is_str(r->origin, w[i].origin, "%s: %s comes from '%s'", what, w[i].rel, w[i].origin);
	}
	if (!all)
		diag_plan(plan);
}

/* What Landlock grants on path: the union of every rule at or above it
 * (file rules count with their file rights only, as landlock_apply()
 * masks them). */
static uint64_t effective(const struct landlock_plan *plan, const char *rel, bool dir)
{
	_cleanup_free_ char *p = tree_at(rel);
	uint64_t m = 0;
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct landlock_rule *r = &plan->rules[i];
		if (path_is_beneath(p, r->path))
			m |= r->dir ? r->access : r->access & FILE_MASK;
	}
	return dir ? m : m & FILE_MASK;
}

#define is_effective(plan, rel, dir, want, ...)                                 \
	do {                                                                   \
		uint64_t e__ = effective(plan, rel, dir), w__ = (want);        \
		if (!ok(e__ == w__, __VA_ARGS__)) {                            \
			_cleanup_free_ char *g__ = rights_str(e__);            \
			_cleanup_free_ char *x__ = rights_str(w__);            \
			diag("  %s: effective %s, want %s", rel, g__, x__);    \
		}                                                              \
	} while (0)

static bool rule_under(const struct landlock_plan *plan, const char *rel)
{
	_cleanup_free_ char *p = tree_at(rel);
	for (size_t i = 0; i < plan->n_rules; i++)
		if (path_is_beneath(plan->rules[i].path, p))
			return true;
	return false;
}

/* ---- (a) a write workspace with a read .git and a hidden .env ---- */

static void make_workspace_a(void)
{
	tree_dir("a/.git/hooks");
	tree_file("a/.git/HEAD", 0644);
	tree_file("a/.env", 0644);
	tree_file("a/.envrc", 0644);
	tree_dir("a/src");
	tree_file("a/src/main.c", 0644);
	tree_file("a/README", 0644);
	tree_link("src", "a/link");
	tree_link("nowhere", "a/dangling");
	_cleanup_free_ char *outside = tree_at("a/src/main.c");
	tree_link(outside, "a/abslink");
}

static void policy_a(struct policy *p)
{
	policy_init(p);
	add(p, "a", ACCESS_WRITE, 0, "--write .");
	add(p, "a/.git", ACCESS_READ, 0, "--read .git");
	add(p, "a/.env", ACCESS_HIDE, 0, "--hide .env");
}

static void test_workspace_a(void)
{
	const int abi = 7;
	struct policy p;
	policy_a(&p);
	struct landlock_plan plan;
	int r = landlock_plan(&p, abi, 0, &plan);
	is_int(r, 0, "(a) plan succeeds");
	const uint64_t rd = FS(READ_DIR);
	const struct want want[] = {
		{ "a", rd, true, true, "--write ." },
		{ "a/.envrc", write_file_rights(abi), false, true, "--write ." },
		{ "a/.git", read_dir_rights(abi) & ~rd, true, false, "--read .git" },
		{ "a/README", write_file_rights(abi), false, true, "--write ." },
		{ "a/src", write_dir_rights(abi) & ~rd, true, true, "--write ." },
	};
	check_rules("(a)", &plan, want, ARRAY_SIZE(want));
	is_int(plan.n_enumerated, 1, "(a) one directory enumerated (the workspace)");
	ok(!find_rule(&plan, "a/.env"), "(a) .env gets no rule");
	ok(!find_rule(&plan, "a/link") && !find_rule(&plan, "a/dangling") && !find_rule(&plan, "a/abslink"),
	   "(a) symlinks in the workspace get no rule");
	ok(!rule_under(&plan, "a/.git/hooks"), "(a) nothing beneath .git gets a rule of its own");

	is_effective(&plan, "a", true, rd, "(a) the workspace itself: listing only");
	is_effective(&plan, "a/src", true, write_dir_rights(abi), "(a) src: write");
	is_effective(&plan, "a/src/main.c", false, write_file_rights(abi), "(a) src/main.c: write");
	is_effective(&plan, "a/.git", true, read_dir_rights(abi), "(a) .git: read");
	is_effective(&plan, "a/.git/HEAD", false, read_file_rights(abi), "(a) .git/HEAD: read");
	is_effective(&plan, "a/.git/hooks", true, read_dir_rights(abi), "(a) .git/hooks: read");
	is_effective(&plan, "a/.env", false, 0, "(a) .env: nothing");
	is_effective(&plan, "a/.envrc", false, write_file_rights(abi), "(a) .envrc (a name prefix of .env): write");
	is_int(plan.handled_fs, handled_rights(abi), "(a) handled fs: all of abi %d", abi);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	landlock_plan_print(f, &plan);
	fclose(f);
	_cleanup_free_ char *line = xasprintf("  %s/a/ read_dir  (carved from --write .)\n", tree_base);
	ok(text && strstr(text, line), "(a) explain prints the workspace's listing grant as carved");
	free(text);

	landlock_plan_free(&plan);
	is_int(plan.n_rules, 0, "landlock_plan_free empties the plan");
	policy_free(&p);
}

/* ---- (b) a hide two levels deep; (b2) a hidden directory ---- */

static void test_hide_deep(void)
{
	const int abi = 7;
	const uint64_t rd = FS(READ_DIR);
	tree_dir("b/a/b");
	tree_file("b/a/b/secret", 0644);
	tree_file("b/a/b/other", 0644);
	tree_file("b/a/a_file", 0644);
	tree_file("b/top_file", 0644);
	tree_dir("b/c");
	tree_file("b/c/f", 0644);

	struct policy p;
	policy_init(&p);
	add(&p, "b", ACCESS_WRITE, 0, "ws");
	add(&p, "b/a/b/secret", ACCESS_HIDE, 0, "secret");
	struct landlock_plan plan;
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(b) plan succeeds");
	const struct want want[] = {
		{ "b", rd, true, true, "ws" },
		{ "b/a/a_file", write_file_rights(abi), false, true, "ws" },
		{ "b/a/b/other", write_file_rights(abi), false, true, "ws" },
		{ "b/c", write_dir_rights(abi) & ~rd, true, true, "ws" },
		{ "b/top_file", write_file_rights(abi), false, true, "ws" },
	};
	check_rules("(b)", &plan, want, ARRAY_SIZE(want));
	is_int(plan.n_enumerated, 3, "(b) b, b/a and b/a/b enumerated");
	ok(!find_rule(&plan, "b/a") && !find_rule(&plan, "b/a/b"),
	   "(b) the enumerated b/a and b/a/b get no rule (the listing right comes from b)");
	is_effective(&plan, "b/a", true, rd, "(b) b/a: listing only");
	is_effective(&plan, "b/a/b", true, rd, "(b) b/a/b: listing only");
	is_effective(&plan, "b/a/b/secret", false, 0, "(b) the secret: nothing");
	is_effective(&plan, "b/a/b/other", false, write_file_rights(abi), "(b) its sibling: write");
	is_effective(&plan, "b/c/f", false, write_file_rights(abi), "(b) c/f: write");
	landlock_plan_free(&plan);
	policy_free(&p);

	tree_dir("b2/vault/inner");
	tree_file("b2/vault/key", 0644);
	tree_file("b2/x", 0644);
	policy_init(&p);
	add(&p, "b2", ACCESS_WRITE, 0, "ws");
	add(&p, "b2/vault", ACCESS_HIDE, 0, "vault");
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(b2) plan succeeds");
	const struct want want2[] = {
		{ "b2", rd, true, true, "ws" },
		{ "b2/x", write_file_rights(abi), false, true, "ws" },
	};
	check_rules("(b2)", &plan, want2, ARRAY_SIZE(want2));
	is_int(plan.n_enumerated, 1, "(b2) only b2 enumerated, never the hidden directory");
	is_effective(&plan, "b2/vault", true, rd, "(b2) a hidden directory: its names can be listed, nothing more");
	is_effective(&plan, "b2/vault/key", false, 0, "(b2) a file in a hidden directory: nothing");
	is_effective(&plan, "b2/vault/inner", true, rd, "(b2) a directory in a hidden directory: listing only");
	landlock_plan_free(&plan);
	policy_free(&p);
}

/* ---- (c) a read tree with a hidden file: ~/.cargo and its credentials ---- */

static void test_read_tree(void)
{
	const int abi = 5;
	const uint64_t rd = FS(READ_DIR);
	tree_dir("cargo/bin");
	tree_file("cargo/bin/cargo", 0644);
	tree_dir("cargo/registry/index");
	tree_file("cargo/credentials.toml", 0644);
	tree_file("cargo/config.toml", 0644);
	tree_link("/etc/hostname", "cargo/env");

	struct policy p;
	policy_init(&p);
	add(&p, "cargo", ACCESS_READ, RULE_SYSTEM, "toolchain ~/.cargo");
	add(&p, "cargo/credentials.toml", ACCESS_HIDE, RULE_SYSTEM, "default: credentials");
	struct landlock_plan plan;
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(c) plan succeeds");
	const struct want want[] = {
		{ "cargo", rd, true, true, "toolchain ~/.cargo" },
		{ "cargo/bin", read_dir_rights(abi) & ~rd, true, true, "toolchain ~/.cargo" },
		{ "cargo/config.toml", read_file_rights(abi), false, true, "toolchain ~/.cargo" },
		{ "cargo/registry", read_dir_rights(abi) & ~rd, true, true, "toolchain ~/.cargo" },
	};
	check_rules("(c)", &plan, want, ARRAY_SIZE(want));
	is_int(plan.n_enumerated, 1, "(c) one directory enumerated");
	ok(!find_rule(&plan, "cargo/env"), "(c) the symlink gets no rule");
	is_effective(&plan, "cargo/credentials.toml", false, 0, "(c) credentials.toml: nothing");
	is_effective(&plan, "cargo/bin/cargo", false, read_file_rights(abi), "(c) bin/cargo: read and execute");
	is_effective(&plan, "cargo/registry/index", true, read_dir_rights(abi), "(c) registry/index: read");
	ok(!(effective(&plan, "cargo/bin/cargo", false) & FS(WRITE_FILE)), "(c) nothing in a read tree is writable");
	landlock_plan_free(&plan);
	policy_free(&p);

	/* Nested: a write inside a read tree, a hide inside that write. */
	tree_dir("n/w/sub");
	tree_file("n/w/s", 0644);
	tree_file("n/w/f", 0644);
	tree_file("n/other", 0644);
	policy_init(&p);
	add(&p, "n", ACCESS_READ, 0, "read n");
	add(&p, "n/w", ACCESS_WRITE, 0, "write n/w");
	add(&p, "n/w/s", ACCESS_HIDE, 0, "hide n/w/s");
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(nested) plan succeeds");
	const struct want want2[] = {
		{ "n", rd, true, true, "read n" },
		{ "n/other", read_file_rights(abi), false, true, "read n" },
		{ "n/w/f", write_file_rights(abi), false, true, "write n/w" },
		{ "n/w/sub", write_dir_rights(abi) & ~rd, true, true, "write n/w" },
	};
	check_rules("(nested)", &plan, want2, ARRAY_SIZE(want2));
	is_int(plan.n_enumerated, 2, "(nested) n and n/w enumerated");
	is_effective(&plan, "n/w", true, rd, "(nested) n/w: listing only");
	is_effective(&plan, "n/w/s", false, 0, "(nested) n/w/s: nothing");
	landlock_plan_free(&plan);
	policy_free(&p);
}

/* ---- (d) trust hand-offs are the guard's, never enumerated ---- */

static void make_workspace_d(void)
{
	tree_dir("d/.git/hooks");
	tree_file("d/.git/config", 0644);
	tree_dir("d/.vscode");
	tree_file("d/.vscode/settings.json", 0644);
	tree_dir("d/src");
	tree_file("d/.env", 0644);
}

static void policy_d(struct policy *p, bool with_hide)
{
	policy_init(p);
	add(p, "d", ACCESS_WRITE, 0, "ws");
	add(p, "d/.git/hooks", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH, "hand-off .git/hooks");
	add(p, "d/.git/config", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH, "hand-off .git/config");
	add(p, "d/.vscode", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH, "hand-off .vscode");
	add(p, "d/stockade.ini", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH, "hand-off stockade.ini");
	if (with_hide)
		add(p, "d/.env", ACCESS_HIDE, 0, "--hide .env");
}

static void test_handoffs(void)
{
	const int abi = 6;
	const uint64_t rd = FS(READ_DIR);
	struct policy p;
	struct landlock_plan plan;

	policy_d(&p, false);
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(d) plan succeeds");
	const struct want want[] = { { "d", write_dir_rights(abi), true, false, "ws" } };
	check_rules("(d) hand-offs only", &plan, want, ARRAY_SIZE(want));
	is_int(plan.n_enumerated, 0, "(d) hand-offs cause no enumeration");
	landlock_plan_free(&plan);
	policy_free(&p);

	policy_d(&p, true);
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(d+hide) plan succeeds");
	const struct want want2[] = {
		{ "d", rd, true, true, "ws" },
		{ "d/.git", write_dir_rights(abi) & ~rd, true, true, "ws" },
		{ "d/.vscode", write_dir_rights(abi) & ~rd, true, true, "ws" },
		{ "d/src", write_dir_rights(abi) & ~rd, true, true, "ws" },
	};
	check_rules("(d+hide)", &plan, want2, ARRAY_SIZE(want2));
	is_int(plan.n_enumerated, 1, "(d+hide) only the workspace enumerated, not .git or .vscode");
	landlock_plan_free(&plan);
	policy_free(&p);
}

/* ---- (e) LANDLOCK_PLAN_NO_CARVE ---- */

static void test_no_carve(void)
{
	const int abi = 6;
	struct policy p;
	struct landlock_plan plan;

	policy_d(&p, true);
	is_int(landlock_plan(&p, abi, LANDLOCK_PLAN_NO_CARVE, &plan), 0, "(e) no-carve plan succeeds");
	const struct want want[] = { { "d", write_dir_rights(abi), true, false, "ws" } };
	check_rules("(e) no-carve, hide and hand-offs", &plan, want, ARRAY_SIZE(want));
	is_int(plan.n_enumerated, 0, "(e) no-carve: hide ignored, nothing enumerated");
	landlock_plan_free(&plan);
	policy_free(&p);

	/* A read under a write is a carve-out too: the header says each
	 * rule's tree is granted whole, and the mount namespace makes .git
	 * read-only. Enumerating here would stop the command from creating
	 * files at the top of its workspace in the namespaces backend. */
	policy_a(&p);
	is_int(landlock_plan(&p, abi, LANDLOCK_PLAN_NO_CARVE, &plan), 0, "(e2) no-carve plan succeeds");
	is_int(plan.n_enumerated, 0, "(e2) no-carve: a read under a write causes no enumeration");
	const struct landlock_rule *ws = find_rule(&plan, "a");
	ok(ws && ws->access == write_dir_rights(abi) && !ws->carve,
	   "(e2) no-carve: the workspace is granted write whole");
	is_effective(&plan, "a", true, write_dir_rights(abi), "(e2) no-carve: new files can be made in the workspace");
	is_effective(&plan, "a/.env", false, write_file_rights(abi), "(e2) no-carve: .env left to the mounts");
	if (plan.n_enumerated)
		diag_plan(&plan);
	landlock_plan_free(&plan);
	policy_free(&p);
}

/* ---- (f) a missing hide target ---- */

static void test_missing(void)
{
	const int abi = 6;
	tree_dir("f/dir");
	tree_file("f/file", 0644);
	struct policy p;
	policy_init(&p);
	add(&p, "f", ACCESS_WRITE, 0, "ws");
	add(&p, "f/missing", ACCESS_HIDE, 0, "--hide missing");
	add(&p, "f/gone/deeper", ACCESS_HIDE, 0, "--hide gone/deeper");
	add(&p, "f/file/notadir", ACCESS_HIDE, 0, "--hide file/notadir");
	add(&p, "nonexistent-tree", ACCESS_READ, 0, "--read nonexistent");
	struct landlock_plan plan;
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(f) plan succeeds");
	const struct want want[] = { { "f", write_dir_rights(abi), true, false, "ws" } };
	check_rules("(f) missing targets", &plan, want, ARRAY_SIZE(want));
	is_int(plan.n_enumerated, 0, "(f) missing hide targets cause no enumeration");
	landlock_plan_free(&plan);
	policy_free(&p);
}

/* ---- (g) the same tree at each ABI ---- */

static void test_abi_capping(void)
{
	static const int abis[] = { 1, 2, 3, 4, 5, 6, 7 };
	const uint64_t rd = FS(READ_DIR);
	struct policy p;
	policy_a(&p);
	for (size_t i = 0; i < ARRAY_SIZE(abis); i++) {
		int abi = abis[i];
		struct landlock_plan plan;
		p.net = NET_LOOPBACK;
		if (!is_int(landlock_plan(&p, abi, 0, &plan), 0, "(g) abi %d: plan succeeds", abi))
			continue;
		is_int(plan.abi, abi, "(g) abi %d: the plan records its ABI", abi);
		is_int(plan.handled_fs, handled_rights(abi), "(g) abi %d: handled fs", abi);
		bool within = true;
		for (size_t j = 0; j < plan.n_rules; j++)
			within &= !(plan.rules[j].access & ~landlock_handled_fs(abi));
		ok(within, "(g) abi %d: no rule grants a right the ABI lacks", abi);
		const struct landlock_rule *src = find_rule(&plan, "a/src");
		const struct landlock_rule *readme = find_rule(&plan, "a/README");
		const struct landlock_rule *git = find_rule(&plan, "a/.git");
		ok(src && src->access == (write_dir_rights(abi) & ~rd), "(g) abi %d: src gets write less listing", abi);
		ok(readme && readme->access == write_file_rights(abi), "(g) abi %d: README gets write (file)", abi);
		ok(git && git->access == (read_dir_rights(abi) & ~rd), "(g) abi %d: .git gets read less listing", abi);
		ok(src && !!(src->access & FS(REFER)) == (abi >= 2), "(g) abi %d: refer %s", abi,
		   abi >= 2 ? "granted" : "absent");
		ok(src && readme && !!(src->access & FS(TRUNCATE)) == (abi >= 3) &&
			   !!(readme->access & FS(TRUNCATE)) == (abi >= 3),
		   "(g) abi %d: truncate %s", abi, abi >= 3 ? "granted" : "absent");
		ok(git && readme && !!(git->access & FS(IOCTL_DEV)) == (abi >= 5) &&
			   !!(readme->access & FS(IOCTL_DEV)) == (abi >= 5),
		   "(g) abi %d: ioctl_dev %s", abi, abi >= 5 ? "granted" : "absent");
		is_int(plan.scoped, abi >= 6 ? (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL) : 0,
		       "(g) abi %d: scoped %s", abi, abi >= 6 ? "abstract sockets and signals" : "nothing");
		landlock_plan_free(&plan);

		static const enum net_mode nets[] = { NET_OFF, NET_LOOPBACK, NET_ON };
		for (size_t m = 0; m < ARRAY_SIZE(nets); m++) {
			p.net = nets[m];
			if (landlock_plan(&p, abi, 0, &plan) < 0)
				continue;
			uint64_t want = abi >= 4 && nets[m] != NET_ON
						? LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP
						: 0;
			is_int(plan.handled_net, want, "(g) abi %d, net %s: handled net %s", abi,
			       net_mode_name(nets[m]), want ? "bind and connect" : "none");
			landlock_plan_free(&plan);
			/* A nested run with TCP left to a loopback-only network
			 * namespace handles none. */
			if (landlock_plan(&p, abi, LANDLOCK_PLAN_TCP_TO_NETNS, &plan) < 0)
				continue;
			is_int(plan.handled_net, 0, "(g) abi %d, net %s, TCP to the network namespace: handled net none", abi,
			       net_mode_name(nets[m]));
			landlock_plan_free(&plan);
		}
	}
	struct landlock_plan plan;
	is_int(landlock_plan(&p, 0, 0, &plan), -EOPNOTSUPP, "abi 0: -EOPNOTSUPP");
	is_int(plan.n_rules, 0, "abi 0: no rules");
	policy_free(&p);
}

/* ---- procfs: per-process entries are never enumerated ---- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void test_procfs(void)
{
	struct stat st;
	if (lstat("/proc/kallsyms", &st) < 0 || lstat("/proc/sys", &st) < 0) {
		ok(1, "# SKIP no /proc/kallsyms here");
		return;
	}
	const int abi = 6;
	struct policy p;
	policy_init(&p);
	policy_add_rule(&p, "/proc", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "system");
	policy_add_rule(&p, "/proc/kallsyms", ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "hide kallsyms");
	struct landlock_plan plan;
	is_int(landlock_plan(&p, abi, 0, &plan), 0, "(proc) plan succeeds");
	bool transient = false, kallsyms = false, sys = false, self = false;
	for (size_t i = 0; i < plan.n_rules; i++) {
		const char *path = plan.rules[i].path;
		if (!str_has_prefix(path, "/proc/"))
			continue;
		const char *name = path + 6;
		transient |= all_digits(name) || streq(name, "thread-self");
		self |= streq(name, "self") || streq(name, "mounts");
		kallsyms |= streq(name, "kallsyms");
		sys |= streq(name, "sys") && plan.rules[i].access == (read_dir_rights(abi) & ~FS(READ_DIR));
	}
	ok(!transient, "(proc) no rule for a /proc/PID or thread-self");
	ok(!self, "(proc) no rule for the symlinks self and mounts");
	ok(!kallsyms, "(proc) no rule for the hidden kallsyms");
	ok(sys, "(proc) /proc/sys is granted read as a sibling");
	is_int(plan.n_enumerated, 1, "(proc) /proc enumerated once");
	landlock_plan_free(&plan);
	policy_free(&p);
}

/* ---- (h) 100,000 files, 1,000 hidden ---- */

#define PERF_DIRS 1000
#define PERF_FILES 100

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static bool machine_quiet(void)
{
	if (SANITIZED)
		return false;
	double load = 99;
	FILE *f = fopen("/proc/loadavg", "re");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = 99;
		fclose(f);
	}
	return load < 1.0 && !getenv("STOCKADE_NO_TIMING");
}

static bool make_perf_tree(const char *root)
{
	if (mkdir(root, 0755) < 0)
		return false;
	_cleanup_close_ int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int d = 0; d < PERF_DIRS; d++) {
		char name[16];
		snprintf(name, sizeof(name), "d%03d", d);
		if (mkdirat(rfd, name, 0755) < 0)
			return false;
		_cleanup_close_ int dfd = openat(rfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		for (int f = 0; f < PERF_FILES; f++) {
			char fname[16];
			snprintf(fname, sizeof(fname), "f%02d", f);
			int fd = openat(dfd, fname, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0)
				return false;
			close(fd);
		}
	}
	return true;
}

static void time_plan(const char *what, const struct policy *p, size_t want_rules, size_t want_enum,
		      bool quiet)
{
	unsigned long long best = ~0ULL;
	size_t n_rules = 0, n_enum = 0;
	bool planned = true;
	/* One round under a sanitizer: its allocator copies on every
	 * realloc, and a plan grown one rule at a time takes minutes. */
	const int rounds = SANITIZED ? 1 : 3;
	for (int round = 0; round < rounds; round++) {
		struct landlock_plan plan;
		unsigned long long t0 = now_usec();
		int r = landlock_plan(p, 6, 0, &plan);
		unsigned long long t = now_usec() - t0;
		if (r < 0) {
			planned = false;
			break;
		}
		if (t < best)
			best = t;
		diag("%s: round %d: %.3f ms, %zu rules, %zu directories enumerated", what, round, t / 1000.0,
		     plan.n_rules, plan.n_enumerated);
		if (round == 0) {
			n_rules = plan.n_rules;
			n_enum = plan.n_enumerated;
			/* A sample: the hidden file and its neighbours. */
			is_effective(&plan, "perf/d010/f10", false, 0, "%s: a hidden file gets nothing", what);
			is_effective(&plan, "perf/d010/f11", false, write_file_rights(6), "%s: its neighbour is writable", what);
			is_effective(&plan, "perf/d010", true, FS(READ_DIR), "%s: its directory: listing only", what);
		}
		landlock_plan_free(&plan);
	}
	if (!ok(planned, "%s: plan succeeds", what))
		return;
	is_int(n_rules, want_rules, "%s: %zu rules, as counted by hand", what, want_rules);
	is_int(n_enum, want_enum, "%s: %zu directories enumerated", what, want_enum);
	/* Its time is make bench's to measure (tools/bench-plan), as a
	 * figure: on a shared machine a timed test fails for what else runs. */
	diag("%s: best of %d: %.3f ms%s", what, rounds, best / 1000.0, quiet ? "" : " (machine busy or sanitizer build)");
}

static void test_performance(void)
{
	_cleanup_free_ char *root = tree_at("perf");
	unsigned long long t0 = now_usec();
	if (!ok(make_perf_tree(root), "(h) %d directories of %d files made", PERF_DIRS, PERF_FILES)) {
		diag("cannot make the tree: %m");
		return;
	}
	diag("(h) tree made in %.0f ms", (now_usec() - t0) / 1000.0);
	bool quiet = machine_quiet();

	/* Layout 1: every tenth directory holds ten hidden files (f00, f10,
	 * ... f90): 100 directories enumerated, each giving 90 sibling
	 * grants; the other 900 granted whole; plus the workspace's
	 * listing right. 1 + 900 + 100 * 90 = 9,901 rules; 101 enumerated. */
	struct policy p;
	policy_init(&p);
	add(&p, "perf", ACCESS_WRITE, 0, "ws");
	size_t hidden = 0;
	for (int d = 0; d < PERF_DIRS; d += 10)
		for (int f = 0; f < PERF_FILES; f += 10) {
			char rel[32];
			snprintf(rel, sizeof(rel), "perf/d%03d/f%02d", d, f);
			add(&p, rel, ACCESS_HIDE, 0, "hide");
			hidden++;
		}
	is_int(hidden, 1000, "(h) layout 1: 1,000 hidden entries in 100 directories");
	time_plan("(h) 100k files, 10 hidden in each of 100 dirs", &p, 1 + 900 + 100 * 90, 101, quiet);
	policy_free(&p);

	/* Layout 2: one hidden file in every directory (f<d % 100>): all
	 * 1000 directories enumerated with 99 grants each, plus the
	 * listing right: 1 + 1000 * 99 = 99,001 rules; 1001 enumerated. */
	policy_init(&p);
	add(&p, "perf", ACCESS_WRITE, 0, "ws");
	hidden = 0;
	for (int d = 0; d < PERF_DIRS; d++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "perf/d%03d/f%02d", d, d % PERF_FILES);
		add(&p, rel, ACCESS_HIDE, 0, "hide");
		hidden++;
	}
	is_int(hidden, 1000, "(h) layout 2: 1,000 hidden entries, one per directory");
	time_plan("(h) 100k files, 1 hidden in each of 1000 dirs", &p, 1 + 1000 * 99, 1001, quiet);
	policy_free(&p);

	t0 = now_usec();
	tree_remove(root);
	diag("(h) tree removed in %.0f ms", (now_usec() - t0) / 1000.0);
}

int main(void)
{
	test_rights();

	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *tmpl = xasprintf("%s/stockade-test-landlock-XXXXXX", str_empty(tmp) ? "/tmp" : tmp);
	if (!mkdtemp(tmpl)) {
		diag("mkdtemp: %m");
		return 1;
	}
	tree_base = realpath(tmpl, NULL);
	make_workspace_a();
	make_workspace_d();

	test_workspace_a();
	test_hide_deep();
	test_read_tree();
	test_handoffs();
	test_no_carve();
	test_missing();
	test_abi_capping();
	test_procfs();
	test_performance();

	tree_remove(tree_base);
	struct stat st;
	ok(lstat(tree_base, &st) < 0 && errno == ENOENT, "the temporary tree is removed");
	free(tree_base);
	return tap_done();
}
