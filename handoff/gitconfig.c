#include "handoff/gitconfig.h"

#include <strings.h>

#include "lib/util.h"

/* ---------------------------------------------------------------------
 * The parser. Git's own ctype is ASCII only, and its isspace() is
 * space, \t, \n and \r (not \v or \f): the same here.
 * ------------------------------------------------------------------ */

#define CH_EOF (-1)

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_key_char(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int to_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* A blank that is not a line end: a lone \r is one, as in git, where
 * only \r\n is a line end. */
static bool is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

struct parser {
	const char *text;
	size_t n, i;
	unsigned line;
};

/* The next character as git's get_next_char() sees it, \r\n as \n, and
 * in *ret_len how many bytes it takes. */
static int peek(const struct parser *p, size_t *ret_len)
{
	if (p->i >= p->n) {
		*ret_len = 0;
		return CH_EOF;
	}
	unsigned char c = (unsigned char)p->text[p->i];
	if (c == '\r' && p->i + 1 < p->n && p->text[p->i + 1] == '\n') {
		*ret_len = 2;
		return '\n';
	}
	*ret_len = 1;
	return c;
}

static int next(struct parser *p)
{
	size_t len;
	int c = peek(p, &len);
	p->i += len;
	if (c == '\n')
		p->line++;
	return c;
}

/* A header after its '[': "[section]", "[section "subsection"]" or the
 * deprecated "[section.subsection]". */
static int parse_header(struct parser *p, char **ret_section, char **ret_subsection)
{
	_cleanup_free_ char *name = NULL, *sub = NULL;
	struct text t = { 0 };
	bool extended = false;
	int c;

	for (;;) {
		c = next(p);
		if (c == ']')
			break;
		if (is_blank(c)) {
			extended = true;
			break;
		}
		/* a line end or the file's end inside the brackets, or a
		 * character no name may have */
		if (!is_key_char(c) && c != '.')
			goto bad;
		text_addc(&t, (char)to_lower(c));
	}
	name = text_take(&t);

	if (extended) {
		do
			c = next(p);
		while (is_blank(c));
		if (c != '"')
			goto bad;
		for (;;) {
			c = next(p);
			if (c == '"')
				break;
			if (c == '\\')
				/* any character escapes as itself, as in git */
				c = next(p);
			if (c == CH_EOF || c == '\n')
				goto bad;
			/* Git takes them, but a subsection cannot be written
			 * back with one without doubt (a \r before the \n
			 * of a line end): refused. */
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				goto bad;
			text_addc(&t, (char)c);
		}
		sub = text_take(&t);
		if (next(p) != ']')
			goto bad;
		/* Git reads "[a.b "c"]" as section a, subsection "b.c": a
		 * form nobody writes, refused rather than guessed at. */
		if (!*name || strchr(name, '.'))
			return -EBADMSG;
	} else {
		if (!*name)
			return -EBADMSG;
		char *dot = strchr(name, '.');
		if (dot) {
			/* Git keeps "[a..b]", "[.a]" and "[a.]" as names no
			 * lookup of a section and key can reach: refused. */
			if (dot == name || !dot[1] || strstr(name, "..") || name[strlen(name) - 1] == '.')
				return -EBADMSG;
			*dot = '\0';
			sub = xstrdup(dot + 1);
		}
	}
	*ret_section = TAKE_PTR(name);
	*ret_subsection = TAKE_PTR(sub);
	return 0;
bad:
	free(t.s);
	return -EBADMSG;
}

/* A value after its '=', as git's parse_value() reads it, up to and with
 * the line end that ends it. *ret_line is the line to blame on refusal. */
static int parse_value(struct parser *p, char **ret, size_t *ret_end, unsigned *ret_line)
{
	struct text t = { 0 };
	bool quote = false, comment = false, odd_blank = false;
	size_t blanks = 0;

	for (;;) {
		unsigned line = p->line;
		size_t at = p->i;
		int c = next(p);
		if (c == CH_EOF || c == '\n') {
			if (quote) {
				*ret_line = line;
				goto bad;
			}
			/* blanks before the line end are dropped */
			*ret_end = at;
			break;
		}
		if (comment)
			continue;
		if (is_blank(c) && !quote) {
			/* blanks before the value are dropped, those inside
			 * it kept once something follows them */
			if (t.n) {
				blanks++;
				odd_blank |= c != ' ';
			}
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		if (blanks) {
			/* Git up to 2.44 turns each of them into a space, git
			 * 2.45 on keeps each as it is (f0b8944430): the same
			 * file, two values. Refused unless they are spaces. */
			if (odd_blank) {
				*ret_line = line;
				goto bad;
			}
			for (; blanks; blanks--)
				text_addc(&t, ' ');
		}
		if (c == '\\') {
			c = next(p);
			switch (c) {
			case '\n':
				/* a continuation: the value goes on on the next line */
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				/* an unknown escape; and a backslash at the end of
				 * the file, which git takes as a continuation into
				 * nothing: text appended after it would be read as
				 * part of this value */
				*ret_line = line;
				goto bad;
			}
			text_addc(&t, (char)c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		text_addc(&t, (char)c);
	}
	*ret = text_take(&t);
	return 0;
bad:
	free(t.s);
	return -EBADMSG;
}

static void entry_free(struct gitconfig_entry *e)
{
	free(e->section);
	free(e->subsection);
	free(e->key);
	free(e->value);
}

void gitconfig_free(struct gitconfig *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		entry_free(&c->v[i]);
	free(c->v);
	*c = (struct gitconfig){ 0 };
}

/* Parses into *c, leaving there what was read before a refusal. */
static int parse_into(const char *text, size_t n, struct gitconfig *c, unsigned *ret_bad_line)
{
	struct parser p = { .text = text, .n = n, .line = 1 };
	_cleanup_free_ char *section = NULL, *subsection = NULL;
	unsigned bad_line = 0;
	size_t line_start;
	bool header_on_line = false;

	const char *nul = memchr(text, '\0', n);
	if (nul) {
		bad_line = 1;
		for (const char *s = text; s < nul; s++)
			bad_line += *s == '\n';
		goto bad;
	}
	/* A UTF-8 byte order mark at the start is skipped, a part of one
	 * refused, as git does. */
	if (n && (unsigned char)text[0] == 0xef) {
		if (n < 3 || (unsigned char)text[1] != 0xbb || (unsigned char)text[2] != 0xbf) {
			bad_line = 1;
			goto bad;
		}
		p.i = 3;
	}
	line_start = p.i;

	for (;;) {
		size_t len;
		int ch = peek(&p, &len);
		if (ch == CH_EOF)
			break;
		if (ch == '\n') {
			next(&p);
			line_start = p.i;
			header_on_line = false;
			continue;
		}
		if (is_blank(ch)) {
			next(&p);
			continue;
		}
		if (ch == '#' || ch == ';') {
			/* to the line end; a backslash does not continue a comment */
			while (p.i < p.n && p.text[p.i] != '\n')
				p.i++;
			continue;
		}
		if (ch == '[') {
			unsigned line = p.line;
			next(&p);
			free(section);
			free(subsection);
			section = subsection = NULL;
			if (parse_header(&p, &section, &subsection) < 0) {
				bad_line = line;
				goto bad;
			}
			header_on_line = true;
			continue;
		}
		/* Git takes a key before any section as a name without one,
		 * which no lookup reaches: refused. */
		if (!is_alpha(ch) || !section) {
			bad_line = p.line;
			goto bad;
		}

		struct gitconfig_entry e = { .line = p.line };
		size_t key_start = p.i;
		struct text key = { 0 };
		while (is_key_char(ch = peek(&p, &len))) {
			text_addc(&key, (char)to_lower(ch));
			next(&p);
		}
		e.key = text_take(&key);
		while (ch == ' ' || ch == '\t') {
			next(&p);
			ch = peek(&p, &len);
		}
		size_t before_end;
		if (ch == CH_EOF || ch == '\n') {
			/* a key alone; git takes nothing else after it, not
			 * even a comment */
			before_end = p.i;
			next(&p);
		} else if (ch == '=') {
			next(&p);
			unsigned line = p.line;
			if (parse_value(&p, &e.value, &before_end, &line) < 0) {
				free(e.key);
				bad_line = line;
				goto bad;
			}
		} else {
			free(e.key);
			bad_line = p.line;
			goto bad;
		}
		if (header_on_line) {
			e.start = key_start;
			e.end = before_end;
		} else {
			e.start = line_start;
			e.end = p.i;
		}
		e.section = xstrdup(section);
		e.subsection = subsection ? xstrdup(subsection) : NULL;
		c->v = xgrow(c->v, c->n, sizeof(*c->v));
		c->v[c->n++] = e;
		line_start = p.i;
		header_on_line = false;
	}
	return 0;
bad:
	if (ret_bad_line)
		*ret_bad_line = bad_line;
	return -EBADMSG;
}

int gitconfig_parse(const char *text, size_t n, struct gitconfig *ret, unsigned *ret_bad_line)
{
	struct gitconfig c = { 0 };
	if (!text)
		text = "", n = 0;
	*ret = (struct gitconfig){ 0 };
	if (ret_bad_line)
		*ret_bad_line = 0;
	int r = parse_into(text, n, &c, ret_bad_line);
	if (r < 0) {
		gitconfig_free(&c);
		return r;
	}
	*ret = c;
	return 0;
}

char *gitconfig_entry_name(const struct gitconfig_entry *e)
{
	struct text t = { 0 };
	text_adds(&t, e->section);
	text_addc(&t, '.');
	if (e->subsection) {
		text_adds(&t, e->subsection);
		text_addc(&t, '.');
	}
	text_adds(&t, e->key);
	return text_take(&t);
}

const char *gitconfig_get(const struct gitconfig *c, const char *section, const char *key)
{
	const char *found = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct gitconfig_entry *e = &c->v[i];
		if (!e->subsection && strcasecmp(e->section, section) == 0 && strcasecmp(e->key, key) == 0)
			found = e->value;
	}
	return found;
}

char **gitconfig_includes(const struct gitconfig *c)
{
	char **paths = strv_new();
	for (size_t i = 0; i < c->n; i++) {
		const struct gitconfig_entry *e = &c->v[i];
		if (!e->value || !streq(e->key, "path"))
			continue;
		/* git: strcmp(var, "include.path"), and includeif with any
		 * condition, an empty one too */
		if ((streq(e->section, "include") && !e->subsection) ||
		    (streq(e->section, "includeif") && e->subsection))
			strv_add(&paths, e->value);
	}
	return paths;
}

/* ---------------------------------------------------------------------
 * The inert settings: each one's value cannot make git, or a tool that
 * reads the config, run a program. Whatever is not here is not inert:
 * core.fsmonitor, core.hooksPath, core.sshCommand, core.pager,
 * core.editor, core.askPass, core.gitProxy, core.attributesFile and
 * core.excludesFile (files outside the repository, and attributes name
 * filter and diff drivers), include.path, includeIf.*.path,
 * remote.*.uploadpack, remote.*.receivepack, remote.*.vcs (runs
 * git-remote-<vcs>), remote.*.proxy, submodule.*.update ("!command"),
 * alias.*, filter.*, diff.*, merge.*, credential.*, gpg.*, sequence.*,
 * protocol.*.allow (lets ext:: URLs run commands), http.*, url.*,
 * uploadpack.*, receive.* but one, safe.directory, a remote's URL that
 * is not one of the network, and every key git may learn next.
 *
 * Left out on purpose although git writes it: core.sharedRepository
 * (`git init --shared`). It runs nothing, but "0666" makes git write the
 * config and the refs writable by every local user, who can then plant
 * any of the above.
 * ------------------------------------------------------------------ */

enum inert_sub {
	SUB_NONE,	/* [section] */
	SUB_ANY,	/* [section "name"], any name */
};

enum inert_value {
	ANY_VALUE,
	/* A URL that git fetches from and pushes to over the network with
	 * a transport of its own: https://, http://, ssh://, git://,
	 * git+ssh://, ssh+git://, or [user@]host:path (ssh). Not a local
	 * path or file://: `git push` runs receive-pack in that repository,
	 * and so its hooks, and a run can make one anywhere in the
	 * workspace, where nothing guards its hooks. Not "<helper>::..."
	 * nor any other "<scheme>://": git runs git-remote-<helper> from
	 * PATH for them. */
	NETWORK_URL,
	/* A working tree that gitconfig_where.worktree_ok accepts. */
	SUBMODULE_WORKTREE,
};

static const struct inert_key {
	const char *section;
	enum inert_sub sub;
	const char *key;	/* NULL: every key of the section */
	enum inert_value value;
} inert_keys[] = {
#define INERT(s, sub_, k) { .section = s, .sub = sub_, .key = k, .value = ANY_VALUE }
#define INERT_URL(s, sub_, k) { .section = s, .sub = sub_, .key = k, .value = NETWORK_URL }
#define INERT_WORKTREE(s, sub_, k) { .section = s, .sub = sub_, .key = k, .value = SUBMODULE_WORKTREE }
	/* git init, git clone (libgit2, and so cargo new, the same) */
	INERT("core", SUB_NONE, "repositoryformatversion"),
	INERT("core", SUB_NONE, "filemode"),
	INERT("core", SUB_NONE, "bare"),
	INERT("core", SUB_NONE, "logallrefupdates"),
	/* what init finds out about the file system (macOS, Windows) */
	INERT("core", SUB_NONE, "ignorecase"),
	INERT("core", SUB_NONE, "precomposeunicode"),
	INERT("core", SUB_NONE, "symlinks"),
	/* A submodule's .git/modules/NAME/config: where its working tree
	 * is. Git runs nothing from it, but it reads, commits and checks
	 * out files there: only a submodule's, naming a tree inside the
	 * workspace (where below). In the repository's own config, one
	 * naming ~/private has the user's `git add -A` commit it. */
	INERT_WORKTREE("core", SUB_NONE, "worktree"),
	/* git clone --sparse, git sparse-checkout (into config.worktree
	 * once extensions.worktreeConfig is set) */
	INERT("core", SUB_NONE, "sparsecheckout"),
	INERT("core", SUB_NONE, "sparsecheckoutcone"),
	/* line ends and how paths are printed */
	INERT("core", SUB_NONE, "autocrlf"),
	INERT("core", SUB_NONE, "eol"),
	INERT("core", SUB_NONE, "quotepath"),
	/* The repository's format: objectFormat (sha256), worktreeConfig
	 * (git clone --sparse), partialClone, refStorage. worktreeConfig
	 * makes git read .git/config.worktree too, which must then be kept
	 * like .git/config. */
	INERT("extensions", SUB_NONE, NULL),
	/* git clone, git remote add, git clone --filter (promisor,
	 * partialclonefilter), --mirror, --no-tags (tagopt); a URL only
	 * of the network (above) */
	INERT_URL("remote", SUB_ANY, "url"),
	INERT_URL("remote", SUB_ANY, "pushurl"),
	INERT("remote", SUB_ANY, "fetch"),	/* refspecs */
	INERT("remote", SUB_ANY, "push"),
	INERT("remote", SUB_ANY, "tagopt"),	/* only --tags or --no-tags */
	INERT("remote", SUB_ANY, "mirror"),
	INERT("remote", SUB_ANY, "prune"),
	INERT("remote", SUB_ANY, "prunetags"),
	INERT("remote", SUB_ANY, "promisor"),
	INERT("remote", SUB_ANY, "partialclonefilter"),	/* a filter spec git parses */
	INERT("remote", SUB_ANY, "skipdefaultupdate"),
	INERT("remote", SUB_ANY, "skipfetchall"),
	/* git clone, git branch -u, git push -u, git branch --edit-description */
	INERT("branch", SUB_ANY, "remote"),
	INERT("branch", SUB_ANY, "pushremote"),
	INERT("branch", SUB_ANY, "merge"),
	INERT("branch", SUB_ANY, "rebase"),	/* "interactive" opens the user's own editor */
	INERT("branch", SUB_ANY, "description"),
	/* git config user.email */
	INERT("user", SUB_NONE, "name"),
	INERT("user", SUB_NONE, "email"),
	INERT("author", SUB_NONE, "name"),
	INERT("author", SUB_NONE, "email"),
	INERT("committer", SUB_NONE, "name"),
	INERT("committer", SUB_NONE, "email"),
	INERT("init", SUB_NONE, "defaultbranch"),
	/* git submodule add, git clone --recurse-submodules. Not update:
	 * "!command" runs the command. The URL, a local path too, is only
	 * cloned from (no hook of the source runs), under the protocol
	 * policy git applies to submodules, which lets no remote helper
	 * from PATH run. */
	INERT("submodule", SUB_ANY, "url"),
	INERT("submodule", SUB_ANY, "active"),
	INERT("submodule", SUB_ANY, "branch"),
	INERT("submodule", SUB_ANY, "shallow"),
	INERT("submodule", SUB_ANY, "fetchrecursesubmodules"),
	INERT("submodule", SUB_ANY, "ignore"),
	/* git clone --recurse-submodules writes "submodule.active = .": a
	 * pathspec */
	INERT("submodule", SUB_NONE, "active"),
	INERT("pull", SUB_NONE, "rebase"),
	INERT("pull", SUB_NONE, "ff"),
	INERT("push", SUB_NONE, "default"),
	INERT("push", SUB_NONE, "autosetupremote"),
	INERT("fetch", SUB_NONE, "prune"),
	INERT("index", SUB_NONE, "version"),
	INERT("index", SUB_NONE, "sparse"),	/* git sparse-checkout --sparse-index */
	/* git init --shared: it only refuses pushes that rewrite history */
	INERT("receive", SUB_NONE, "denynonfastforwards"),
	/* git maintenance register (and scalar): which of git's own tasks
	 * run, and whether git runs them after a command */
	INERT("maintenance", SUB_NONE, "auto"),
	INERT("maintenance", SUB_NONE, "strategy"),
	/* git lfs install --local also writes filter.lfs.*, which run
	 * git-lfs: not inert, and dropped */
	INERT("lfs", SUB_NONE, "repositoryformatversion"),
#undef INERT
#undef INERT_URL
#undef INERT_WORKTREE
};

static bool is_network_url(const char *v)
{
	static const char *const schemes[] = {
		"https://", "http://", "ssh://", "git://", "git+ssh://", "ssh+git://",
	};
	if (!v || str_has_control(v) || strstr(v, "::"))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(schemes); i++)
		if (str_has_prefix(v, schemes[i]))
			return v[strlen(schemes[i])] && v[strlen(schemes[i])] != '-';
	/* Git's url_is_local_not_ssh(): a ':' before any '/' is ssh to the
	 * host before it, which git refuses to start with '-'. A "x://" of
	 * another scheme has one too, and goes to a helper: refused. */
	const char *colon = strchr(v, ':'), *slash = strchr(v, '/');
	return colon && colon != v && (!slash || colon < slash) && v[0] != '-' && !str_has_prefix(colon, "://");
}

/* A local repository's path, as an absolute one: "/path" or
 * "file:///path"; NULL for anything else (a relative path means another
 * place from each directory git runs in). */
static const char *local_url_path(const char *v)
{
	if (!v || str_has_control(v))
		return NULL;
	if (str_has_prefix(v, "file://"))
		v += strlen("file://");
	return v[0] == '/' ? v : NULL;
}

bool gitconfig_inert(const char *section, const char *subsection, const char *key, const char *value,
		     const struct gitconfig_where *w)
{
	for (size_t i = 0; i < ARRAY_SIZE(inert_keys); i++) {
		const struct inert_key *k = &inert_keys[i];
		if (strcasecmp(section, k->section) != 0)
			continue;
		if ((k->sub == SUB_NONE) != !subsection)
			continue;
		if (k->key && strcasecmp(key, k->key) != 0)
			continue;
		if (k->value == SUBMODULE_WORKTREE)
			return value && w && w->worktree_ok && w->worktree_ok(w->data, value);
		if (k->value == ANY_VALUE || is_network_url(value))
			return true;
		/* a local repository where the run cannot make one: its hooks
		 * are the user's (git clone /path, git remote add /path) */
		const char *path = local_url_path(value);
		return path && w && w->local_ok && w->local_ok(w->data, path);
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Vetting
 * ------------------------------------------------------------------ */

static bool entry_inert(const struct gitconfig_entry *e, const struct gitconfig_where *w)
{
	return gitconfig_inert(e->section, e->subsection, e->key, e->value, w);
}

static bool str_eq_null(const char *a, const char *b)
{
	return a && b ? streq(a, b) : a == b;
}

static bool entry_eq(const struct gitconfig_entry *a, const struct gitconfig_entry *b)
{
	return streq(a->section, b->section) && str_eq_null(a->subsection, b->subsection) &&
	       streq(a->key, b->key) && str_eq_null(a->value, b->value);
}

/* The entries that are not inert, in order. */
static const struct gitconfig_entry **live_entries(const struct gitconfig *c, const struct gitconfig_where *w,
						  size_t *ret_n)
{
	const struct gitconfig_entry **v = xcalloc(c->n + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (!entry_inert(&c->v[i], w))
			v[n++] = &c->v[i];
	*ret_n = n;
	return v;
}

static bool live_same(const struct gitconfig_entry *const *a, size_t na, const struct gitconfig_entry *const *b,
		      size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!entry_eq(a[i], b[i]))
			return false;
	return true;
}

/* One entry of either side, for finding the names whose values differ
 * in O(n log n): a run's config can be as long as it likes. */
struct side_entry {
	char *name;
	const char *value;
	bool in_base;
	size_t order;	/* where the name first shows: now's entries, then base's */
};

static int side_cmp(const void *a, const void *b)
{
	const struct side_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->in_base != y->in_base)
		return x->in_base ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct named {
	const char *name;
	size_t order;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The names whose sequence of values differs between now's and base's
 * live entries, each once, in the order they first show. */
static char **differing_names(const struct gitconfig_entry *const *now, size_t n_now,
			      const struct gitconfig_entry *const *base, size_t n_base)
{
	size_t n = n_now + n_base;
	struct side_entry *v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const struct gitconfig_entry *e = i < n_now ? now[i] : base[i - n_now];
		v[i] = (struct side_entry){ gitconfig_entry_name(e), e->value, i >= n_now, i };
	}
	qsort(v, n, sizeof(*v), side_cmp);
	struct named *found = xcalloc(n + 1, sizeof(*found));
	size_t n_found = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i, first = SIZE_MAX;
		while (j < n && streq(v[j].name, v[i].name)) {
			if (v[j].order < first)
				first = v[j].order;
			j++;
		}
		/* [i, j) holds the name's values from now, then from base,
		 * each side in its order */
		size_t k = i;
		while (k < j && !v[k].in_base)
			k++;
		bool same = k - i == j - k;
		for (size_t m = 0; same && m < k - i; m++)
			same = str_eq_null(v[i + m].value, v[k + m].value);
		if (!same)
			found[n_found++] = (struct named){ v[i].name, first };
		i = j;
	}
	qsort(found, n_found, sizeof(*found), named_cmp);
	char **names = strv_new();
	for (size_t i = 0; i < n_found; i++)
		strv_add(&names, found[i].name);
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(found);
	return names;
}

/* text without the spans of the entries marked in drop (sorted spans,
 * none overlapping: they come from one parse). */
static void add_without(struct text *t, const char *text, size_t n, const struct gitconfig *c, const bool *drop)
{
	size_t at = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (!drop[i])
			continue;
		text_add(t, text + at, c->v[i].start - at);
		at = c->v[i].end;
	}
	text_add(t, text + at, n - at);
}

/* A value between quotes, read back by git as it is. */
static void add_quoted(struct text *t, const char *s)
{
	text_addc(t, '"');
	for (; *s; s++) {
		switch (*s) {
		case '\\': text_adds(t, "\\\\"); break;
		case '"': text_adds(t, "\\\""); break;
		case '\n': text_adds(t, "\\n"); break;
		case '\t': text_adds(t, "\\t"); break;
		case '\b': text_adds(t, "\\b"); break;
		default: text_addc(t, *s);
		}
	}
	text_addc(t, '"');
}

/* The entries at the end, under a header for each run of one section and
 * subsection. */
static void add_rendered(struct text *t, const struct gitconfig_entry *const *v, size_t n)
{
	if (t->n && t->s[t->n - 1] != '\n')
		/* The last line may be a comment, or a value: a header
		 * appended to it would be read as part of it. */
		text_addc(t, '\n');
	for (size_t i = 0; i < n; i++) {
		const struct gitconfig_entry *e = v[i];
		if (i == 0 || !streq(e->section, v[i - 1]->section) ||
		    !str_eq_null(e->subsection, v[i - 1]->subsection)) {
			text_addc(t, '[');
			text_adds(t, e->section);
			if (e->subsection) {
				text_adds(t, " \"");
				for (const char *s = e->subsection; *s; s++) {
					if (*s == '\\' || *s == '"')
						text_addc(t, '\\');
					text_addc(t, *s);
				}
				text_addc(t, '"');
			}
			text_adds(t, "]\n");
		}
		text_addc(t, '\t');
		text_adds(t, e->key);
		if (e->value) {
			text_adds(t, " = ");
			add_quoted(t, e->value);
		}
		text_addc(t, '\n');
	}
}

/* Whether text parses to exactly these live entries. */
static bool vetted_holds(const char *text, size_t n, const struct gitconfig_entry *const *want, size_t n_want,
			 const struct gitconfig_where *w)
{
	struct gitconfig c;
	if (gitconfig_parse(text, n, &c, NULL) < 0)
		return false;
	size_t n_live;
	const struct gitconfig_entry **live = live_entries(&c, w, &n_live);
	bool same = live_same(live, n_live, want, n_want);
	free(live);
	gitconfig_free(&c);
	return same;
}

static char *copy_bytes(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

int gitconfig_vet(const char *base, size_t base_n, const char *now, size_t now_n, const struct gitconfig_where *w,
		  struct gitconfig_vetted *ret)
{
	*ret = (struct gitconfig_vetted){ 0 };
	if ((!now && now_n) || (!base && base_n))
		return -EINVAL;
	if (!now)
		now = "";

	/* Untouched: left as it is, whatever it holds, even what this
	 * parser refuses and git may take. */
	if (base && base_n == now_n && memcmp(base, now, now_n) == 0) {
		ret->keep = true;
		ret->dropped = strv_new();
		return 0;
	}

	struct gitconfig cn = { 0 };
	unsigned bad_line = 0;
	if (parse_into(now, now_n, &cn, &bad_line) < 0) {
		/* Not read as git would: the run's file goes whole, base
		 * comes back (or none, where there was none). */
		ret->text = base ? copy_bytes(base, base_n) : NULL;
		ret->n = base ? base_n : 0;
		ret->bad_line = bad_line;
		ret->dropped = strv_new();
		for (size_t i = 0; i < cn.n; i++) {
			char *name = gitconfig_entry_name(&cn.v[i]);
			if (strv_contains(ret->dropped, name))
				free(name);
			else
				strv_push(&ret->dropped, name);
		}
		gitconfig_free(&cn);
		return 0;
	}

	/* A base that does not parse is the user's own file, as git itself
	 * would refuse it (or as this parser cannot be sure of it): nothing
	 * of it can be restored entry by entry, and `now` is vetted as if
	 * the file were new. The original goes to the quarantine with the
	 * rest of the run's changes. */
	struct gitconfig cb = { 0 };
	if (base && gitconfig_parse(base, base_n, &cb, NULL) < 0)
		cb = (struct gitconfig){ 0 };

	size_t nb, nn;
	const struct gitconfig_entry **live_b = live_entries(&cb, w, &nb);
	const struct gitconfig_entry **live_n = live_entries(&cn, w, &nn);

	if (live_same(live_n, nn, live_b, nb)) {
		ret->keep = true;
		ret->dropped = strv_new();
		goto out;
	}

	ret->dropped = differing_names(live_n, nn, live_b, nb);

	/* Is base's sequence a subsequence of now's: did the run only add
	 * settings? Greedy matching finds one embedding if any exists. */
	bool *drop = xcalloc(cn.n + 1, sizeof(bool));
	size_t j = 0;
	for (size_t i = 0; i < cn.n; i++) {
		if (entry_inert(&cn.v[i], w))
			continue;
		if (j < nb && entry_eq(&cn.v[i], live_b[j]))
			j++;
		else
			drop[i] = true;
	}

	struct text t = { 0 };
	if (j == nb) {
		/* only added: those additions go, every other byte stays */
		add_without(&t, now, now_n, &cn, drop);
	} else {
		/* Something of base's was removed or moved. Put back in
		 * place, it could not keep "the last one wins" true for
		 * every key at once (a key set twice, its two entries now
		 * swapped): so every setting that is not inert goes, and
		 * base's come back at the end, in base's order, where no
		 * entry of `now` comes after them. */
		for (size_t i = 0; i < cn.n; i++)
			drop[i] = !entry_inert(&cn.v[i], w);
		add_without(&t, now, now_n, &cn, drop);
		add_rendered(&t, live_b, nb);
	}
	free(drop);

	ret->n = t.n;
	ret->text = text_take(&t);
	/* What is written must read back as promised; if it did not (a
	 * bug here), base itself is what comes back. */
	if (!vetted_holds(ret->text, ret->n, live_b, nb, w)) {
		free(ret->text);
		ret->text = base ? copy_bytes(base, base_n) : NULL;
		ret->n = base ? base_n : 0;
	}
out:
	free(live_b);
	free(live_n);
	gitconfig_free(&cb);
	gitconfig_free(&cn);
	return 0;
}
