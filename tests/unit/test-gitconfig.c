/* gitconfig: git's config syntax read as git reads it (checked against
 * the git on this machine, which must be there), each refusal with its
 * line, the spans that remove one entry each, the table of inert keys
 * both ways, and the vetting of a config a run left behind: added
 * settings dropped, removed or reordered ones restored, and the result
 * read back (by this parser and by git) as base's settings with now's
 * inert ones. */
#include "handoff/gitconfig.h"

#include <sys/wait.h>

#include "lib/util.h"
#include "tests/tap.h"

/* The entries as "name=value" lines, "name" for a key alone. */
static char *render(const struct gitconfig *c)
{
	char *out = xstrdup("");
	for (size_t i = 0; i < c->n; i++) {
		_cleanup_free_ char *name = gitconfig_entry_name(&c->v[i]);
		char *next = xasprintf("%s%s%s%s\n", out, name, c->v[i].value ? "=" : "",
				       c->v[i].value ? c->v[i].value : "");
		free(out);
		out = next;
	}
	return out;
}

static char *render_text(const char *text, size_t n, int *ret_r)
{
	struct gitconfig c;
	*ret_r = gitconfig_parse(text, n, &c, NULL);
	if (*ret_r < 0)
		return NULL;
	char *s = render(&c);
	gitconfig_free(&c);
	return s;
}

/* ---------------------------------------------------------------------
 * git itself, for the differential checks
 * ------------------------------------------------------------------ */

static char git_dir[] = "/tmp/test-gitconfig.XXXXXX";

static void git_setup(void)
{
	if (!mkdtemp(git_dir)) {
		printf("Bail out! mkdtemp: %m\n");
		exit(1);
	}
	_cleanup_free_ char *cmd = xasprintf("cd %s && git --version >/dev/null 2>&1", git_dir);
	int st = system(cmd);
	/* Not a skip: the differential checks are what show the parser is
	 * git's, and git is a build dependency of the tests. */
	if (!ok(st == 0, "git --version runs (git is needed for the differential checks)")) {
		tap_done();
		exit(1);
	}
}

static void git_teardown(void)
{
	_cleanup_free_ char *f = xasprintf("%s/config", git_dir);
	unlink(f);
	rmdir(git_dir);
}

/* What `git config --list` makes of text, rendered as render() does;
 * NULL when git refuses it. */
static char *git_list(const char *text, size_t n)
{
	_cleanup_free_ char *path = xasprintf("%s/config", git_dir);
	FILE *f = fopen(path, "we");
	if (!f || fwrite(text, 1, n, f) != n || fclose(f) != 0) {
		diag("cannot write %s: %m", path);
		return NULL;
	}
	_cleanup_free_ char *cmd = xasprintf("cd %s && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=%s "
					     "git config -z --file config --list --no-includes 2>/dev/null",
					     git_dir, git_dir);
	FILE *p = popen(cmd, "re");
	if (!p)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = xmalloc(cap);
	size_t got;
	while ((got = fread(buf + len, 1, cap - len, p)) > 0) {
		len += got;
		if (len == cap)
			buf = xrealloc(buf, cap *= 2);
	}
	int st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		return NULL;
	}
	/* -z: "name\nvalue\0", or "name\0" for a key alone */
	char *out = xstrdup("");
	for (size_t i = 0; i < len;) {
		size_t end = i;
		while (end < len && buf[end])
			end++;
		char *item = xstrndup(buf + i, end - i);
		char *nl = strchr(item, '\n');
		if (nl)
			*nl = '=';
		char *next = xasprintf("%s%s\n", out, item);
		free(item);
		free(out);
		out = next;
		i = end + 1;
	}
	free(buf);
	return out;
}

/* ---------------------------------------------------------------------
 * Syntax
 * ------------------------------------------------------------------ */

#define T(s) s, sizeof(s) - 1

