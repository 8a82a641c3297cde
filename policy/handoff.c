/* The table of trust hand-offs, what a policy needs of them, and the
 * hand-offs as data (sets of them, where the repositories are, a vetted
 * git config) with the pure helpers over them. */
#include "policy/handoff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compat.h"
#include "lib/path.h"
#include "lib/util.h"

const struct handoff_row handoff_table[] = {
	/* stockade's own: a jailed command must not loosen its next run */
	{ "stockade.ini", HANDOFF_TREE, HANDOFF_AT_TOP, "stockade" },
	{ ".stockade.ini", HANDOFF_TREE, HANDOFF_AT_TOP, "stockade" },
	/* agents: hooks, MCP servers and allowed commands they run */
	{ ".claude", HANDOFF_TREE, HANDOFF_AT_TOP, "Claude Code" },
	{ ".mcp.json", HANDOFF_TREE, HANDOFF_AT_TOP, "Claude Code's MCP servers" },
	{ ".gemini", HANDOFF_TREE, HANDOFF_AT_TOP, "Gemini CLI" },
	{ ".cursor", HANDOFF_TREE, HANDOFF_AT_TOP, "Cursor" },
	{ ".codex", HANDOFF_TREE, HANDOFF_AT_TOP, "Codex (a trusted project's MCP servers)" },
	{ "opencode.json", HANDOFF_TREE, HANDOFF_AT_TOP, "OpenCode (MCP servers, plugins)" },
	{ "opencode.jsonc", HANDOFF_TREE, HANDOFF_AT_TOP, "OpenCode (MCP servers, plugins)" },
	{ ".opencode", HANDOFF_TREE, HANDOFF_AT_TOP, "OpenCode (plugins it loads unasked)" },
	{ ".aider.conf.yml", HANDOFF_TREE, HANDOFF_AT_TOP, "aider (lint-cmd and test-cmd it runs)" },
	{ ".continue", HANDOFF_TREE, HANDOFF_AT_TOP, "Continue (MCP servers)" },
	{ ".roo", HANDOFF_TREE, HANDOFF_AT_TOP, "Roo Code (MCP servers)" },
	{ ".kiro", HANDOFF_TREE, HANDOFF_AT_TOP, "Kiro (hooks, MCP servers)" },
	{ ".qwen", HANDOFF_TREE, HANDOFF_AT_TOP, "Qwen Code (MCP servers)" },
	{ ".amazonq", HANDOFF_TREE, HANDOFF_AT_TOP, "Amazon Q (MCP servers)" },
	{ "crush.json", HANDOFF_TREE, HANDOFF_AT_TOP, "Crush (MCP servers)" },
	{ ".crush.json", HANDOFF_TREE, HANDOFF_AT_TOP, "Crush (MCP servers)" },
	{ ".kilocode", HANDOFF_TREE, HANDOFF_AT_TOP, "Kilo Code (MCP servers)" },
	/* editors: tasks, launch configurations, extensions' settings */
	{ ".vscode", HANDOFF_TREE, HANDOFF_AT_TOP, "VS Code" },
	{ ".idea", HANDOFF_TREE, HANDOFF_AT_TOP, "JetBrains IDEs" },
	{ ".zed", HANDOFF_TREE, HANDOFF_AT_TOP, "Zed" },
	{ ".devcontainer", HANDOFF_TREE, HANDOFF_AT_TOP, "dev containers (postCreateCommand)" },
	{ ".devcontainer.json", HANDOFF_TREE, HANDOFF_AT_TOP, "dev containers (postCreateCommand)" },
	/* environment tools: run as the shell enters the directory */
	{ ".envrc", HANDOFF_TREE, HANDOFF_AT_TOP, "direnv, with what it sources and puts on PATH" },
	{ "mise.toml", HANDOFF_TREE, HANDOFF_AT_TOP, "mise (tasks, hooks, env)" },
	{ ".mise.toml", HANDOFF_TREE, HANDOFF_AT_TOP, "mise" },
	{ "mise.local.toml", HANDOFF_TREE, HANDOFF_AT_TOP, "mise" },
	{ ".mise.local.toml", HANDOFF_TREE, HANDOFF_AT_TOP, "mise" },
	{ ".mise", HANDOFF_TREE, HANDOFF_AT_TOP, "mise" },
	{ ".config/mise", HANDOFF_TREE, HANDOFF_AT_TOP, "mise" },
	{ ".config/mise.toml", HANDOFF_TREE, HANDOFF_AT_TOP, "mise" },
	{ ".pre-commit-config.yaml", HANDOFF_TREE, HANDOFF_AT_TOP, "pre-commit (the hooks it installs)" },
	/* toolchain selectors: a shell prompt that shows the version
	 * (starship's, powerlevel10k's) runs the toolchain they name, a
	 * path in the workspace among them, as the shell enters it */
	{ "rust-toolchain.toml", HANDOFF_TREE, HANDOFF_AT_TOP, "rustup (a toolchain path, run for every rustc and cargo)" },
	{ "rust-toolchain", HANDOFF_TREE, HANDOFF_AT_TOP, "rustup (a toolchain path, run for every rustc and cargo)" },
	{ ".tool-versions", HANDOFF_TREE, HANDOFF_AT_TOP, "asdf and mise (a path: version, run by every shim)" },
	/* git, in every git directory */
	{ "config", HANDOFF_CONFIG, HANDOFF_IN_GITDIR, "git (core.fsmonitor, aliases, drivers...)" },
	{ "config.worktree", HANDOFF_CONFIG, HANDOFF_IN_GITDIR, "git (a worktree's own settings)" },
	{ "hooks", HANDOFF_HOOKS, HANDOFF_IN_GITDIR, "git hooks" },
	{ "info/attributes", HANDOFF_TREE, HANDOFF_IN_GITDIR, "git (filter, diff and merge drivers)" },
	{ "commondir", HANDOFF_POINTER, HANDOFF_IN_GITDIR, "git (where the config and hooks are)" },
	/* A rebase or cherry-pick stopped midway: git rebase --continue runs
	 * its todo's exec lines. Not rebase-apply/ (git am, git rebase
	 * --apply), whose patches name no command. */
	{ "rebase-merge", HANDOFF_SEQUENCE, HANDOFF_IN_GITDIR, "git rebase --continue (exec lines, strategy)" },
	{ "sequencer", HANDOFF_SEQUENCE, HANDOFF_IN_GITDIR, "git cherry-pick or revert --continue" },
};
const size_t handoff_table_len = ARRAY_SIZE(handoff_table);

