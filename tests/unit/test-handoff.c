/* handoff: the discovery of trust hand-offs on real temporary trees, each
 * case with its whole expected list: an empty workspace (every hand-off
 * listed though none exists), a plain repository, a `.git` file and where
 * its gitdir lies, a linked worktree, submodules, nested repositories,
 * symlinks (followed inside the workspace, never out of it), the walk's
 * depth limit, an .envrc and a config's includes, the extra paths, a git
 * directory as the workspace; then the small public helpers: which hook
 * runs, what a `.git` file says, which relative paths are valid, what
 * passes for a git directory, and how a set is normalised. */
#include "handoff/handoff.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "tests/tap.h"
#include "tests/tree.h"

/* The rows of one git directory, as render() prints them: GITDIR_HEAD
 * and GITDIR_SEQ apart where another git directory's rows sort between
 * them (one inside it). */
#define GITDIR_HEAD(g)                           \
	"git pointer " g "/commondir\n"          \
	"git config " g "/config\n"              \
	"git config " g "/config.worktree\n"     \
	"hooks " g "/hooks\n"                    \
	"tree " g "/info/attributes\n"
#define GITDIR_SEQ(g)                            \
	"git sequence " g "/rebase-merge\n"      \
	"git sequence " g "/sequencer\n"
#define GITDIR(g) GITDIR_HEAD(g) GITDIR_SEQ(g)

/* The tree, canonical, so that absolute paths into it compare as the
 * discovery's own. */
static void begin(const char *name)
{
	tree_begin(name);
	char *canon = NULL;
	if (path_canonical(tree_base, &canon) < 0)
		tap_skip_all("cannot resolve the temporary directory");
	free(tree_base);
	tree_base = canon;
}

/* Every directory above an absolute path, where missing (tree_file
 * makes them only inside the tree). */
static void parents_of(const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	for (char *s = p + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			diag("mkdir %s: %m", p);
		*s = '/';
	}
}

static void put(const char *rel, const char *content)
{
	_cleanup_free_ char *p = tree_at(rel);
	parents_of(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, content, strlen(content)) < 0)
		diag("write %s: %m", p);
	if (fd >= 0)
		close(fd);
}

/* A git directory git would take for one: a HEAD and objects/. */
static void gitdir_at(const char *rel)
{
	_cleanup_free_ char *head = path_join(rel, "HEAD");
	_cleanup_free_ char *objects = path_join(rel, "objects");
	put(head, "ref: refs/heads/main\n");
	_cleanup_free_ char *at = tree_at(objects);
	if (mkdir(at, 0755) < 0 && errno != EEXIST)
		diag("mkdir %s: %m", at);
}

static bool is_top_row(const char *path)
{
	for (size_t i = 0; i < handoff_table_len; i++)
		if (handoff_table[i].place == HANDOFF_AT_TOP && streq(handoff_table[i].name, path))
			return true;
	return false;
}

/* "kind path" a line, but for the rows at the top of the workspace (the
 * same in every case, checked by top_rows_all). */
static char *render(const struct handoffs *h)
{
	struct text t = { 0 };
	text_adds(&t, "");
	for (size_t i = 0; i < h->n; i++) {
		if (is_top_row(h->v[i].path) && h->v[i].kind == HANDOFF_TREE)
			continue;
		text_adds(&t, handoff_kind_name(h->v[i].kind));
		text_addc(&t, ' ');
		text_adds(&t, h->v[i].path);
		text_addc(&t, '\n');
	}
	return text_take(&t);
}

static char *render_strv(char *const *v)
{
	struct text t = { 0 };
	text_adds(&t, "");
	for (size_t i = 0; v && v[i]; i++) {
		text_adds(&t, v[i]);
		text_addc(&t, '\n');
	}
	return text_take(&t);
}

/* Every row of the table's top, each once. */
static bool top_rows_all(const struct handoffs *h)
{
	size_t want = 0, got = 0;
	for (size_t i = 0; i < handoff_table_len; i++)
		if (handoff_table[i].place == HANDOFF_AT_TOP)
			want++;
	for (size_t i = 0; i < h->n; i++)
		if (is_top_row(h->v[i].path) && h->v[i].kind == HANDOFF_TREE)
			got++;
	return got == want;
}

static int discover(const struct handoff_scan *s, struct handoffs *ret)
{
	_cleanup_close_ int wfd = open(s->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wfd < 0)
		return -errno;
	struct parent_cache parents = PARENT_CACHE_INIT(wfd);
	int r = handoffs_discover(s, wfd, &parents, ret);
	parent_cache_done(&parents);
	return r;
}

/* Discovers the tree's hand-offs and checks the whole list (and what
 * could not be looked through, NULL: nothing). */
