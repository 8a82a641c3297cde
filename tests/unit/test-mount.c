/* mount: the new root as a plan, made on a real temporary tree and never
 * applied. Read trees are bound read-only, write trees read-write, a
 * rule that changes nothing adds nothing; what is hidden inside a grant
 * is covered (a directory by a tmpfs of mode 0, a file by an empty one),
 * what is hidden nowhere granted needs nothing; a protected path inside
 * a writable tree gets a read-only bind, a symlink never; the backend's
 * own places are tmpfs, and nothing is bound to hide inside them; the
 * steps that a path can fail are told from those the host refuses. */
#include "mount/mount.h"

#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/util.h"
#include "tests/golden.h"
#include "tests/tap.h"
#include "tests/tree.h"



static void add(struct policy *p, const char *rel, enum access a, unsigned flags)
{
	_cleanup_free_ char *path = rel[0] == '/' ? xstrdup(rel) : tree_at(rel);
	policy_add_rule(p, path, a, flags, SOURCE_DEFAULT_OF("test"), rel);
}

static const struct mount_entry *find(const struct mount_plan *plan, const char *rel)
{
	_cleanup_free_ char *path = rel[0] == '/' ? xstrdup(rel) : tree_at(rel);
	const struct mount_entry *found = NULL;
	for (size_t i = 0; i < plan->n_entries; i++)
		if (streq(plan->entries[i].target, path)) {
			if (found)
				return NULL;	/* twice: never right */
			found = &plan->entries[i];
		}
	return found;
}

static void expect(const struct mount_plan *plan, const char *rel, enum mount_kind kind, unsigned flags,
		   const char *what)
{
	const struct mount_entry *e = find(plan, rel);
	if (!ok(e && e->kind == kind && e->flags == flags, "%s: %s", rel, what))
		diag("got %s kind %d flags %#x", e ? "an entry of" : "no entry", e ? (int)e->kind : -1, e ? e->flags : 0);
}

static void expect_none(const struct mount_plan *plan, const char *rel, const char *what)
{
	ok(!find(plan, rel), "%s: %s", rel, what);
}

static char *plan_text(const struct mount_plan *plan)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	mount_plan_print(f, plan);
	fclose(f);
	/* The tree's own path, and the host's merged-usr links, which differ
	 * between machines, leave the golden file. */
	_cleanup_free_ char *named = golden_replace(text, tree_base, "@T@");
	free(text);
	return golden_drop_lines(named, "(default: system)");
}