static const struct sample {
	const char *what;
	const char *text;
	size_t n;
	const char *want;
} samples[] = {
	{ "a section and keys", T("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"),
	  "core.repositoryformatversion=0\ncore.bare=false\n" },
	{ "a UTF-8 byte order mark first", T("\xef\xbb\xbf[core]\n\tbare = true\n"), "core.bare=true\n" },
	{ "# and ; comments", T("# one\n; two\n[a] # three\n\tk = v ; four\n  # five\n"), "a.k=v\n" },
	{ "a comment does not continue", T("[a]\n# x \\\nk = v\n"), "a.k=v\n" },
	{ "subsection case kept, \\\" and \\\\", T("[Remote \"Or\\\"ig\\\\in\"]\n\tURL = x\n"),
	  "remote.Or\"ig\\in.url=x\n" },
	{ "any escape in a subsection is the character", T("[a \"x\\yz\"]\nk = 1\n"), "a.xyz.k=1\n" },
	{ "blanks before the subsection", T("[a \t \"s p\"]\nk = 1\n"), "a.s p.k=1\n" },
	{ "an empty subsection", T("[a \"\"]\nk = 1\n"), "a..k=1\n" },
	{ "deprecated [section.subsection]: lowercased", T("[Branch.Main]\n\tRemote = o\n"), "branch.main.remote=o\n" },
	{ "a deeper dotted subsection", T("[a.b.c]\nk = 1\n"), "a.b.c.k=1\n" },
	{ "names without regard to case", T("[CoRe]\n\tBaRe = TRUE\n"), "core.bare=TRUE\n" },
	{ "a key alone", T("[core]\n\tbare\n\tfilemode\t\n"), "core.bare\ncore.filemode\n" },
	{ "a key alone at the end of the file", T("[core]\n\tbare"), "core.bare\n" },
	{ "an empty value", T("[a]\nk =\nj = \"\"\n"), "a.k=\na.j=\n" },
	{ "quotes", T("[a]\nk = \"a b\"  c \nj = x\"y\"z\n"), "a.k=a b  c\na.j=xyz\n" },
	{ "escapes", T("[a]\nk = 1\\n2\\t3\\b4\\\"5\\\\6\n"), "a.k=1\n2\t3\b4\"5\\6\n" },
	{ "a continuation", T("[a]\nk = one \\\n  two\nj = x\n"), "a.k=one   two\na.j=x\n" },
	{ "a continuation inside quotes", T("[a]\nk = \"on\\\ne\"\n"), "a.k=one\n" },
	{ "a comment after the value", T("[a]\nk = v # c\nj = \"v # not\" ; c\nl = v;c\n"),
	  "a.k=v\na.j=v # not\na.l=v\n" },
	{ "trailing blanks dropped, inner spaces kept", T("[a]\nk =   x  y  \t \n"), "a.k=x  y\n" },
	{ "tabs inside quotes kept", T("[a]\nk = \"x\ty\"\n"), "a.k=x\ty\n" },
	{ "a key on its header's line", T("[core] bare = true\n[alias]x = !evil\n"),
	  "core.bare=true\nalias.x=!evil\n" },
	{ "headers one after another", T("[a] [b]k\n"), "b.k\n" },
	{ "CRLF line ends", T("[core]\r\n\tbare = true\r\n\tk\r\n[x \"y\"]\r\nz = \"q\" \r\n"),
	  "core.bare=true\ncore.k\nx.y.z=q\n" },
	{ "a CRLF continuation", T("[a]\r\nk = x\\\r\ny\r\n"), "a.k=xy\n" },
	{ "a lone CR is a blank", T("[a]\nk = v\r\r\n"), "a.k=v\n" },
	{ "bytes above 127 in values and subsections", T("[a \"\xc3\xa9\"]\nk = \xe2\x82\xac\n"),
	  "a.\xc3\xa9.k=\xe2\x82\xac\n" },
	{ "a value of only a quoted blank", T("[a]\nk = \" \"\n"), "a.k= \n" },
	{ "keys with digits and dashes", T("[a]\nk-1 = x\n"), "a.k-1=x\n" },
	{ "no newline at the end", T("[a]\nk = v"), "a.k=v\n" },
	{ "an empty file", T(""), "" },
	{ "only comments and blanks", T("\n  \n# x\n"), "" },
	{ "multi-valued keys in order", T("[remote \"o\"]\n\tfetch = a\n\tfetch = b\n[remote \"o\"]\n\tfetch = c\n"),
	  "remote.o.fetch=a\nremote.o.fetch=b\nremote.o.fetch=c\n" },
	{ "a semicolon-started comment mid-line after a key alone is no comment", T("[a]\nk\n;x\n"), "a.k\n" },
};

static void test_syntax(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		const struct sample *s = &samples[i];
		int r;
		_cleanup_free_ char *got = render_text(s->text, s->n, &r);
		if (!ok(r == 0, "%s: parses", s->what)) {
			diag("  error %d", r);
			continue;
		}
		is_str(got, s->want, "%s: entries", s->what);
		_cleanup_free_ char *git = git_list(s->text, s->n);
		is_str(git, s->want, "%s: git sees the same", s->what);
	}
}

static const struct refusal {
	const char *what;
	const char *text;
	size_t n;
	unsigned line;
	bool git_takes;	/* git reads it; refused here on purpose */
} refusals[] = {
	{ "a header left open at a line end", T("[core\n"), 1, false },
	{ "a header left open at the end", T("[a]\nk = v\n[core"), 3, false },
	{ "a bad character in a section name", T("[co_re]\n"), 1, false },
	{ "an empty header", T("[]\n"), 1, false },
	{ "a subsection left open", T("[a \"b]\n"), 1, false },
	{ "a blank after the subsection", T("[a \"b\" ]\n"), 1, false },
	{ "text after the subsection", T("[a \"b\"x]\n"), 1, false },
	{ "no quote for the subsection", T("[a b]\n"), 1, false },
	{ "a bad character in a key", T("[a]\nk_y = 1\n"), 2, false },
	{ "a key starting with a digit", T("[a]\n1k = 1\n"), 2, false },
	{ "a line starting with =", T("[a]\n= v\n"), 2, false },
	{ "a key alone, then a comment", T("[a]\nk # c\n"), 2, false },
	{ "a key alone, then ;", T("[a]\nk ; c\n"), 2, false },
	{ "a key, then a lone CR", T("[a]\nk\r= v\n"), 2, false },
	{ "an unterminated quote", T("[a]\nk = \"abc\nj = 1\n"), 2, false },
	{ "an unterminated quote after a continuation", T("[a]\nk = \"a\\\nb\n"), 3, false },
	{ "an unterminated quote at the end", T("[a]\nk = \"abc"), 2, false },
	{ "an invalid escape", T("[a]\n\n\tk = a\\qb\n"), 3, false },
	{ "a backslash and a blank", T("[a]\nk = a\\ \n"), 2, false },
	{ "part of a byte order mark", T("\xef\xbb[a]\n"), 1, false },
	{ "a bad line after good ones", T("[a]\nk = 1\nj = 2\n[b\n"), 4, false },
	/* git takes these, differently from this parser's caller's needs */
	{ "a NUL byte in a value", T("[a]\nk = v\0x\n"), 2, true },
	{ "a NUL byte in a comment", T("[a]\nk = v\n# \0\n"), 3, true },
	{ "a key before any section", T("k = v\n"), 1, true },
	{ "[a.b \"c\"]", T("[a.b \"c\"]\nk = 1\n"), 1, true },
	{ "[.a]", T("[.a]\nk = 1\n"), 1, true },
	{ "[a.]", T("[a.]\nk = 1\n"), 1, true },
	{ "[a..b]", T("[a..b]\nk = 1\n"), 1, true },
	{ "[ \"x\"] (no section name)", T("[ \"x\"]\nk = 1\n"), 1, true },
	{ "a control character in a subsection", T("[a \"x\x01y\"]\nk = 1\n"), 1, true },
	{ "an unquoted tab inside a value (git < 2.45: a space)", T("[a]\nk = x\ty\n"), 2, true },
	{ "a tab before a quote inside a value", T("[a]\nk = x\t\"y\"\n"), 2, true },
	{ "a tab before a continuation", T("[a]\nk = x\t\\\ny\n"), 2, true },
	{ "a lone CR inside a value", T("[a]\nk = x\ry\n"), 2, true },
	{ "a backslash as the last byte", T("[a]\nk = v\\"), 2, true },
};