static void check_scan(const char *what, const struct handoff_scan *s, const char *want, const char *want_unguarded)
{
	struct handoffs h;
	int r = discover(s, &h);
	if (!is_int(r, 0, "%s: discovered", what))
		return;
	_cleanup_free_ char *got = render(&h);
	is_str(got, want, "%s: the list", what);
	if (!s->gitdir_only)
		ok(top_rows_all(&h), "%s: every row of the top, existing or not", what);
	_cleanup_free_ char *unguarded = render_strv(h.unguarded);
	is_str(unguarded, want_unguarded ? want_unguarded : "", "%s: what could not be looked through", what);
	handoffs_free(&h);
}

static void check(const char *what, const char *want)
{
	check_scan(what, &(struct handoff_scan){ .workspace = tree_base }, want, NULL);
}

static void test_empty(void)
{
	begin("handoff-empty");
	/* no repository yet: the top's .git is one before `git init` */
	check("an empty workspace", GITDIR(".git"));
	tree_end();
}

static void test_plain_repo(void)
{
	begin("handoff-plain");
	gitdir_at(".git");
	put(".git/config", "[core]\n\tbare = false\n");
	put(".git/hooks/pre-commit", "#!/bin/sh\n");
	put(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
	put(".git/objects/ab/cdef", "blob\n");
	put(".vscode/tasks.json", "{}\n");
	put("src/main.c", "int main;\n");
	/* names of the top deeper down are nothing */
	put("src/.envrc", "PATH_add x\n");
	put("src/.vscode/tasks.json", "{}\n");
	/* what lies in a hooks directory or a tree is kept by it, not listed */
	check("a plain repository", GITDIR(".git"));

	_cleanup_strv_ char **paths = NULL;
	is_int(handoffs_list(&(struct handoff_scan){ .workspace = tree_base }, &paths), 0, "handoffs_list: listed");
	bool sorted = true;
	for (size_t i = 1; paths && paths[i]; i++)
		if (path_cmp(paths[i - 1], paths[i]) >= 0)
			sorted = false;
	ok(sorted, "handoffs_list: sorted, each once");
	size_t top = 0;
	for (size_t i = 0; i < handoff_table_len; i++)
		top += handoff_table[i].place == HANDOFF_AT_TOP;
	is_int(strv_length(paths), top + 7, "handoffs_list: the top's rows and the seven of .git");
	ok(strv_contains(paths, ".git/hooks") && strv_contains(paths, ".vscode") && !strv_contains(paths, ".vscode/tasks.json") &&
		   !strv_contains(paths, ".git/hooks/pre-commit") && !strv_contains(paths, "src/.envrc"),
	   "handoffs_list: .git/hooks and .vscode, not what they hold, not src/.envrc");
	tree_end();
}

static void test_gitfile(void)
{
	begin("handoff-gitfile");
	char outside[] = "/tmp/stockade-test-handoff-out-XXXXXX";
	if (!mkdtemp(outside))
		tap_skip_all("cannot make a temporary directory");
	put("sub/.git", "gitdir: ../store/sub.git\n");
	gitdir_at("store/sub.git");
	check("a .git file, its gitdir inside", GITDIR(".git") GITDIR("store/sub.git") "git pointer sub/.git\n");
	tree_end();

	begin("handoff-gitfile");
	/* gitdir names a place git would not take for a git directory */
	put("sub/.git", "gitdir: ../store/sub.git\n");
	put("store/sub.git/config", "[core]\n");
	check("a .git file, its gitdir no git directory", GITDIR(".git") "git pointer sub/.git\n");
	tree_end();

	begin("handoff-gitfile");
	_cleanup_free_ char *abs = xasprintf("gitdir: %s/elsewhere.git\n", outside);
	put("a/.git", abs);
	put("b/.git", "gitdir: ../../../../../../../../../../../../tmp\n");
	put("c/.git", "not a gitdir line\n");
	gitdir_at("d.git");
	put("d/.git", "gitdir:../d.git\n");
	check("a .git file: outside, escaping, not one, no space after the colon",
	      GITDIR(".git") "git pointer a/.git\ngit pointer b/.git\ngit pointer c/.git\ngit pointer d/.git\n");
	tree_end();
	rmdir(outside);
}

static void test_worktree(void)
{
	begin("handoff-worktree");
	gitdir_at(".git");
	put(".git/worktrees/feat/HEAD", "ref: refs/heads/feat\n");
	put(".git/worktrees/feat/commondir", "../..\n");
	_cleanup_free_ char *back = xasprintf("%s/feat/.git\n", tree_base);
	put(".git/worktrees/feat/gitdir", back);
	/* relative to the worktree its gitdir file names */
	put(".git/worktrees/feat/config.worktree", "[core]\n\thooksPath = wt-hooks\n");
	_cleanup_free_ char *to = xasprintf("gitdir: %s/.git/worktrees/feat\n", tree_base);
	put("feat/.git", to);
	check("a linked worktree", GITDIR_HEAD(".git") GITDIR_SEQ(".git") GITDIR(".git/worktrees/feat") "git pointer feat/.git\nhooks feat/wt-hooks\n");
	tree_end();

	begin("handoff-worktree");
	/* the worktree's own git directory inside, its common one named by
	 * commondir: both kept */
	gitdir_at("main/.git");
	put("main/.git/worktrees/w/HEAD", "ref: refs/heads/w\n");
	put("main/.git/worktrees/w/commondir", "../..\n");
	put("w/.git", "gitdir: ../main/.git/worktrees/w\n");
	check("a linked worktree beside its repository",
	      GITDIR(".git") GITDIR("main/.git") GITDIR("main/.git/worktrees/w") "git pointer w/.git\n");
	tree_end();

	begin("handoff-worktree");
	/* a worktree gitdir whose commondir leaves the workspace */
	put("store/w/HEAD", "ref: refs/heads/w\n");
	put("store/w/commondir", "/tmp\n");
	put("w/.git", "gitdir: ../store/w\n");
	check("a commondir outside", GITDIR(".git") GITDIR("store/w") "git pointer w/.git\n");
	tree_end();
}

static void test_submodules(void)
{
	begin("handoff-modules");
	gitdir_at(".git");
	gitdir_at(".git/modules/lib");
	gitdir_at(".git/modules/lib/modules/inner");
	/* a name with a slash: folders until a HEAD */
	gitdir_at(".git/modules/libs/a");
	put(".git/modules/junk/notes", "x\n");
	put("lib/.git", "gitdir: ../.git/modules/lib\n");
	put("lib/inner/.git", "gitdir: ../../.git/modules/lib/modules/inner\n");
	check("submodules", GITDIR_HEAD(".git") GITDIR_HEAD(".git/modules/lib") GITDIR(".git/modules/lib/modules/inner")
				    GITDIR_SEQ(".git/modules/lib") GITDIR(".git/modules/libs/a") GITDIR_SEQ(".git") "git pointer lib/.git\ngit pointer lib/inner/.git\n");
	tree_end();
}

static void test_bare(void)
{
	/* A bare repository is a git directory of its own (HEAD, objects/,
	 * refs/, no .git): its hooks run at a push to it. */
	begin("handoff-bare");
	put("remote.git/HEAD", "ref: refs/heads/main\n");
	tree_dir("remote.git/objects");
	tree_dir("remote.git/refs");
	put("remote.git/config", "[core]\n\tbare = true\n\thooksPath = myhooks\n");
	/* not one: a HEAD alone, or objects/ without refs/ */
	put("notes/HEAD", "x\n");
	tree_dir("half/objects");
	put("half/HEAD", "ref: refs/heads/main\n");
	check("a bare repository in the workspace",
	      GITDIR(".git") GITDIR_HEAD("remote.git") "hooks remote.git/myhooks\n" GITDIR_SEQ("remote.git"));
	struct handoff_repos walked = { 0 };
	_cleanup_close_ int wfd = open(tree_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (is_int(handoff_repos_walk(wfd, &walked), 0, "bare: walked")) {
		ok(walked.n == 1 && streq(walked.v[0].worktree, "remote.git") && walked.v[0].type == HANDOFF_REPO_BARE,
		   "bare: the walk finds it as bare");
		handoff_repos_free(&walked);
	}
	_cleanup_close_ int bfd = open(tree_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int rfd = openat(bfd, "remote.git", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int hfd = openat(bfd, "half", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(handoff_dir_is_bare(rfd) && !handoff_dir_is_bare(hfd), "handoff_dir_is_bare: remote.git is, half is not");
	tree_end();
}

static void test_other_vcs(void)
{
	/* Mercurial's and Jujutsu's repositories: their own config runs
	 * programs ([hooks] in .hg/hgrc; tools in .jj/repo/config.toml). A
	 * .hg at the top is no git repository there: .git's rows stay. */
	begin("handoff-vcs");
	tree_dir(".hg/store");
	tree_dir("sub/.hg");
	tree_dir("tool/.jj/repo");
	put("notes/.hg", "a file, not a repository\n");
	check("Mercurial and Jujutsu repositories",
	      GITDIR(".git") "tree .hg/hgrc\ntree .hg/hgrc-not-shared\ntree .hg/sharedpath\ntree sub/.hg/hgrc\n"
			     "tree sub/.hg/hgrc-not-shared\ntree sub/.hg/sharedpath\ntree tool/.jj/repo/config.toml\n");
	tree_end();

	/* the files an hgrc's %include names inside the workspace, and
	 * theirs; one outside, or ~user's, is not the workspace's */
	begin("handoff-vcs");
	tree_dir(".hg/store");
	put(".hg/hgrc", "[ui]\nusername = t\n%include ../shared.rc\n%include   /etc/mercurial/hgrc  \n%includex x\n");
	put("shared.rc", "%include conf/more.rc\r\n");
	put("conf/more.rc", "[hooks]\n");
	check("an hgrc's %include, and theirs",
	      GITDIR(".git") "tree .hg/hgrc\ntree .hg/hgrc-not-shared\ntree .hg/sharedpath\ntree conf/more.rc\n"
			     "tree shared.rc\n");
	tree_end();

	/* a share (hg share): hg reads its source's hgrc first, in the .hg
	 * folder its sharedpath names (absolute, or relative to .hg with
	 * relshared); one outside the workspace is not the workspace's */
	begin("handoff-vcs");
	tree_dir("a/.hg");
	tree_dir("src-store");
	put("a/.hg/sharedpath", "../../src-store\n");
	tree_dir("b/.hg");
	put("b/.hg/sharedpath", "/etc\n");
	check("a share's sharedpath, and the source's hgrc it names",
	      GITDIR(".git") "tree a/.hg/hgrc\ntree a/.hg/hgrc-not-shared\ntree a/.hg/sharedpath\n"
			     "tree b/.hg/hgrc\ntree b/.hg/hgrc-not-shared\ntree b/.hg/sharedpath\n"
			     "tree src-store/hgrc\n");
	tree_end();

	/* a second jj workspace: .jj/repo is a file naming the first one's
	 * repo folder (relative to .jj, or absolute); its config.toml is
	 * what jj reads. One naming a folder outside the workspace is not
	 * the workspace's. */
	begin("handoff-vcs");
	tree_dir("main/.jj/repo");
	tree_dir("second/.jj");
	put("second/.jj/repo", "../../main/.jj/repo");
	tree_dir("far/.jj");
	put("far/.jj/repo", "/elsewhere/.jj/repo\n");
	check("a second jj workspace's .jj/repo file, and the config of the repo it names",
	      GITDIR(".git") "tree far/.jj/repo\ntree main/.jj/repo/config.toml\ntree second/.jj/repo\n");
	tree_end();

	/* beside a .git (hg-git, jj colocated): both */
	begin("handoff-vcs");
	gitdir_at(".git");
	tree_dir(".jj/repo");
	check("a .jj beside a .git", GITDIR(".git") "tree .jj/repo/config.toml\n");
	tree_end();
}

static void test_submodule_hooks_path(void)
{
	/* A submodule's relative hooksPath is its own working tree's (husky
	 * in a submodule): git runs lib/.husky/pre-commit, named by the
	 * core.worktree git wrote into the submodule's config. It was
	 * taken as .git/modules/.husky, and lib/.husky went unguarded. */
	begin("handoff-modules-hooks");
	gitdir_at(".git");
	gitdir_at(".git/modules/lib");
	put(".git/modules/lib/config", "[core]\n\tworktree = ../../../lib\n\thooksPath = .husky\n");
	put("lib/.git", "gitdir: ../.git/modules/lib\n");
	check("a submodule's relative hooksPath, by its core.worktree",
	      GITDIR_HEAD(".git") GITDIR(".git/modules/lib") GITDIR_SEQ(".git") "git pointer lib/.git\nhooks lib/.husky\n");
	tree_end();

	/* No core.worktree: the working tree its .git file is in. */
	begin("handoff-modules-hooks");
	gitdir_at(".git");
	gitdir_at(".git/modules/lib");
	put(".git/modules/lib/config", "[core]\n\thooksPath = .husky\n");
	put("lib/.git", "gitdir: ../.git/modules/lib\n");
	check("a submodule's relative hooksPath, by its .git file",
	      GITDIR_HEAD(".git") "hooks .git/modules/.husky\n" GITDIR(".git/modules/lib") GITDIR_SEQ(".git") "git pointer lib/.git\nhooks lib/.husky\n");
	tree_end();

	/* A core.worktree outside the workspace names nothing there; the
	 * .git file's tree still counts. */
	begin("handoff-modules-hooks");
	gitdir_at(".git");
	gitdir_at(".git/modules/lib");
	put(".git/modules/lib/config", "[core]\n\tworktree = /tmp\n\thooksPath = .husky\n");
	put("lib/.git", "gitdir: ../.git/modules/lib\n");
	check("a core.worktree outside the workspace",
	      GITDIR_HEAD(".git") "hooks .git/modules/.husky\n" GITDIR(".git/modules/lib") GITDIR_SEQ(".git") "git pointer lib/.git\nhooks lib/.husky\n");
	tree_end();
}

static void test_nested(void)
{
	begin("handoff-nested");
	gitdir_at(".git");
	gitdir_at("a/.git");
	gitdir_at("a/b/c/.git");
	gitdir_at("vendor/x/.git");
	/* a .git inside a git directory is not a repository's */
	gitdir_at(".git/x/.git");
	check("nested repositories", GITDIR(".git") GITDIR("a/.git") GITDIR("a/b/c/.git") GITDIR("vendor/x/.git"));

	/* the guard's index handed in: no walk, only those */
	struct handoff_repos repos = { 0 };
	handoff_repos_add(&repos, "a", DT_DIR);
	check_scan("the repositories handed in", &(struct handoff_scan){ .workspace = tree_base, .repos = &repos },
		   GITDIR(".git") GITDIR("a/.git"), NULL);
	handoff_repos_free(&repos);
	tree_end();
}

static void test_symlinks(void)
{
	begin("handoff-symlinks");
	char outside[] = "/tmp/stockade-test-handoff-out-XXXXXX";
	if (!mkdtemp(outside))
		tap_skip_all("cannot make a temporary directory");
	_cleanup_free_ char *out_git = path_join(outside, ".git");
	gitdir_at(out_git);
	_cleanup_free_ char *out_hook = path_join(outside, ".git/hooks/pre-commit");
	put(out_hook, "#!/bin/sh\n");

	gitdir_at(".git");
	tree_dir("tools/hooks");
	tree_link("../tools/hooks", ".git/hooks");
	/* out of the workspace: kept as the symlink, never followed */
	tree_dir("sym");
	tree_link(out_git, "sym/.git");
	tree_dir("rel");
	tree_link("../../../../../../../../../../..", "rel/.git");
	/* a symlinked folder with a repository in it is not walked */
	tree_link(outside, "linkdir");
	/* inside: the symlink and the git directory it leads to */
	gitdir_at("store/real.git");
	tree_dir("in");
	tree_link("../store/real.git", "in/.git");
	/* a hand-off of the top that leads inside */
	tree_dir("shared/vscode");
	tree_link("shared/vscode", ".vscode");
	check("symlinks", GITDIR(".git") "git pointer in/.git\ngit pointer rel/.git\ntree shared/vscode\n" GITDIR(
				  "store/real.git") "git pointer sym/.git\nhooks tools/hooks\n");
	tree_end();
	tree_remove(outside);
}

static void test_depth(void)
{
	begin("handoff-depth");
	/* 255 levels are walked; the 256th is named as not looked through */
	struct text t = { 0 };
	for (int i = 0; i < 255; i++)
		text_adds(&t, i ? "/d" : "d");
	_cleanup_free_ char *d255 = text_take(&t);
	_cleanup_free_ char *d256 = path_join(d255, "d");
	_cleanup_free_ char *git255 = path_join(d255, ".git");
	_cleanup_free_ char *git256 = path_join(d256, ".git");
	gitdir_at(git255);
	gitdir_at(git256);
	_cleanup_free_ char *want = xasprintf(GITDIR(".git") GITDIR("%s"), git255, git255, git255, git255, git255, git255, git255);
	_cleanup_free_ char *unguarded = xasprintf("%s\n", d256);
	check_scan("256 levels deep", &(struct handoff_scan){ .workspace = tree_base }, want, unguarded);

	struct handoff_repos repos;
	_cleanup_close_ int wfd = open(tree_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	is_int(handoff_repos_walk(wfd, &repos), 0, "the walk: done");
	is_int(repos.n, 1, "the walk: one repository");
	is_str(repos.n ? repos.v[0].worktree : NULL, d255, "the walk: 255 levels down");
	is_int(strv_length(repos.unsearchable), 1, "the walk: one folder not searched");
	is_str(repos.unsearchable ? repos.unsearchable[0] : NULL, d256, "the walk: the 256th level");
	handoff_repos_free(&repos);
	tree_end();
}

static int repo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct handoff_repo *)a)->worktree, ((const struct handoff_repo *)b)->worktree);
}

static void test_repos_walk(void)
{
	begin("handoff-walk");
	char outside[] = "/tmp/stockade-test-handoff-out-XXXXXX";
	if (!mkdtemp(outside))
		tap_skip_all("cannot make a temporary directory");
	_cleanup_free_ char *out_git = path_join(outside, ".git");
	gitdir_at(out_git);
	gitdir_at(".git");
	put("f/.git", "gitdir: ../x\n");
	tree_dir("l");
	tree_link("../.git", "l/.git");
	gitdir_at("a/b/.git");
	tree_link(outside, "linked");
	/* not a .git of a working tree's: inside a .git, never walked */
	gitdir_at(".git/modules/m/.git");
	struct handoff_repos repos;
	_cleanup_close_ int wfd = open(tree_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	is_int(handoff_repos_walk(wfd, &repos), 0, "handoff_repos_walk: done");
	if (repos.n)
		qsort(repos.v, repos.n, sizeof(*repos.v), repo_cmp);
	struct text t = { 0 };
	text_adds(&t, "");
	for (size_t i = 0; i < repos.n; i++) {
		const char *type = repos.v[i].type == DT_DIR ? "dir" : repos.v[i].type == DT_REG ? "file"
				   : repos.v[i].type == DT_LNK	 ? "symlink"
								 : "other";
		_cleanup_free_ char *line = xasprintf("'%s' %s\n", repos.v[i].worktree, type);
		text_adds(&t, line);
	}
	_cleanup_free_ char *got = text_take(&t);
	is_str(got, "'' dir\n'a/b' dir\n'f' file\n'l' symlink\n", "handoff_repos_walk: each .git by its working tree and type");
	ok(repos.unsearchable == NULL, "handoff_repos_walk: every folder searched");
	handoff_repos_free(&repos);
	tree_end();
	tree_remove(outside);
}

static void test_envrc_and_config(void)
{
	begin("handoff-envrc");
	put(".envrc", "source_env .envrc.local\nPATH_add bin\nsource $HOME/x\nsource_env /etc/profile\n");
	gitdir_at(".git");
	put(".git/config", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../shared.gitconfig\n"
			   "[include]\n\tpath = /etc/gitconfig\n");
	put("shared.gitconfig", "[include]\n\tpath = more.gitconfig\n");
	check_scan("an .envrc and a config's hooksPath and includes", &(struct handoff_scan){ .workspace = tree_base },
		   "tree .envrc.local\n" GITDIR(".git") "hooks .githooks\ntree bin\ngit config more.gitconfig\n"
		   "git config shared.gitconfig\n",
		   ".envrc:3: $HOME/x\n");
	tree_end();

	begin("handoff-home");
	_cleanup_free_ char *home = xasprintf("%s/home", tree_base);
	_cleanup_free_ char *ws = xasprintf("%s/ws", tree_base);
	put("home/.gitconfig", "[core]\n\thooksPath = .husky\n");
	gitdir_at("ws/.git");
	gitdir_at("ws/sub/.git");
	check_scan("~/.gitconfig's hooksPath, in every working tree",
		   &(struct handoff_scan){ .workspace = ws, .user_home = home },
		   GITDIR(".git") "hooks .husky\n" GITDIR("sub/.git") "hooks sub/.husky\n", NULL);
	tree_end();
}

static void test_extra_and_gitdir_only(void)
{
	begin("handoff-extra");
	char *extra[] = { "tools/run.sh", "./a//b", NULL };
	check_scan("extra paths", &(struct handoff_scan){ .workspace = tree_base, .extra = (char *const[]){ "tools/run.sh", "c/d", NULL } },
		   GITDIR(".git") "tree c/d\ntree tools/run.sh\n", NULL);
	struct handoffs h;
	is_int(discover(&(struct handoff_scan){ .workspace = tree_base, .extra = extra }, &h), -EINVAL,
	       "an extra path with . or an empty component: -EINVAL");
	is_int(discover(&(struct handoff_scan){ .workspace = tree_base, .extra = (char *const[]){ "../x", NULL } }, &h),
	       -EINVAL, "an extra path with ..: -EINVAL");
	is_int(discover(&(struct handoff_scan){ .workspace = tree_base, .extra = (char *const[]){ "/etc", NULL } }, &h),
	       -EINVAL, "an absolute extra path: -EINVAL");
	tree_end();

	begin("handoff-gitdir-only");
	/* the workspace is a git directory: its own rows, no top */
	gitdir_at(".");
	gitdir_at("modules/sub");
	check_scan("a git directory as the workspace", &(struct handoff_scan){ .workspace = tree_base, .gitdir_only = true },
		   "git pointer commondir\ngit config config\ngit config config.worktree\nhooks hooks\ntree info/attributes\n" GITDIR(
			   "modules/sub") "git sequence rebase-merge\ngit sequence sequencer\n",
		   NULL);
	tree_end();

	char **paths = NULL;
	is_int(handoffs_list(&(struct handoff_scan){ .workspace = "relative/ws" }, &paths), -EINVAL,
	       "handoffs_list: a relative workspace: -EINVAL");
	is_int(handoffs_list(&(struct handoff_scan){ .workspace = "/nonexistent/stockade-ws" }, &paths), -ENOENT,
	       "handoffs_list: a missing workspace: -ENOENT");
}

static void test_hook_runs(void)
{
	ok(handoff_hook_runs("pre-commit"), "pre-commit runs");
	ok(handoff_hook_runs("post-checkout"), "post-checkout runs");
	ok(handoff_hook_runs("anything"), "any other name runs (git may add hooks)");
	ok(!handoff_hook_runs("pre-commit.sample"), "pre-commit.sample does not run");
	ok(!handoff_hook_runs(".sample"), ".sample does not run");
	ok(handoff_hook_runs("pre-commit.sample.bak"), "pre-commit.sample.bak runs");
}

static void test_gitfile_target(void)
{
	static const struct {
		const char *what, *text, *want;
	} cases[] = {
		{ "relative, a newline", "gitdir: ../x.git\n", "../x.git" },
		{ "absolute, no newline", "gitdir: /abs/path", "/abs/path" },
		{ "trailing blanks and CR", "gitdir: with space \t\r\n", "with space" },
		{ "the first line only", "gitdir: a\nsecond line\n", "a" },
		{ "empty", "gitdir: ", "" },
		{ "no space after the colon", "gitdir:x", NULL },
		{ "upper case", "GITDIR: x", NULL },
		{ "a leading blank", " gitdir: x", NULL },
		{ "nothing", "", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *got = handoff_gitfile_target(cases[i].text, strlen(cases[i].text));
		is_str(got, cases[i].want, "handoff_gitfile_target: %s", cases[i].what);
	}
	static const char nul[] = "gitdir: a\0b";
	_cleanup_free_ char *got = handoff_gitfile_target(nul, sizeof(nul) - 1);
	is_str(got, NULL, "handoff_gitfile_target: a NUL byte inside is not one");
}

static void test_relpath_valid(void)
{
	static const char *const good[] = { "a", "a/b", ".git/hooks", "..a", "a/.b", "a...", "with space" };
	static const char *const bad[] = { "", "/a", "a/", "a//b", "./a", "a/.", "..", "a/..", "a/../b" };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		is_int(handoff_relpath_valid(good[i]), 0, "valid: '%s'", good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		is_int(handoff_relpath_valid(bad[i]), -EINVAL, "not valid: '%s'", bad[i]);
	is_int(handoff_relpath_valid("a\nb"), -EINVAL, "not valid: a newline");
	is_int(handoff_relpath_valid("a\tb"), -EINVAL, "not valid: a tab");
}

static void test_gitdir_plausible(void)
{
	begin("handoff-plausible");
	char outside[] = "/tmp/stockade-test-handoff-out-XXXXXX";
	if (!mkdtemp(outside))
		tap_skip_all("cannot make a temporary directory");
	gitdir_at(outside);
	gitdir_at("full");
	put("linked/HEAD", "x\n");
	put("linked/commondir", "../full\n");
	put("headless/objects/x", "");
	put("nohead/config", "");
	put("filobj/HEAD", "x\n");
	put("filobj/objects", "");
	put("dircommon/HEAD", "x\n");
	tree_dir("dircommon/commondir");
	tree_link("full", "sym");
	tree_link("..", "up");
	_cleanup_free_ char *escape = xasprintf("../%s", strrchr(outside, '/') + 1);
	_cleanup_close_ int wfd = open(tree_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(handoff_gitdir_plausible(wfd, "full"), "HEAD and objects/: a git directory");
	ok(handoff_gitdir_plausible(wfd, "linked"), "HEAD and a commondir file: a git directory");
	ok(!handoff_gitdir_plausible(wfd, "headless"), "no HEAD: not one");
	ok(!handoff_gitdir_plausible(wfd, "nohead"), "a config alone: not one");
	ok(!handoff_gitdir_plausible(wfd, "filobj"), "objects a file: not one");
	ok(!handoff_gitdir_plausible(wfd, "dircommon"), "commondir a folder: not one");
	ok(!handoff_gitdir_plausible(wfd, "sym"), "a symlink to one: not followed");
	ok(!handoff_gitdir_plausible(wfd, "missing"), "missing: not one");
	ok(!handoff_gitdir_plausible(wfd, escape), "one outside, reached by '..': not one");
	_cleanup_free_ char *through = xasprintf("up/%s", strrchr(outside, '/') + 1);
	ok(!handoff_gitdir_plausible(wfd, through), "one outside, through a symlink: not one");
	tree_end();
	tree_remove(outside);
}

static char *render_set(const struct handoffs *h)
{
	struct text t = { 0 };
	text_adds(&t, "");
	for (size_t i = 0; i < h->n; i++) {
		_cleanup_free_ char *line = xasprintf("%s %s\n", handoff_kind_name(h->v[i].kind), h->v[i].path);
		text_adds(&t, line);
	}
	return text_take(&t);
}

static void test_normalize(void)
{
	struct handoffs h = { 0 };
	handoffs_add(&h, xstrdup("b"), HANDOFF_TREE);
	handoffs_add(&h, xstrdup("a/x"), HANDOFF_CONFIG);
	handoffs_add(&h, xstrdup("a"), HANDOFF_HOOKS);
	handoffs_add(&h, xstrdup("a/x.sample"), HANDOFF_TREE);
	handoffs_add(&h, xstrdup("a/sub/y.sample"), HANDOFF_TREE);
	handoffs_add(&h, xstrdup("a/x"), HANDOFF_TREE);
	handoffs_add(&h, xstrdup("b/c"), HANDOFF_CONFIG);
	handoffs_add(&h, xstrdup("a-b"), HANDOFF_TREE);
	handoffs_add(&h, xstrdup("c"), HANDOFF_POINTER);
	handoffs_add(&h, xstrdup("c"), HANDOFF_CONFIG);
	handoffs_add(&h, xstrdup("c/d"), HANDOFF_TREE);
	handoffs_normalize(&h);
	_cleanup_free_ char *got = render_set(&h);
	/* a hooks directory keeps all but its samples, at any depth (git
	 * runs none); a tree keeps all; the strictest kind wins */
	is_str(got, "hooks a\ntree a/sub/y.sample\ntree a/x.sample\ntree a-b\ntree b\ngit config c\ntree c/d\n",
	       "handoffs_normalize");
	const struct handoff *f = handoffs_find(&h, "a-b");
	ok(f && f->kind == HANDOFF_TREE && streq(f->path, "a-b"), "handoffs_find: a-b");
	ok(handoffs_find(&h, "c/d") != NULL, "handoffs_find: c/d");
	ok(handoffs_find(&h, "a/x") == NULL, "handoffs_find: a/x, dropped, is not there");
	ok(handoffs_find(&h, "zzz") == NULL && handoffs_find(&h, "") == NULL, "handoffs_find: nothing else");
	handoffs_free(&h);
	is_int(h.n, 0, "handoffs_free: empty after");
	struct handoffs none = { 0 };
	handoffs_normalize(&none);
	is_int(none.n, 0, "handoffs_normalize: an empty set stays empty");
}

/* Whether rel is kept by a set of hand-offs: a normalised set does not
 * grow when it is added. */
static bool kept_by(const struct handoffs *h, const char *rel)
{
	struct handoffs c = { 0 };
	for (size_t i = 0; i < h->n; i++)
		handoffs_add(&c, xstrdup(h->v[i].path), h->v[i].kind);
	handoffs_add(&c, xstrdup(rel), HANDOFF_TREE);
	handoffs_normalize(&c);
	bool kept = c.n == h->n;
	handoffs_free(&c);
	return kept;
}

static void test_is_handoff(void)
{
	begin("handoff-is");
	gitdir_at(".git");
	gitdir_at("sub/.git");
	struct handoffs h = { 0 };
	int r = discover(&(struct handoff_scan){ .workspace = tree_base }, &h);
	if (!is_int(r, 0, "discovered, for what is a hand-off"))
		return;
	static const char *const yes[] = {
		".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/config", ".git/config.worktree", ".git/info/attributes",
		".git/commondir", "sub/.git/hooks/pre-push", ".vscode/tasks.json", ".claude/settings.json", ".envrc",
		".config/mise/config.toml", "stockade.ini",
	};
	static const char *const no[] = {
		".git/hooks/pre-commit.sample", ".git/objects/ab/cdef", ".git/HEAD", ".git/info/exclude", ".git/refs/heads/main",
		"hooks/pre-commit", "src/.git-hooks/pre-commit", "src/.envrc", "src/.vscode/tasks.json", ".config/other",
		"sub/.git/objects/x", "README",
	};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		ok(kept_by(&h, yes[i]), "a hand-off: '%s'", yes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		ok(!kept_by(&h, no[i]), "not a hand-off: '%s'", no[i]);
	handoffs_free(&h);
	tree_end();
}

/* What git rebase --continue runs from a todo list: exec and x lines,
 * as git's parse_insn_line reads them, and nothing else. */
static void test_todo_runs(void)
{
	static const struct {
		const char *text;
		bool runs;
	} cases[] = {
		{ "pick 1234 one\npick 5678 two\n", false },
		{ "pick 1234 one\nexec touch /tmp/PWNED\n", true },
		{ "x make", true },
		{ "  \tx\tmake\n", true },
		{ "exec\n", true },
		{ "x\r\n", true },
		{ "pick 1 a\r\nexec b\r\n", true },
		{ "# exec not a command\n", false },
		{ "pick 1 exec\n", false },
		{ "execute 1\n", false },
		{ "xpick 1\n", false },
		{ "break\nlabel onto\nreset onto\nmerge -C 1 l\n", false },
		{ "", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ok(handoff_todo_runs(cases[i].text, strlen(cases[i].text)) == cases[i].runs, "todo %zu: %s", i,
		   cases[i].runs ? "runs a command" : "runs nothing");
	ok(handoff_todo_runs("pick 1\nexec\0 x\n", 14), "exec ended by a NUL, where git's parser stops: runs");
	ok(handoff_strategy_builtin("ort") && handoff_strategy_builtin("recursive") && handoff_strategy_builtin("octopus"),
	   "git's own strategies are built in");
	ok(!handoff_strategy_builtin("evil") && !handoff_strategy_builtin("../x") && !handoff_strategy_builtin(""),
	   "any other strategy names a program");
}

int main(void)
{
	test_empty();
	test_plain_repo();
	test_gitfile();
	test_worktree();
	test_submodules();
	test_submodule_hooks_path();
	test_bare();
	test_other_vcs();
	test_nested();
	test_symlinks();
	test_depth();
	test_repos_walk();
	test_envrc_and_config();
	test_extra_and_gitdir_only();
	test_hook_runs();
	test_gitfile_target();
	test_relpath_valid();
	test_gitdir_plausible();
	test_normalize();
	test_is_handoff();
	test_todo_runs();
	return tap_done();
}