static void test_plan(void)
{
	static const char *const dirs[] = { "sys", "sys/sub", "ws", "ws/.git", "ws/.git/hooks", "ws/secrets", "ws/ro",
					    "ws/ro/inner", "nowhere", "home", "tmp", "ws/vault" };
	static const char *const files[] = { "sys/f", "ws/.env", "nowhere/secret", "home/.gitconfig", "ws/vault/one" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		tree_dir(dirs[i]);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		tree_file(files[i], 0755);
	_cleanup_free_ char *link = tree_at("ws/link");
	if (symlink("/etc", link) < 0)
		diag("symlink: %m");

	struct policy p;
	policy_init(&p);
	p.workspace = tree_at("ws");
	add(&p, "sys", ACCESS_READ, RULE_SYSTEM);
	add(&p, "sys/sub", ACCESS_READ, RULE_SYSTEM);
	add(&p, "ws", ACCESS_WRITE, 0);
	add(&p, "ws/.git/hooks", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH);
	add(&p, "ws/link", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH);
	add(&p, "ws/.env", ACCESS_HIDE, 0);
	add(&p, "ws/secrets", ACCESS_HIDE, 0);
	add(&p, "ws/vault", ACCESS_HIDE, 0);
	add(&p, "ws/vault/one", ACCESS_READ, 0);
	add(&p, "ws/ro", ACCESS_READ, 0);
	add(&p, "ws/ro/inner", ACCESS_WRITE, 0);
	add(&p, "ws/missing", ACCESS_HIDE, 0);
	add(&p, "nowhere/secret", ACCESS_HIDE, RULE_SYSTEM);
	add(&p, "home/.gitconfig", ACCESS_READ, RULE_SYSTEM);
	add(&p, "home/.ssh", ACCESS_HIDE, RULE_SYSTEM);
	add(&p, "/dev/null", ACCESS_WRITE, RULE_SYSTEM | RULE_DEVICE);
	add(&p, "/proc", ACCESS_READ, RULE_SYSTEM);
	policy_sort(&p);

	/* The places a backend makes: a fresh home and tmp, its devpts. */
	_cleanup_free_ char *home = tree_at("home"), *tmp = tree_at("tmp");
	struct rule places[] = {
		{ .path = home, .access = ACCESS_WRITE, .flags = RULE_FRESH, .origin = (char *)"fresh home (tmpfs)" },
		{ .path = tmp, .access = ACCESS_WRITE, .flags = RULE_FRESH, .origin = (char *)"private /tmp (tmpfs)" },
		{ .path = (char *)"/dev/pts", .access = ACCESS_WRITE, .flags = RULE_FRESH | RULE_DEVICE,
		  .origin = (char *)"the jail's devpts" },
	};
	const struct rule_list list = { places, ARRAY_SIZE(places) };
	p.places = &list;
	struct mount_plan plan;
	is_int(mount_plan(&p, &plan), 0, "mount_plan");

	expect(&plan, "/proc", MOUNT_PROC, 0, "the jail's own /proc, never the host's");
	expect(&plan, "/dev", MOUNT_TMPFS, 0, "a minimal /dev on a tmpfs");
	expect(&plan, "/dev/pts", MOUNT_DEVPTS, 0, "a devpts of the jail's own, not the place's bind");
	expect(&plan, "/dev/null", MOUNT_BIND, MOUNT_DEVICE | MOUNT_FILE | MOUNT_READONLY,
	       "a device is bound, not nodev, read-only (its mode and times are the host's)");
	expect(&plan, "sys", MOUNT_BIND, MOUNT_READONLY, "a read tree: bound read-only");
	expect_none(&plan, "sys/sub", "a read rule inside a read tree adds nothing");
	expect(&plan, "ws", MOUNT_BIND, 0, "the workspace: bound read-write");
	expect(&plan, "ws/.git/hooks", MOUNT_BIND, MOUNT_READONLY | MOUNT_BENEATH | MOUNT_IF_PRESENT,
	       "a hand-off in the workspace: read-only, its source resolved beneath the workspace, skipped if gone");
	expect_none(&plan, "ws/link", "a hand-off that is a symlink: the guard's, never bound");
	expect(&plan, "ws/.env", MOUNT_EMPTY_FILE, MOUNT_READONLY | MOUNT_FILE, "a hidden file inside a grant: covered");
	expect(&plan, "ws/secrets", MOUNT_TMPFS, MOUNT_READONLY, "a hidden directory inside a grant: covered");
	expect(&plan, "ws/vault", MOUNT_TMPFS, MOUNT_SEAL,
	       "a hidden directory with a grant beneath: covered, sealed read-only once that is mounted");
	const struct mount_entry *v = find(&plan, "ws/vault");
	ok(v && strstr(v->options, "mode=0111"), "its cover can be passed through, not listed (mode 0111)");
	expect(&plan, "ws/vault/one", MOUNT_BIND, MOUNT_READONLY | MOUNT_FILE, "the one file read inside it: bound");
	expect_none(&plan, "ws/missing", "a hidden path that does not exist: nothing");
	expect(&plan, "ws/ro", MOUNT_BIND, MOUNT_READONLY, "a read tree inside the workspace: read-only");
	expect(&plan, "ws/ro/inner", MOUNT_BIND, 0, "a write tree inside that: read-write again");
	expect_none(&plan, "nowhere/secret", "hidden where nothing is granted: nothing to cover");
	expect(&plan, "home", MOUNT_TMPFS, MOUNT_SHARED, "the fresh home: a directory of the one tmpfs");
	expect(&plan, "home/.gitconfig", MOUNT_BIND, MOUNT_READONLY | MOUNT_FILE, "a file read from the real home, bound into it");
	expect_none(&plan, "home/.ssh", "a credential under the fresh home: not there to hide");
	expect(&plan, "tmp", MOUNT_TMPFS, MOUNT_SHARED, "the private tmp: a directory of the one tmpfs");
	const struct mount_entry *t = find(&plan, "tmp");
	ok(t && streq(t->options, "mode=0700"), "a private place is 0700 (only /tmp itself is 1777)");
	ok(plan.shared_options && streq(plan.shared_options, "size=50%,nr_inodes=1m"), "the one tmpfs: --tmp-size's default, half of memory");

	bool ordered = true;
	for (size_t i = 1; i < plan.n_entries; i++)
		ordered = ordered && path_depth(plan.entries[i - 1].target) <= path_depth(plan.entries[i].target);
	ok(ordered, "shallow before deep: a mount never lands under one made later");

	_cleanup_free_ char *text = plan_text(&plan);
	golden_check("tests/golden/mount-plan.txt", text, strlen(text), "the plan as explain prints it");
	mount_plan_free(&plan);
	policy_free(&p);
}

static void test_steps(void)
{
	static const struct {
		enum mount_step step;
		bool path;
	} steps[] = {
		{ MOUNT_STEP_OPEN_WORKSPACE, true },  { MOUNT_STEP_TARGET, true },    { MOUNT_STEP_OPEN_SOURCE, true },
		{ MOUNT_STEP_SYMLINK, true },	      { MOUNT_STEP_PRIVATE, false },  { MOUNT_STEP_NEW_ROOT, false },
		{ MOUNT_STEP_FSOPEN, false },	      { MOUNT_STEP_FSMOUNT, false },  { MOUNT_STEP_OPEN_TREE, false },
		{ MOUNT_STEP_SETATTR, false },	      { MOUNT_STEP_MOVE_MOUNT, false }, { MOUNT_STEP_PIVOT, false },
		{ MOUNT_STEP_DETACH, false },	      { MOUNT_STEP_READ_ONLY, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		ok(mount_step_is_path(steps[i].step) == steps[i].path, "'%s' %s", mount_step_name(steps[i].step),
		   steps[i].path ? "can fail on a path: never a reason to fall back" : "fails when the host refuses");
	is_str(mount_step_name((enum mount_step)999), "mount", "an unknown step still has a name");
}

static int write_proc(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	return fd < 0 ? -errno : write_all(fd, text, strlen(text));
}

/* The plan applied in a child of its own user and mount namespaces:
 * 0 when mount_apply built the root, the failing step + 1 otherwise,
 * 100 + errno when the namespaces could not be had. */
static int apply_in_child(const struct mount_plan *plan, const char *root_dir)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	pid_t pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(100 + errno);
		_cleanup_free_ char *umap = xasprintf("0 %u 1", (unsigned)uid);
		_cleanup_free_ char *gmap = xasprintf("0 %u 1", (unsigned)gid);
		if (write_proc("/proc/self/setgroups", "deny") < 0 || write_proc("/proc/self/uid_map", umap) < 0 ||
		    write_proc("/proc/self/gid_map", gmap) < 0)
			_exit(100 + errno);
		struct mount_failure f;
		_exit(mount_apply(plan, root_dir, &f) < 0 ? 1 + (int)f.step : 0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A hand-off listed by the plan and removed before the jail binds it (a
 * concurrent run's guard ended): the root is still built, and nothing is
 * made on the host where the hand-off was. */
static void test_vanished_handoff(void)
{
	tree_dir("v/ws/.vscode");
	tree_dir("v/root");
	struct policy p;
	policy_init(&p);
	p.workspace = tree_at("v/ws");
	add(&p, "v/ws", ACCESS_WRITE, 0);
	add(&p, "v/ws/.vscode", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH);
	policy_sort(&p);
	struct mount_plan plan;
	is_int(mount_plan(&p, &plan), 0, "mount_plan with a hand-off");
	/* Only the tree's binds: a procfs needs a pid namespace of its own. */
	size_t kept = 0;
	for (size_t i = 0; i < plan.n_entries; i++) {
		if (path_is_beneath(plan.entries[i].target, tree_base)) {
			struct mount_entry e = plan.entries[kept];
			plan.entries[kept++] = plan.entries[i];
			plan.entries[i] = e;
		}
	}
	ok(kept == 2, "the plan binds the workspace and the hand-off's hole");
	size_t all = plan.n_entries;
	plan.n_entries = kept;
	_cleanup_free_ char *handoff = tree_at("v/ws/.vscode"), *root = tree_at("v/root");

	ok(access(handoff, F_OK) == 0, "control: the hand-off is there when planned");
	is_int(apply_in_child(&plan, root), 0, "control: the root is built with the hand-off in place");
	if (rmdir(handoff) < 0)
		diag("rmdir: %m");
	is_int(apply_in_child(&plan, root), 0, "a hand-off gone since the plan: the root is still built");
	ok(access(handoff, F_OK) < 0 && errno == ENOENT, "and nothing was made where the hand-off was");

	/* Without the mark, the hole's mount point is made on the host. */
	for (size_t i = 0; i < plan.n_entries; i++)
		plan.entries[i].flags &= ~MOUNT_IF_PRESENT;
	is_int(apply_in_child(&plan, root), 0, "control: an unmarked bind of the same path is still applied");
	ok(access(handoff, F_OK) == 0, "control: and its mount point was made on the host (what the mark prevents)");
	plan.n_entries = all;
	mount_plan_free(&plan);
	policy_free(&p);
}

int main(void)
{
	tree_begin("mount");
	test_plan();
	test_steps();
	test_vanished_handoff();
	tree_end();
	return tap_done();
}