static void test_refusals(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(refusals); i++) {
		const struct refusal *s = &refusals[i];
		struct gitconfig c = { .n = 99 };
		unsigned line = 0;
		int r = gitconfig_parse(s->text, s->n, &c, &line);
		is_int(r, -EBADMSG, "%s: -EBADMSG", s->what);
		is_int(line, s->line, "%s: on line %u", s->what, s->line);
		ok(c.n == 0 && c.v == NULL, "%s: nothing returned", s->what);
		_cleanup_free_ char *git = git_list(s->text, s->n);
		if (s->git_takes)
			ok(git != NULL, "%s: git takes it (refused here on purpose)", s->what);
		else
			ok(git == NULL, "%s: git refuses it too", s->what);
	}
	unsigned line = 7;
	struct gitconfig c;
	ok(gitconfig_parse(T("[a]\nk = 1\n"), &c, &line) == 0 && line == 0, "a good parse sets the bad line to 0");
	gitconfig_free(&c);
	ok(gitconfig_parse(T("[a"), &c, NULL) == -EBADMSG, "the bad line may be NULL");
}

/* Removing one entry's span leaves a text that parses to the others. */
static void test_spans(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		const struct sample *s = &samples[i];
		struct gitconfig c;
		if (gitconfig_parse(s->text, s->n, &c, NULL) < 0)
			continue;
		bool good = true;
		for (size_t k = 0; k < c.n && good; k++) {
			const struct gitconfig_entry *e = &c.v[k];
			good = e->start < e->end && e->end <= s->n;
			if (!good)
				break;
			size_t n = s->n - (e->end - e->start);
			char *t = xmalloc(n + 1);
			memcpy(t, s->text, e->start);
			memcpy(t + e->start, s->text + e->end, s->n - e->end);
			struct gitconfig d;
			good = gitconfig_parse(t, n, &d, NULL) == 0 && d.n == c.n - 1;
			for (size_t m = 0; good && m < d.n; m++) {
				const struct gitconfig_entry *a = &c.v[m < k ? m : m + 1], *b = &d.v[m];
				_cleanup_free_ char *na = gitconfig_entry_name(a), *nb = gitconfig_entry_name(b);
				good = streq(na, nb) && (a->value && b->value ? streq(a->value, b->value) : a->value == b->value);
			}
			if (!good)
				diag("  removing entry %zu leaves '%.*s'", k, (int)n, t);
			gitconfig_free(&d);
			free(t);
		}
		ok(good, "%s: each entry's span removes it and nothing else", s->what);
		gitconfig_free(&c);
	}

	/* the exact spans */
	struct gitconfig c;
	const char text[] = "[core] bare = true\r\n\tk = a\\\n b\n[x]\n  j\n";
	ok(gitconfig_parse(T(text), &c, NULL) == 0 && c.n == 3, "three entries");
	if (c.n == 3) {
		char *span[3];
		for (size_t k = 0; k < 3; k++)
			span[k] = xstrndup(text + c.v[k].start, c.v[k].end - c.v[k].start);
		is_str(span[0], "bare = true", "a key on its header's line: the key to the line end, not the CRLF");
		is_str(span[1], "\tk = a\\\n b\n",
		       "a key on its own line: the whole line with its continuation and newline");
		is_str(span[2], "  j\n", "a key alone: its line");
		for (size_t k = 0; k < 3; k++)
			free(span[k]);
		is_int(c.v[0].line, 1, "line of the first");
		is_int(c.v[1].line, 2, "line of the second");
		is_int(c.v[2].line, 5, "line of the third (after a continuation)");
	}
	gitconfig_free(&c);
}

