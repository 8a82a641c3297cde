/* The table of trust hand-offs, and what a policy needs of them. */
#include "policy/handoff.h"

#include <string.h>

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
	/* git, in every git directory */
	{ "config", HANDOFF_CONFIG, HANDOFF_IN_GITDIR, "git (core.fsmonitor, aliases, drivers...)" },
	{ "config.worktree", HANDOFF_CONFIG, HANDOFF_IN_GITDIR, "git (a worktree's own settings)" },
	{ "hooks", HANDOFF_HOOKS, HANDOFF_IN_GITDIR, "git hooks" },
	{ "info/attributes", HANDOFF_TREE, HANDOFF_IN_GITDIR, "git (filter, diff and merge drivers)" },
	{ "commondir", HANDOFF_POINTER, HANDOFF_IN_GITDIR, "git (where the config and hooks are)" },
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
	}
	return "unknown";
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