bool handoff_hook_runs(const char *name)
{
	return !str_has_suffix(name, ".sample");
}

const char *handoff_kind_name(enum handoff_kind k)
{
	switch (k) {
	case HANDOFF_TREE:
		return "tree";
	case HANDOFF_CONFIG:
		return "git config";
	case HANDOFF_HOOKS:
		return "hooks";
	case HANDOFF_POINTER:
		return "git pointer";
	case HANDOFF_SEQUENCE:
		return "git sequence";
	}
	return "unknown";
}

bool handoff_todo_runs(const char *text, size_t n)
{
	for (size_t i = 0; i < n;) {
		const char *line = text + i, *end = memchr(line, '\n', n - i);
		size_t len = end ? (size_t)(end - line) : n - i;
		i += len + 1;
		size_t at = 0;
		while (at < len && (line[at] == ' ' || line[at] == '\t'))
			at++;
		static const char *const execs[] = { "exec", "x" };
		for (size_t k = 0; k < ARRAY_SIZE(execs); k++) {
			size_t m = strlen(execs[k]);
			/* a NUL too ends the command word for git's strcspn */
			if (len - at >= m && memcmp(line + at, execs[k], m) == 0 &&
			    (at + m == len || strchr(" \t\r", line[at + m]) || line[at + m] == '\0'))
				return true;
		}
	}
	return false;
}

bool handoff_strategy_builtin(const char *name)
{
	static const char *const own[] = { "ort", "recursive", "resolve", "octopus", "ours", "subtree" };
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (streq(name, own[i]))
			return true;
	return false;
}