static void test_get_includes(void)
{
	struct gitconfig c;
	const char text[] = "[core]\n\thooksPath = a\n[core \"x\"]\n\thookspath = b\n[CORE]\n\tHOOKSPATH = c\n"
			    "[include]\n\tpath = one\n\tpath\n[include \"x\"]\n\tpath = not\n"
			    "[includeIf \"gitdir:~/w/\"]\n\tpath = two\n[includeif \"\"]\n\tpath = three\n"
			    "[includeif]\n\tpath = not2\n[include] path = four\n";
	ok(gitconfig_parse(T(text), &c, NULL) == 0, "parses");
	is_str(gitconfig_get(&c, "core", "hooksPath"), "c", "gitconfig_get: the last value, without a subsection");
	ok(gitconfig_get(&c, "core", "fsmonitor") == NULL, "gitconfig_get: NULL when none");
	char **inc = gitconfig_includes(&c);
	size_t n = strv_length(inc);
	ok(n == 4 && streq(inc[0], "one") && streq(inc[1], "two") && streq(inc[2], "three") && streq(inc[3], "four"),
	   "gitconfig_includes: include.path and every includeIf, in order; not [include \"x\"], [includeif], a key alone");
	if (n != 4)
		for (size_t i = 0; i < n; i++)
			diag("  %s", inc[i]);
	strv_free(inc);
	gitconfig_free(&c);

	ok(gitconfig_parse(T("[core]\n\thookspath = x\n\thookspath\n"), &c, NULL) == 0, "parses");
	ok(gitconfig_get(&c, "core", "hookspath") == NULL, "gitconfig_get: a key alone last is no value");
	gitconfig_free(&c);
}

/* ---------------------------------------------------------------------
 * The table of inert keys
 * ------------------------------------------------------------------ */

struct key {
	const char *section, *subsection, *key;
	const char *value;	/* NULL: "x" */
};


static const struct key inert[] = {
	{ "core", NULL, "repositoryformatversion", NULL }, { "core", NULL, "filemode", NULL }, { "core", NULL, "bare", NULL },
	{ "core", NULL, "logallrefupdates", NULL }, { "core", NULL, "ignorecase", NULL }, { "core", NULL, "precomposeunicode", NULL },
	{ "core", NULL, "symlinks", NULL }, { "core", NULL, "sparsecheckout", NULL },
	{ "core", NULL, "sparsecheckoutcone", NULL }, { "core", NULL, "autocrlf", NULL }, { "core", NULL, "eol", NULL },
	{ "core", NULL, "quotepath", NULL }, { "extensions", NULL, "objectformat", NULL },
	{ "extensions", NULL, "worktreeconfig", NULL }, { "extensions", NULL, "anything", NULL },
	{ "remote", "origin", "url", "https://example.org/r.git" },
	{ "remote", "origin", "url", "http://example.org/r" }, { "remote", "o", "url", "ssh://h/r" },
	{ "remote", "o", "url", "git://h/r" }, { "remote", "o", "url", "git+ssh://h/r" },
	{ "remote", "o", "url", "git@github.com:o/r.git" }, { "remote", "o", "url", "host:r" },
	{ "remote", "origin", "pushurl", "ssh://git@h:22/r" }, { "remote", "origin", "fetch", NULL },
	{ "remote", "origin", "push", NULL }, { "remote", "origin", "tagopt", NULL }, { "remote", "origin", "mirror", NULL },
	{ "remote", "origin", "prune", NULL }, { "remote", "origin", "prunetags", NULL }, { "remote", "origin", "promisor", NULL },
	{ "remote", "origin", "partialclonefilter", NULL }, { "remote", "origin", "skipdefaultupdate", NULL },
	{ "remote", "origin", "skipfetchall", NULL }, { "branch", "main", "remote", NULL }, { "branch", "main", "pushremote", NULL },
	{ "branch", "main", "merge", NULL }, { "branch", "main", "rebase", NULL }, { "branch", "main", "description", NULL },
	{ "user", NULL, "name", NULL }, { "user", NULL, "email", NULL }, { "author", NULL, "name", NULL }, { "author", NULL, "email", NULL },
	{ "committer", NULL, "name", NULL }, { "committer", NULL, "email", NULL }, { "init", NULL, "defaultbranch", NULL },
	{ "submodule", "sm", "url", NULL }, { "submodule", "sm", "active", NULL }, { "submodule", "sm", "branch", NULL },
	{ "submodule", "sm", "shallow", NULL }, { "submodule", "sm", "fetchrecursesubmodules", NULL },
	{ "submodule", "sm", "ignore", NULL }, { "submodule", NULL, "active", NULL }, { "pull", NULL, "rebase", NULL },
	{ "pull", NULL, "ff", NULL }, { "push", NULL, "default", NULL }, { "push", NULL, "autosetupremote", NULL },
	{ "fetch", NULL, "prune", NULL }, { "index", NULL, "version", NULL }, { "index", NULL, "sparse", NULL },
	{ "receive", NULL, "denynonfastforwards", NULL }, { "maintenance", NULL, "auto", NULL },
	{ "maintenance", NULL, "strategy", NULL }, { "lfs", NULL, "repositoryformatversion", NULL },
	{ "Core", NULL, "Bare", NULL }, { "REMOTE", "Origin", "URL", "https://h/r" },
};

static const struct key dangerous[] = {
	{ "core", NULL, "fsmonitor", NULL }, { "core", NULL, "hookspath", NULL }, { "core", NULL, "sshcommand", NULL },
	{ "core", NULL, "pager", NULL }, { "core", NULL, "editor", NULL }, { "core", NULL, "askpass", NULL },
	{ "core", NULL, "gitproxy", NULL }, { "core", NULL, "attributesfile", NULL }, { "core", NULL, "excludesfile", NULL },
	{ "core", NULL, "sharedrepository", NULL }, { "include", NULL, "path", NULL }, { "includeif", "gitdir:~/", "path", NULL },
	{ "remote", "origin", "uploadpack", NULL }, { "remote", "origin", "receivepack", NULL }, { "remote", "origin", "vcs", NULL },
	{ "remote", "origin", "proxy", NULL }, { "submodule", "sm", "update", NULL }, { "alias", NULL, "x", NULL },
	{ "filter", "lfs", "process", NULL }, { "filter", "lfs", "smudge", NULL }, { "diff", "x", "command", NULL },
	{ "diff", "x", "textconv", NULL }, { "merge", "x", "driver", NULL }, { "credential", NULL, "helper", NULL },
	{ "credential", "https://x", "helper", NULL }, { "gpg", NULL, "program", NULL }, { "gpg", "ssh", "program", NULL },
	{ "sequence", NULL, "editor", NULL }, { "protocol", "ext", "allow", NULL }, { "protocol", NULL, "allow", NULL },
	{ "http", NULL, "proxy", NULL }, { "http", "https://x", "extraheader", NULL }, { "url", "ext::sh -c x", "insteadof", NULL },
	{ "uploadpack", NULL, "packobjectshook", NULL }, { "receive", NULL, "procreceiverefs", NULL },
	{ "receive", NULL, "denycurrentbranch", NULL }, { "safe", NULL, "directory", NULL },
	/* what makes the user's git read or write outside the repository,
	 * or run a program it names; core.worktree is inert only where the
	 * guard says it is a submodule's (test_worktree) */
	{ "core", NULL, "worktree", "/home/u/private" }, { "core", NULL, "worktree", "../../sub" },
	{ "diff", NULL, "external", NULL }, { "mergetool", "x", "cmd", NULL }, { "difftool", "x", "cmd", NULL },
	{ "pager", NULL, "log", NULL }, { "interactive", NULL, "difffilter", NULL }, { "gpg", "x509", "program", NULL },
	{ "core", NULL, "hookspath", "/home/u/hooks" }, { "web", NULL, "browser", NULL },
	/* a remote that is no network URL: a push runs its hooks, or git
	 * runs a helper from PATH */
	{ "remote", "origin", "url", "../evil.git" }, { "remote", "origin", "url", "/abs/evil.git" },
	{ "remote", "origin", "url", "evil.git" }, { "remote", "origin", "url", "file:///tmp/evil.git" },
	{ "remote", "origin", "url", "ext::sh -c evil" }, { "remote", "origin", "url", "fd::3" },
	{ "remote", "origin", "url", "evil::https://h/r" }, { "remote", "origin", "url", "evil://h/r" },
	{ "remote", "origin", "url", "-oProxyCommand=evil:r" }, { "remote", "origin", "url", "ssh://-oX/r" },
	{ "remote", "origin", "url", "./a:b" }, { "remote", "origin", "url", "" },
	{ "remote", "origin", "pushurl", "./evil.git" },
	/* the right key, the wrong shape */
	{ "remote", NULL, "url", NULL }, { "core", "x", "bare", NULL }, { "extensions", "x", "objectformat", NULL },
	{ "user", "x", "name", NULL }, { "submodule", NULL, "url", NULL },
};

static char *render_key(const struct key *k)
{
	return k->subsection ? xasprintf("%s.%s.%s", k->section, k->subsection, k->key)
			     : xasprintf("%s.%s", k->section, k->key);
}

static char *header_for(const struct key *k, const char *value)
{
	return k->subsection ? xasprintf("[%s \"%s\"]\n\t%s = \"%s\"\n", k->section, k->subsection, k->key, value)
			     : xasprintf("[%s]\n\t%s = \"%s\"\n", k->section, k->key, value);
}

static const char init_config[] = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
				   "\tbare = false\n\tlogallrefupdates = true\n";

static void test_allowlist(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(inert); i++) {
		_cleanup_free_ char *name = render_key(&inert[i]);
		const char *value = inert[i].value ? inert[i].value : "x";
		ok(gitconfig_inert(inert[i].section, inert[i].subsection, inert[i].key, value, NULL), "%s = %s is inert", name,
		   value);
		_cleanup_free_ char *add = header_for(&inert[i], value);
		_cleanup_free_ char *now = xasprintf("%s%s", init_config, add);
		struct gitconfig_vetted v;
		ok(gitconfig_vet(T(init_config), now, strlen(now), NULL, &v) == 0 && v.keep && !v.dropped[0],
		   "%s added by a run: kept", name);
		gitconfig_vetted_free(&v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(dangerous); i++) {
		_cleanup_free_ char *name = render_key(&dangerous[i]);
		const char *value = dangerous[i].value ? dangerous[i].value : "evil";
		ok(!gitconfig_inert(dangerous[i].section, dangerous[i].subsection, dangerous[i].key, value, NULL),
		   "%s = %s is not inert", name, value);
		_cleanup_free_ char *add = header_for(&dangerous[i], value);
		_cleanup_free_ char *now = xasprintf("%s%s", init_config, add);
		struct gitconfig_vetted v;
		int r = gitconfig_vet(T(init_config), now, strlen(now), NULL, &v);
		/* the header stays, empty: only the entry goes */
		const char *hdr_end = strchr(add, '\n') + 1;
		_cleanup_free_ char *want = xasprintf("%s%.*s", init_config, (int)(hdr_end - add), add);
		ok(r == 0 && !v.keep && v.text && streq(v.text, want) && strv_length(v.dropped) == 1,
		   "%s added by a run: dropped, the rest byte for byte", name);
		/* ok(), not is_str(): gcc -O1 takes name for NULL on is_str's
		 * other branch and warns */
		if (r == 0 && v.dropped[0] && !ok(streq(v.dropped[0], name), "%s: named as dropped", name))
			diag("  got '%s'", v.dropped[0]);
		gitconfig_vetted_free(&v);
	}
}

static bool says_yes(void *data, const char *value)
{
	(void)data;
	return streq(value, "../../../sub");
}