char *handoff_gitfile_target(const char *text, size_t n)
{
	if (strlen(text) != n || !str_has_prefix(text, "gitdir: "))
		return NULL;
	char *v = xstrdup(text + strlen("gitdir: "));
	v[strcspn(v, "\n")] = '\0';
	size_t len = strlen(v);
	while (len && (v[len - 1] == '\r' || v[len - 1] == ' ' || v[len - 1] == '\t'))
		v[--len] = '\0';
	return v;
}

/* ---------------------------------------------------------------------
 * Sets of hand-offs
 * ------------------------------------------------------------------ */

void handoffs_add(struct handoffs *rs, char *path, enum handoff_kind kind)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 32;
		rs->v = xreallocarray(rs->v, rs->cap, sizeof(*rs->v));
	}
	rs->v[rs->n++] = (struct handoff){ .path = path, .kind = kind };
}

void handoffs_free(struct handoffs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].path);
	free(rs->v);
	strv_free(rs->unguarded);
	*rs = (struct handoffs){ 0 };
}

static int handoff_cmp(const void *a, const void *b)
{
	const struct handoff *x = a, *y = b;
	int c = path_cmp(x->path, y->path);
	if (c)
		return c;
	/* the strictest first: a tree keeps every change */
	return (int)x->kind - (int)y->kind;
}

const struct handoff *handoffs_find(const struct handoffs *rs, const char *path)
{
	size_t lo = 0, hi = rs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = path_cmp(rs->v[mid].path, path);
		if (c == 0) {
			while (mid > 0 && streq(rs->v[mid - 1].path, path))
				mid--;
			return &rs->v[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether a root above r (a tree, or a hooks directory) already keeps it. */
static bool handoffs_covered(const struct handoffs *rs, const struct handoff *r)
{
	_cleanup_free_ char *prefix = xstrdup(r->path);
	for (char *slash = strrchr(prefix, '/'); slash; slash = strrchr(prefix, '/')) {
		*slash = '\0';
		const struct handoff *a = handoffs_find(rs, prefix);
		if (!a)
			continue;
		if (a->kind == HANDOFF_TREE)
			return true;
		/* a hooks directory keeps all but its samples */
		if (a->kind == HANDOFF_HOOKS && handoff_hook_runs(r->path + strlen(prefix) + 1))
			return true;
	}
	return false;
}

void handoffs_normalize(struct handoffs *rs)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof(*rs->v), handoff_cmp);
	size_t k = 0;
	for (size_t i = 0; i < rs->n; i++) {
		/* one entry per path: the strictest kind, sorted first */
		if (k && streq(rs->v[k - 1].path, rs->v[i].path)) {
			free(rs->v[i].path);
			continue;
		}
		rs->v[k++] = rs->v[i];
	}
	rs->n = k;
	bool *drop = xcalloc(rs->n, sizeof(bool));
	for (size_t i = 0; i < rs->n; i++)
		drop[i] = handoffs_covered(rs, &rs->v[i]);
	k = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (drop[i])
			free(rs->v[i].path);
		else
			rs->v[k++] = rs->v[i];
	}
	rs->n = k;
	free(drop);
}

int handoff_relpath_valid(const char *rel)
{
	return str_has_control(rel) ? -EINVAL : handoff_relpath_shape(rel);
}

int handoff_relpath_shape(const char *rel)
{
	if (str_empty(rel) || rel[0] == '/')
		return -EINVAL;
	for (const char *p = rel;;) {
		const char *end = str_chrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* ---------------------------------------------------------------------
 * Repositories: where they are in the workspace
 * ------------------------------------------------------------------ */

void handoff_repos_add(struct handoff_repos *r, const char *worktree, unsigned char type)
{
	r->v = xgrow(r->v, r->n, sizeof(*r->v));
	r->v[r->n++] = (struct handoff_repo){ .worktree = xstrdup(worktree), .type = type };
}

void handoff_repos_free(struct handoff_repos *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].worktree);
	free(r->v);
	strv_free(r->unsearchable);
	*r = (struct handoff_repos){ 0 };
}

void gitconfig_vetted_free(struct gitconfig_vetted *v)
{
	if (!v)
		return;
	free(v->text);
	strv_free(v->dropped);
	*v = (struct gitconfig_vetted){ 0 };
}