/* core.worktree: inert only where the caller says the value is a
 * submodule's own (guard/undo.c's submodule_worktree_ok). */
static void test_worktree(void)
{
	struct gitconfig_where w = { .worktree_ok = says_yes };
	ok(gitconfig_inert("core", NULL, "worktree", "../../../sub", &w), "core.worktree: inert where the guard says so");
	ok(!gitconfig_inert("core", NULL, "worktree", "/home/u/private", &w), "core.worktree: not where it says no");
	ok(!gitconfig_inert("core", NULL, "worktree", NULL, &w), "core.worktree: a key alone is not");
	ok(!gitconfig_inert("core", NULL, "worktree", "../../../sub", NULL), "core.worktree: not without a where");
	const char *now = "[core]\n\tbare = false\n\tworktree = ../../../sub\n";
	struct gitconfig_vetted v;
	ok(gitconfig_vet(NULL, 0, now, strlen(now), &w, &v) == 0 && v.keep, "a submodule's config git wrote: kept");
	gitconfig_vetted_free(&v);
	now = "[core]\n\tbare = false\n\tworktree = /home/u/private\n";
	ok(gitconfig_vet(NULL, 0, now, strlen(now), &w, &v) == 0 && !v.keep && v.dropped[0] &&
	   streq(v.dropped[0], "core.worktree"), "core.worktree naming another tree: dropped, named");
	gitconfig_vetted_free(&v);
}

/* ---------------------------------------------------------------------
 * Vetting
 * ------------------------------------------------------------------ */

/* The entries git sees that are not inert, as lines. */
static char *git_live(const char *text, size_t n)
{
	_cleanup_free_ char *all = git_list(text, n);
	if (!all)
		return NULL;
	char *out = xstrdup("");
	for (char *line = all, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		_cleanup_free_ char *name = xstrndup(line, strcspn(line, "="));
		const char *value = line[strlen(name)] ? line + strlen(name) + 1 : NULL;
		/* section.subsection.key: the first and last dots split it */
		char *first = strchr(name, '.'), *last = strrchr(name, '.');
		bool inert_key = false;
		if (first) {
			*first = '\0';
			if (last != first) {
				*last = '\0';
				inert_key = gitconfig_inert(name, first + 1, last + 1, value, NULL);
			} else {
				inert_key = gitconfig_inert(name, NULL, first + 1, value, NULL);
			}
		}
		if (!inert_key) {
			char *next = xasprintf("%s%s\n", out, line);
			free(out);
			out = next;
		}
	}
	return out;
}

enum outcome { KEEP, ADDED, RESTORED, UNREAD };

static const struct vet_case {
	const char *what;
	const char *base;	/* NULL: a new file */
	const char *now;
	enum outcome outcome;
	const char *want;	/* the text, where it is known exactly */
	const char *dropped;	/* the names, one a line */
} vet_cases[] = {
	{ "untouched", "[core]\n\tbare = false\n[alias]\n\tst = status\n", "[core]\n\tbare = false\n[alias]\n\tst = status\n",
	  KEEP, NULL, "" },
	{ "untouched, although this parser refuses it", "[a]\nk = x\ty\n", "[a]\nk = x\ty\n", KEEP, NULL, "" },
	{ "only inert changes: git remote add, git config user.email", "[core]\n\tbare = false\n[alias]\n\tst = status\n",
	  "[core]\n\tbare = false\n[alias]\n\tst = status\n[remote \"up\"]\n\turl = https://example.org/r.git\n\tfetch = +refs/heads/*:refs/remotes/up/*\n"
	  "[user]\n\temail = me@example.org\n",
	  KEEP, NULL, "" },
	{ "a new file of git init", NULL, init_config, KEEP, NULL, "" },
	{ "git clone of a network URL", NULL,
	  "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:o/r.git\n"
	  "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
	  KEEP, NULL, "" },
	{ "a remote that is a repository in the workspace (a push runs its hooks)", init_config,
	  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
	  "[remote \"origin\"]\n\turl = https://example.org/r.git\n\tpushurl = ./tools/evil.git\n"
	  "[branch \"main\"]\n\tpushremote = origin\n",
	  ADDED, "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
	  "[remote \"origin\"]\n\turl = https://example.org/r.git\n[branch \"main\"]\n\tpushremote = origin\n",
	  "remote.origin.pushurl\n" },
	{ "a new file with a hook path", NULL, "[core]\n\tbare = false\n\thooksPath = .h\n", ADDED, "[core]\n\tbare = false\n",
	  "core.hookspath\n" },
	{ "core.fsmonitor added", init_config, "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
	  "\tfsmonitor = ./x\n\tbare = false\n\tlogallrefupdates = true\n",
	  ADDED, init_config, "core.fsmonitor\n" },
	{ "[alias] x = !evil on a header line", init_config, "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
	  "\tbare = false\n\tlogallrefupdates = true\n[alias] x = !evil\n",
	  ADDED, "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[alias] \n",
	  "alias.x\n" },
	{ "an include added", "[core]\n\tbare = false\n", "[core]\n\tbare = false\n[include]\n\tpath = ../evil.cfg\n",
	  ADDED, "[core]\n\tbare = false\n[include]\n", "include.path\n" },
	{ "an includeIf added", "[core]\n\tbare = false\n", "[includeIf \"gitdir:/\"]\n\tpath = x\n[core]\n\tbare = false\n",
	  ADDED, "[includeIf \"gitdir:/\"]\n[core]\n\tbare = false\n", "includeif.gitdir:/.path\n" },
	{ "an include removed", "[include]\n\tpath = ~/.gitconfig.work\n[core]\n\tbare = false\n", "[core]\n\tbare = false\n",
	  RESTORED, "[core]\n\tbare = false\n[include]\n\tpath = \"~/.gitconfig.work\"\n", "include.path\n" },
	{ "a key reordered", "[alias]\n\ta = log\n\tb = diff\n", "[alias]\n\tb = diff\n\ta = log\n", RESTORED,
	  "[alias]\n[alias]\n\ta = \"log\"\n\tb = \"diff\"\n", "" },
	{ "a multi-valued key: one value added", "[credential]\n\thelper = a\n\thelper = b\n",
	  "[credential]\n\thelper = a\n\thelper = b\n\thelper = !evil\n", ADDED, "[credential]\n\thelper = a\n\thelper = b\n",
	  "credential.helper\n" },
	{ "a multi-valued key: values swapped", "[credential]\n\thelper = a\n\thelper = b\n",
	  "[credential]\n\thelper = b\n\thelper = a\n", RESTORED, "[credential]\n[credential]\n\thelper = \"a\"\n\thelper = \"b\"\n",
	  "credential.helper\n" },
	{ "a multi-valued key: the first removed (b would win alone)", "[credential]\n\thelper = a\n\thelper = b\n",
	  "[credential]\n\thelper = b\n", RESTORED, NULL, "credential.helper\n" },
	{ "a value changed", "[core]\n\tpager = less\n", "[core]\n\tpager = evil\n", RESTORED, NULL, "core.pager\n" },
	{ "a value changed and an inert one too", "[core]\n\tpager = less\n\tbare = false\n[user]\n\tname = A\n",
	  "[core]\n\tpager = evil\n\tbare = true\n[user]\n\tname = B\n", RESTORED,
	  "[core]\n\tbare = true\n[user]\n\tname = B\n[core]\n\tpager = \"less\"\n", "core.pager\n" },
	{ "a planted setting after a comment ending in a backslash", init_config,
	  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false ; \\\n\tfsmonitor = evil\n"
	  "\tlogallrefupdates = true\n",
	  ADDED, "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false ; \\\n"
	  "\tlogallrefupdates = true\n", "core.fsmonitor\n" },
	{ "a planted setting after a quoted #", "[user]\n\tname = A\n",
	  "[user]\n\tname = \"A # \\\" ; \" ; [core] x\n[core] fsmonitor = evil\n", ADDED,
	  "[user]\n\tname = \"A # \\\" ; \" ; [core] x\n[core] \n", "core.fsmonitor\n" },
	{ "a setting hidden in a continuation is part of the value", "[user]\n\tname = A\n",
	  "[user]\n\tname = A \\\n[core] fsmonitor = evil\n", KEEP, NULL, "" },
	{ "a continuation that ends a value before a planted line", "[user]\n\tname = A\n",
	  "[user]\n\tname = A \\\n\n[core]\n\tfsmonitor = evil\n", ADDED, "[user]\n\tname = A \\\n\n[core]\n", "core.fsmonitor\n" },
	{ "values that need quoting restored", "[alias]\n\tx = \"!f() { echo \\\"a\\tb\\\" ; }; f\"\n\ty\n\tz = \\\\\n",
	  "[alias]\n\ty\n", RESTORED, "[alias]\n[alias]\n\tx = \"!f() { echo \\\"a\\tb\\\" ; }; f\"\n\ty\n\tz = \"\\\\\"\n",
	  "alias.x\nalias.z\n" },
	{ "a subsection that needs quoting restored", "[url \"a\\\"b\\\\c\"]\n\tinsteadOf = x\n", "", RESTORED,
	  "[url \"a\\\"b\\\\c\"]\n\tinsteadof = \"x\"\n", "url.a\"b\\c.insteadof\n" },
	{ "restored after a last line without a newline", "[alias]\n\ta = 1\n", "[core]\n\tbare = true # c", RESTORED,
	  "[core]\n\tbare = true # c\n[alias]\n\ta = \"1\"\n", "alias.a\n" },
	{ "a new file that does not parse: removed", NULL, "[core]\n\tbare = true\n[alias\n", UNREAD, NULL, "core.bare\n" },
	{ "a changed file that does not parse: base back", "[core]\n\tbare = false\n",
	  "[core]\n\tbare = false\n\tfsmonitor = x\n\tfsmonitor = y\n[a]\nk = \"open\n", UNREAD, "[core]\n\tbare = false\n",
	  "core.bare\ncore.fsmonitor\n" },
	{ "a base that does not parse: vetted as new", "[core]\n\tpager = x\ty\n[alias]\n\ta = 1\n",
	  "[core]\n\tbare = true\n[alias]\n\ta = 1\n", ADDED, "[core]\n\tbare = true\n[alias]\n", "alias.a\n" },
	{ "a base that does not parse, now only inert", "k = v\n", "[core]\n\tbare = true\n", KEEP, NULL, "" },
	{ "a deprecated header the same as base's quoted one", "[branch \"main\"]\n\tdescription = x\n[alias \"x\"]\n\ty = 1\n",
	  "[branch.main]\n\tdescription = y\n[alias.x]\n\ty = 1\n", KEEP, NULL, "" },
	{ "a subsection's case matters", "[alias \"X\"]\n\ty = 1\n", "[alias \"x\"]\n\ty = 1\n", RESTORED, NULL,
	  "alias.x.y\nalias.X.y\n" },
	{ "a key's case does not", "[Alias]\n\tST = status\n", "[alias]\n\tst = status\n[user]\n\tname = q\n", KEEP, NULL, "" },
	{ "CRLF kept as it is", "[core]\r\n\tbare = false\r\n",
	  "[core]\r\n\tbare = false\r\n\teditor = evil\r\n[remote \"o\"]\r\n\turl = git@h:r\r\n", ADDED,
	  "[core]\r\n\tbare = false\r\n[remote \"o\"]\r\n\turl = git@h:r\r\n", "core.editor\n" },
	{ "an empty base, a removed file's content", "", "[alias]\n\tx = y\n", ADDED, "[alias]\n", "alias.x\n" },
};

static char *lines(char *const *v)
{
	char *out = xstrdup("");
	for (size_t i = 0; v && v[i]; i++) {
		char *next = xasprintf("%s%s\n", out, v[i]);
		free(out);
		out = next;
	}
	return out;
}

static void test_vet(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(vet_cases); i++) {
		const struct vet_case *c = &vet_cases[i];
		size_t bn = c->base ? strlen(c->base) : 0;
		struct gitconfig_vetted v;
		int r = gitconfig_vet(c->base, bn, c->now, strlen(c->now), NULL, &v);
		if (!is_int(r, 0, "%s: vetted", c->what))
			continue;
		_cleanup_free_ char *dropped = lines(v.dropped);
		is_str(dropped, c->dropped, "%s: what is named as dropped", c->what);
		switch (c->outcome) {
		case KEEP:
			ok(v.keep && !v.text, "%s: kept as it is", c->what);
			break;
		case UNREAD:
			ok(!v.keep && v.bad_line > 0, "%s: does not parse (line %u)", c->what, v.bad_line);
			if (c->base)
				ok(v.text && v.n == bn && memcmp(v.text, c->base, bn) == 0, "%s: base comes back", c->what);
			else
				ok(!v.text, "%s: no text: the file goes", c->what);
			break;
		case ADDED:
		case RESTORED:
			ok(!v.keep && v.text && v.bad_line == 0, "%s: a new text", c->what);
			break;
		}
		if (c->want && v.text)
			is_str(v.text, c->want, "%s: the text", c->what);
		/* what the file holds afterwards */
		const char *text = v.keep ? c->now : v.text;
		size_t n = v.keep ? strlen(c->now) : v.n;
		if (!text) {
			gitconfig_vetted_free(&v);
			continue;
		}
		if (!v.keep && c->outcome != UNREAD) {
			ok(strlen(v.text) == v.n, "%s: n is the text's length", c->what);
			struct gitconfig parsed;
			ok(gitconfig_parse(v.text, v.n, &parsed, NULL) == 0, "%s: the text parses", c->what);
			gitconfig_free(&parsed);
			struct gitconfig_vetted again;
			ok(gitconfig_vet(c->base, bn, v.text, v.n, NULL, &again) == 0 && again.keep,
			   "%s: the text vetted against base again is kept", c->what);
			gitconfig_vetted_free(&again);
		}
		/* and by git: base's settings that are not inert, no more
		 * (none where base does not parse) */
		struct gitconfig b;
		bool base_reads = c->base && gitconfig_parse(c->base, bn, &b, NULL) == 0;
		if (base_reads)
			gitconfig_free(&b);
		/* untouched is untouched, whatever git makes of it */
		bool untouched = c->base && streq(c->base, c->now);
		if (!untouched && (c->outcome != UNREAD || base_reads)) {
			_cleanup_free_ char *want_live = base_reads ? git_live(c->base, bn) : xstrdup("");
			_cleanup_free_ char *got_live = git_live(text, n);
			is_str(got_live, want_live, "%s: git sees base's settings that are not inert, no more", c->what);
		}
		gitconfig_vetted_free(&v);
	}

	struct gitconfig_vetted v;
	is_int(gitconfig_vet(NULL, 1, "", 0, NULL, &v), -EINVAL, "a NULL base with a length: -EINVAL");
	ok(gitconfig_vet(NULL, 0, NULL, 0, NULL, &v) == 0 && v.keep, "an empty new file is kept");
	gitconfig_vetted_free(&v);
	gitconfig_vetted_free(NULL);
}

/* A run's config can be as long as it likes: vetting stays fast. */
static void test_vet_large(void)
{
	size_t n_keys = 20000;
	char *base = xstrdup("[alias]\n");
	size_t cap = n_keys * 24 + 64, len = strlen(base);
	base = xrealloc(base, cap);
	char *now = xmalloc(cap);
	for (size_t i = 0; i < n_keys; i++)
		len += (size_t)snprintf(base + len, cap - len, "\tk%zu = %zu\n", i, i);
	/* now: every key in reverse order */
	size_t nl = (size_t)snprintf(now, cap, "[alias]\n");
	for (size_t i = n_keys; i-- > 0;)
		nl += (size_t)snprintf(now + nl, cap - nl, "\tk%zu = %zu\n", i, i);
	unsigned long long t0 = now_usec();
	struct gitconfig_vetted v;
	int r = gitconfig_vet(base, len, now, nl, NULL, &v);
	unsigned long long dt = now_usec() - t0;
	ok(r == 0 && !v.keep && v.text && strv_length(v.dropped) == 0,
	   "20000 keys reordered: restored, each key's values the same (none named)");
	ok(dt < 5000000, "in %llu ms", dt / 1000);
	gitconfig_vetted_free(&v);
	free(base);
	free(now);
}

int main(void)
{
	git_setup();
	test_syntax();
	test_refusals();
	test_spans();
	test_get_includes();
	test_allowlist();
	test_worktree();
	test_vet();
	test_vet_large();
	git_teardown();
	return tap_done();
}
