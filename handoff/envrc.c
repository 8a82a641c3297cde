#include "handoff/envrc.h"

#include "lib/util.h"

/* ---------------------------------------------------------------------
 * Words, as bash splits them
 * ------------------------------------------------------------------ */

struct word {
	char *text;		/* quotes and escapes removed */
	char *raw;		/* as written */
	bool quoted;		/* some of it quoted: then it is no reserved word */
	bool unresolved;	/* only the shell can tell what it becomes */
	bool home;		/* an unquoted ~ first */
	bool pwd;		/* $PWD or ${PWD} first: text is what follows */
	bool brace;		/* an unquoted { or }: brace expansion */
	unsigned line;
	size_t end;		/* where it ends in the lexer's text */
};

static void word_free(struct word *w)
{
	free(w->text);
	free(w->raw);
}

struct heredoc {
	char *delim;
	bool strip_tabs;	/* <<- */
};

struct lexer {
	const char *s;
	size_t n, i;
	unsigned line;
	unsigned bad_line;	/* set: something left open, the rest unread */
	struct heredoc *pending;	/* bodies that start after this line */
	size_t n_pending;
};

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Where a word ends unless quoted: a blank, a line end, an operator. */
static bool is_word_end(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
	       c == '<' || c == '>';
}

static void lex_fail(struct lexer *lx, unsigned line)
{
	if (!lx->bad_line)
		lx->bad_line = line;
	lx->i = lx->n;
}

static void skip_group(struct lexer *lx, char open, char close, unsigned line);

/* Past a backtick substitution, from its opening backtick. */
static void skip_backtick(struct lexer *lx)
{
	unsigned line = lx->line;
	for (lx->i++; lx->i < lx->n; lx->i++) {
		char c = lx->s[lx->i];
		if (c == '\\' && lx->i + 1 < lx->n) {
			lx->i++;
			lx->line += lx->s[lx->i] == '\n';
		} else if (c == '\n') {
			lx->line++;
		} else if (c == '`') {
			lx->i++;
			return;
		}
	}
	lex_fail(lx, line);
}

/* Past a double-quoted string inside a substitution, from its quote. */
static void skip_dquote(struct lexer *lx)
{
	unsigned line = lx->line;
	for (lx->i++; lx->i < lx->n;) {
		char c = lx->s[lx->i];
		if (c == '\\' && lx->i + 1 < lx->n) {
			lx->line += lx->s[lx->i + 1] == '\n';
			lx->i += 2;
		} else if (c == '"') {
			lx->i++;
			return;
		} else if (c == '`') {
			skip_backtick(lx);
		} else if (c == '$' && lx->i + 1 < lx->n && (lx->s[lx->i + 1] == '(' || lx->s[lx->i + 1] == '{')) {
			char open = lx->s[lx->i + 1];
			lx->i += 2;
			skip_group(lx, open, open == '(' ? ')' : '}', lx->line);
		} else {
			lx->line += c == '\n';
			lx->i++;
		}
	}
	lex_fail(lx, line);
}

/* Past $( ... ), $(( ... )) or ${ ... }, from just after the opening
 * bracket: nested ones, quotes and escapes inside are stepped over. */
static void skip_group(struct lexer *lx, char open, char close, unsigned line)
{
	unsigned depth = 1;
	while (lx->i < lx->n) {
		char c = lx->s[lx->i];
		if (c == '\\' && lx->i + 1 < lx->n) {
			lx->line += lx->s[lx->i + 1] == '\n';
			lx->i += 2;
		} else if (c == '\'') {
			const char *q = memchr(lx->s + lx->i + 1, '\'', lx->n - lx->i - 1);
			if (!q)
				return lex_fail(lx, line);
			for (const char *s = lx->s + lx->i; s < q; s++)
				lx->line += *s == '\n';
			lx->i = (size_t)(q - lx->s) + 1;
		} else if (c == '"') {
			skip_dquote(lx);
		} else if (c == '`') {
			skip_backtick(lx);
		} else if (c == '$' && lx->i + 1 < lx->n && (lx->s[lx->i + 1] == '(' || lx->s[lx->i + 1] == '{')) {
			char o = lx->s[lx->i + 1];
			lx->i += 2;
			skip_group(lx, o, o == '(' ? ')' : '}', lx->line);
		} else {
			lx->i++;
			if (c == '\n')
				lx->line++;
			else if (c == open)
				depth++;
			else if (c == close && --depth == 0)
				return;
		}
	}
	lex_fail(lx, line);
}

/* Nothing of the word read yet: where $PWD still means the .envrc's
 * directory. */
static bool word_fresh(const struct word *w, const struct text *t)
{
	return t->n == 0 && !w->pwd && !w->unresolved;
}

/* A $ in a word (in_dquote: between double quotes), from the $. */
static void lex_dollar(struct lexer *lx, struct word *w, struct text *t, bool in_dquote)
{
	const char *s = lx->s;
	size_t i = lx->i;
	char d = i + 1 < lx->n ? s[i + 1] : '\0';

	if (d == '{' && word_fresh(w, t) && lx->n - i >= 6 && memcmp(s + i, "${PWD}", 6) == 0) {
		w->pwd = true;
		lx->i += 6;
		return;
	}
	if (is_name_start(d)) {
		size_t j = i + 1;
		while (j < lx->n && is_name_char(s[j]))
			j++;
		if (word_fresh(w, t) && j - i - 1 == 3 && memcmp(s + i + 1, "PWD", 3) == 0)
			w->pwd = true;
		else
			w->unresolved = true;
		lx->i = j;
		return;
	}
	w->unresolved = true;
	if (d == '(' || d == '{') {
		lx->i += 2;
		skip_group(lx, d, d == '(' ? ')' : '}', lx->line);
	} else if (d == '\'' && !in_dquote) {
		/* $'...': backslash escapes, \' among them */
		unsigned line = lx->line;
		for (lx->i += 2; lx->i < lx->n && s[lx->i] != '\''; lx->i++) {
			if (s[lx->i] == '\\' && lx->i + 1 < lx->n)
				lx->i++;
			lx->line += s[lx->i] == '\n';
		}
		if (lx->i >= lx->n)
			return lex_fail(lx, line);
		lx->i++;
	} else if (d == '"' && !in_dquote) {
		/* $"...": a double-quoted string, translated; the caller's
		 * loop reads it from its quote */
		lx->i++;
	} else if (d && strchr("@*#?-$!0123456789", d)) {
		lx->i += 2;
	} else {
		/* a $ the shell keeps as it is; still a $ */
		text_addc(t, '$');
		lx->i++;
	}
}

static void lex_dquote(struct lexer *lx, struct word *w, struct text *t)
{
	unsigned line = lx->line;
	const char *s = lx->s;
	for (lx->i++; lx->i < lx->n;) {
		char c = s[lx->i];
		if (c == '"') {
			lx->i++;
			return;
		}
		if (c == '\\' && lx->i + 1 < lx->n && strchr("$`\"\\\n", s[lx->i + 1])) {
			if (s[lx->i + 1] == '\n')
				lx->line++;
			else
				text_addc(t, s[lx->i + 1]);
			lx->i += 2;
		} else if (c == '$') {
			lex_dollar(lx, w, t, true);
		} else if (c == '`') {
			w->unresolved = true;
			skip_backtick(lx);
		} else {
			lx->line += c == '\n';
			text_addc(t, c);
			lx->i++;
		}
	}
	lex_fail(lx, line);
}

/* A word from lx->i, which is no blank and no operator. split_colon:
 * a ':' ends it too, as in the parts of a PATH-like value. */
static void lex_word(struct lexer *lx, struct word *w, bool split_colon)
{
	const char *s = lx->s;
	size_t start = lx->i;
	struct text t = { 0 };
	*w = (struct word){ .line = lx->line };

	while (lx->i < lx->n) {
		char c = s[lx->i];
		if (is_word_end(c) || (split_colon && c == ':'))
			break;
		if (c == '\\') {
			if (lx->i + 1 >= lx->n) {
				text_addc(&t, c);
				lx->i++;
			} else if (s[lx->i + 1] == '\n') {
				/* a line continuation, gone before words are split */
				lx->line++;
				lx->i += 2;
			} else {
				w->quoted = true;
				text_addc(&t, s[lx->i + 1]);
				lx->i += 2;
			}
		} else if (c == '\'') {
			unsigned line = lx->line;
			const char *q = memchr(s + lx->i + 1, '\'', lx->n - lx->i - 1);
			if (!q) {
				lex_fail(lx, line);
				break;
			}
			w->quoted = true;
			text_add(&t, s + lx->i + 1, (size_t)(q - s) - lx->i - 1);
			for (const char *p = s + lx->i; p < q; p++)
				lx->line += *p == '\n';
			lx->i = (size_t)(q - s) + 1;
		} else if (c == '"') {
			w->quoted = true;
			lex_dquote(lx, w, &t);
		} else if (c == '$') {
			lex_dollar(lx, w, &t, false);
		} else if (c == '`') {
			w->unresolved = true;
			skip_backtick(lx);
		} else {
			if (c == '*' || c == '?' || c == '[')
				w->unresolved = true;
			else if (c == '{' || c == '}')
				w->brace = true;
			else if (c == '~' && lx->i == start)
				w->home = true;
			text_addc(&t, c);
			lx->i++;
		}
	}
	w->text = text_take(&t);
	w->raw = xstrndup(s + start, lx->i - start);
	w->end = lx->i;
	/* "{" and "}" alone are reserved words; elsewhere a brace may
	 * expand ("bin{,2}") */
	if (w->brace && !streq(w->raw, "{") && !streq(w->raw, "}"))
		w->unresolved = true;
}

/* ---------------------------------------------------------------------
 * References
 * ------------------------------------------------------------------ */

static void refs_push(struct envrc_refs *r, struct envrc_ref ref)
{
	r->v = xgrow(r->v, r->n, sizeof(*r->v));
	r->v[r->n++] = ref;
}

static void ref_literal(struct envrc_refs *r, enum envrc_ref_kind kind, const char *path, unsigned line)
{
	refs_push(r, (struct envrc_ref){ .kind = kind, .path = xstrdup(path), .resolved = true, .line = line });
}

/* tilde_always: the function itself turns a leading ~ into $HOME, quoted
 * or not (source_env). */
static void ref_word(struct envrc_refs *r, enum envrc_ref_kind kind, const struct word *w, bool tilde_always)
{
	struct envrc_ref ref = { .kind = kind, .line = w->line, .home = w->home };
	/* "${PWD}x" is another directory's name, not one inside it */
	if (w->unresolved || (w->pwd && w->text[0] && w->text[0] != '/')) {
		ref.path = xstrdup(w->raw);
	} else if (w->pwd) {
		const char *p = w->text;
		while (*p == '/')
			p++;
		ref.path = xstrdup(*p ? p : ".");
		ref.resolved = true;
	} else {
		ref.path = xstrdup(w->text);
		ref.resolved = true;
		ref.home |= tilde_always && w->text[0] == '~';
	}
	refs_push(r, ref);
}

static bool word_is(const struct word *w, const char *s)
{
	return !w->unresolved && streq(w->text, s);
}

/* NAME= or NAME+= at the start, unquoted: an assignment, not a command.
 * Returns the length of NAME, or 0. */
static size_t assignment_name(const struct word *w)
{
	const char *s = w->raw;
	if (!is_name_start(s[0]))
		return 0;
	size_t i = 1;
	while (is_name_char(s[i]))
		i++;
	if (s[i] == '=' || (s[i] == '+' && s[i + 1] == '='))
		return i;
	return 0;
}

/* Variables whose value is a list of directories, or of files, that
 * programs load from: an assignment to one names hand-offs as
 * path_add does. */
static bool path_like_name(const char *name, size_t n)
{
	static const char *const others[] = { "PERL5LIB", "RUBYLIB", "LD_PRELOAD" };
	if (n >= 4 && memcmp(name + n - 4, "PATH", 4) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		if (strlen(others[i]) == n && memcmp(name, others[i], n) == 0)
			return true;
	return false;
}

/* The parts of a value split at each ':' outside a substitution,
 * quotes included: PATH is split after the shell has removed them, so
 * "$PWD/bin:$PATH" holds two. A part that starts or ends inside quotes
 * gets the quote it needs to lex alone. */
static char **split_path_value(const char *v)
{
	char **parts = strv_new();
	struct text t = { 0 };
	char quote = 0;
	unsigned depth = 0;
	for (const char *p = v; *p; p++) {
		char c = *p;
		/* an escaped ':' is a ':' in the value all the same */
		bool escaped_colon = c == '\\' && p[1] == ':' && quote != '\'';
		if ((c == ':' || escaped_colon) && !depth) {
			p += escaped_colon;
			if (quote)
				text_addc(&t, quote);
			strv_push(&parts, text_take(&t));
			if (quote)
				text_addc(&t, quote);
			continue;
		}
		text_addc(&t, c);
		if (c == '\\' && p[1] && quote != '\'') {
			text_addc(&t, *++p);
		} else if (quote == '\'') {
			if (c == '\'')
				quote = 0;
		} else if (c == '$' && (p[1] == '(' || p[1] == '{')) {
			text_addc(&t, *++p);
			depth++;
		} else if (depth && (c == '(' || c == '{')) {
			depth++;
		} else if (depth && (c == ')' || c == '}')) {
			depth--;
		} else if (!depth && (c == '\'' || c == '"')) {
			if (!quote)
				quote = c;
			else if (quote == c)
				quote = 0;
		}
	}
	strv_push(&parts, text_take(&t));
	return parts;
}

/* NAME=VALUE: where NAME is PATH-like, each part of VALUE but NAME's
 * own old value ($PATH in PATH=$PWD/bin:$PATH). An empty part is the
 * current directory. */
static void ref_assignment(struct envrc_refs *r, const struct word *w)
{
	size_t n = assignment_name(w);
	if (!n || !path_like_name(w->raw, n))
		return;
	const char *value = w->raw + n + (w->raw[n] == '+' ? 2 : 1);
	_cleanup_free_ char *self = xstrndup(w->raw, n);
	_cleanup_free_ char *self_braced = xasprintf("${%s}", self);
	_cleanup_strv_ char **parts = split_path_value(value);
	for (size_t i = 0; parts[i]; i++) {
		struct lexer sub = { .s = parts[i], .n = strlen(parts[i]), .line = w->line };
		struct word part;
		lex_word(&sub, &part, true);
		bool whole = sub.i == sub.n && !sub.bad_line;
		/* the old value, "$PATH" or ${PATH}, quoted or not */
		const char *t = part.raw;
		size_t len = strlen(t);
		_cleanup_free_ char *unquoted = NULL;
		if (len >= 2 && t[0] == '"' && t[len - 1] == '"')
			t = unquoted = xstrndup(t + 1, len - 2);
		if ((t[0] == '$' && streq(t + 1, self)) || streq(t, self_braced)) {
			word_free(&part);
			continue;
		}
		if (!whole) {
			/* a part this cannot lex alone: as written */
			part.unresolved = true;
			free(part.raw);
			part.raw = xstrdup(parts[i]);
		}
		if (!*part.raw)
			ref_literal(r, ENVRC_PATH_DIR, ".", w->line);
		else
			ref_word(r, ENVRC_PATH_DIR, &part, false);
		word_free(&part);
	}
}

/* use nix [ARGS]: nix-shell reads shell.nix, or default.nix, unless a
 * file is named (or -p names packages): both are reported either way,
 * with each argument that names a .nix file. */
static void refs_use_nix(struct envrc_refs *r, const struct word *args, size_t n, unsigned line)
{
	ref_literal(r, ENVRC_NIX, "shell.nix", line);
	ref_literal(r, ENVRC_NIX, "default.nix", line);
	for (size_t i = 0; i < n; i++)
		if (args[i].unresolved || str_has_suffix(args[i].text, ".nix"))
			ref_word(r, ENVRC_NIX, &args[i], false);
}

/* use flake [INSTALLABLE]: the flake.nix and flake.lock of the flake's
 * directory when it is a local path ("", ".", "./x", "/x", "path:x",
 * before any '#'); a flake from a registry or a URL is not in the
 * workspace. */
static void refs_use_flake(struct envrc_refs *r, const struct word *args, size_t n, unsigned line)
{
	const struct word *inst = NULL;
	for (size_t i = 0; i < n && !inst; i++)
		if (args[i].unresolved || args[i].text[0] != '-')
			inst = &args[i];
	if (inst && inst->unresolved) {
		ref_word(r, ENVRC_NIX, inst, false);
		return;
	}
	_cleanup_free_ char *dir = xstrdup(inst ? inst->text : "");
	dir[strcspn(dir, "#")] = '\0';
	const char *d = dir;
	if (str_has_prefix(d, "path:"))
		d += strlen("path:");
	else if (*d && *d != '.' && *d != '/')
		return;
	if (inst)
		line = inst->line;
	if (!*d || streq(d, ".")) {
		ref_literal(r, ENVRC_NIX, "flake.nix", line);
		ref_literal(r, ENVRC_NIX, "flake.lock", line);
		return;
	}
	_cleanup_free_ char *nix = xstrcat3(d, "/", "flake.nix");
	_cleanup_free_ char *lock = xstrcat3(d, "/", "flake.lock");
	ref_literal(r, ENVRC_NIX, nix, line);
	ref_literal(r, ENVRC_NIX, lock, line);
}

/* layout TYPE: the directories direnv's stdlib puts on PATH for it. The
 * layout directory (.direnv unless $direnv_layout_dir, set in a
 * direnvrc, says otherwise) holds those of go, perl, ruby and python. */
static void refs_layout(struct envrc_refs *r, const struct word *args, size_t n)
{
	static const struct {
		const char *type, *dir;
	} layouts[] = {
		{ "node", "node_modules/.bin" }, { "php", "vendor/bin" }, { "go", ".direnv" },
		{ "perl", ".direnv" }, { "ruby", ".direnv" }, { "python", ".direnv" },
		{ "python2", ".direnv" }, { "python3", ".direnv" },
	};
	if (!n)
		return;
	if (args[0].unresolved) {
		ref_word(r, ENVRC_PATH_DIR, &args[0], false);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (streq(args[0].text, layouts[i].type))
			ref_literal(r, ENVRC_PATH_DIR, layouts[i].dir, args[0].line);
}

/* What a simple command names: its command word, and then its
 * arguments, by what direnv's stdlib does with them. */
static void refs_command(struct envrc_refs *r, struct word *w, size_t n)
{
	static const char *const reserved[] = {
		"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done", "esac",
	};
	size_t i = 0;
	for (; i < n; i++) {
		if (w[i].quoted || w[i].unresolved)
			break;
		bool skip = false;
		for (size_t k = 0; k < ARRAY_SIZE(reserved) && !skip; k++)
			skip = streq(w[i].text, reserved[k]);
		if (!skip && streq(w[i].text, "function") && i + 1 < n) {
			/* function NAME: a definition; its body follows */
			i++;
			skip = true;
		}
		if (!skip)
			break;
	}
	if (i < n && !w[i].quoted && (word_is(&w[i], "for") || word_is(&w[i], "select") || word_is(&w[i], "case")))
		/* for NAME in WORDS, case WORD in: no command here */
		return;
	for (; i < n && assignment_name(&w[i]); i++)
		ref_assignment(r, &w[i]);
	while (i < n && (word_is(&w[i], "builtin") || word_is(&w[i], "command") || word_is(&w[i], "exec")))
		i++;
	if (i >= n)
		return;

	const struct word *cmd = &w[i];
	struct word *args = w + i + 1;
	size_t n_args = n - i - 1;
	unsigned line = cmd->line;
	if (cmd->unresolved)
		return;
	const char *c = cmd->text;

	if (streq(c, "source") || streq(c, ".")) {
		if (n_args)
			ref_word(r, ENVRC_SOURCE, &args[0], false);
	} else if (streq(c, "source_env") || streq(c, "source_env_if_exists")) {
		if (n_args)
			ref_word(r, ENVRC_SOURCE, &args[0], true);
	} else if (streq(c, "dotenv") || streq(c, "dotenv_if_exists")) {
		/* ${1:-}: none, or an empty one, is .env */
		if (n_args && (args[0].unresolved || args[0].pwd || *args[0].text))
			ref_word(r, ENVRC_DOTENV, &args[0], false);
		else
			ref_literal(r, ENVRC_DOTENV, ".env", n_args ? args[0].line : line);
	} else if (streq(c, "PATH_add")) {
		for (size_t k = 0; k < n_args; k++)
			ref_word(r, ENVRC_PATH_DIR, &args[k], false);
	} else if (streq(c, "path_add")) {
		/* path_add VAR DIR...: every DIR, whatever VAR */
		for (size_t k = 1; k < n_args; k++)
			ref_word(r, ENVRC_PATH_DIR, &args[k], false);
	} else if (streq(c, "MANPATH_add") || streq(c, "load_prefix")) {
		if (n_args)
			ref_word(r, ENVRC_PATH_DIR, &args[0], false);
	} else if (streq(c, "source_up") || streq(c, "source_up_if_exists")) {
		if (n_args && (args[0].unresolved || *args[0].text))
			ref_word(r, ENVRC_PARENT, &args[0], false);
		else
			ref_literal(r, ENVRC_PARENT, ".envrc", line);
	} else if (streq(c, "use") && n_args && word_is(&args[0], "nix")) {
		refs_use_nix(r, args + 1, n_args - 1, line);
	} else if (streq(c, "use_nix")) {
		refs_use_nix(r, args, n_args, line);
	} else if (streq(c, "use") && n_args && word_is(&args[0], "flake")) {
		refs_use_flake(r, args + 1, n_args - 1, line);
	} else if (streq(c, "use_flake")) {
		refs_use_flake(r, args, n_args, line);
	} else if ((streq(c, "use") && n_args && word_is(&args[0], "vim")) || streq(c, "use_vim")) {
		size_t k = streq(c, "use") ? 1 : 0;
		if (k < n_args)
			ref_word(r, ENVRC_SOURCE, &args[k], false);
		else
			ref_literal(r, ENVRC_SOURCE, ".vimrc.local", line);
	} else if (streq(c, "layout")) {
		refs_layout(r, args, n_args);
	} else if (streq(c, "export") || streq(c, "declare") || streq(c, "typeset") || streq(c, "local") ||
		   streq(c, "readonly")) {
		for (size_t k = 0; k < n_args; k++)
			ref_assignment(r, &args[k]);
	}
}

/* ---------------------------------------------------------------------
 * The text, command by command
 * ------------------------------------------------------------------ */

struct command {
	struct word *w;
	size_t n;
};

static void command_end(struct envrc_refs *r, struct command *c)
{
	refs_command(r, c->w, c->n);
	for (size_t i = 0; i < c->n; i++)
		word_free(&c->w[i]);
	c->n = 0;
}

static void skip_blanks(struct lexer *lx)
{
	while (lx->i < lx->n) {
		char c = lx->s[lx->i];
		if (c == ' ' || c == '\t') {
			lx->i++;
		} else if (c == '\\' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '\n') {
			lx->line++;
			lx->i += 2;
		} else {
			break;
		}
	}
}

/* The bodies of the here-documents begun on the line just ended: data,
 * not commands. One left open runs to the end, as in bash. */
static void skip_heredocs(struct lexer *lx)
{
	for (size_t k = 0; k < lx->n_pending; k++) {
		const struct heredoc *h = &lx->pending[k];
		while (lx->i < lx->n) {
			const char *s = lx->s + lx->i;
			const char *nl = memchr(s, '\n', lx->n - lx->i);
			size_t len = nl ? (size_t)(nl - s) : lx->n - lx->i;
			lx->i += len + (nl ? 1 : 0);
			lx->line += nl ? 1 : 0;
			if (h->strip_tabs)
				while (len && *s == '\t')
					s++, len--;
			if (len == strlen(h->delim) && memcmp(s, h->delim, len) == 0)
				break;
		}
		free(lx->pending[k].delim);
	}
	lx->n_pending = 0;
}

/* The word a redirection takes, which is not an argument; for <<, the
 * here-document's delimiter. */
static void redirect_target(struct lexer *lx, bool heredoc, bool strip_tabs)
{
	skip_blanks(lx);
	if (lx->i >= lx->n || is_word_end(lx->s[lx->i]))
		return;
	struct word w;
	lex_word(lx, &w, false);
	if (heredoc) {
		lx->pending = xgrow(lx->pending, lx->n_pending, sizeof(*lx->pending));
		lx->pending[lx->n_pending++] = (struct heredoc){ .delim = TAKE_PTR(w.text), .strip_tabs = strip_tabs };
	}
	word_free(&w);
}

static void lex_redirect(struct lexer *lx, struct command *cmd)
{
	const char *s = lx->s;
	size_t i = lx->i;
	/* 2>file: the digits before the operator are its descriptor */
	if (cmd->n && cmd->w[cmd->n - 1].end == i && !cmd->w[cmd->n - 1].quoted &&
	    strspn(cmd->w[cmd->n - 1].raw, "0123456789") == strlen(cmd->w[cmd->n - 1].raw)) {
		word_free(&cmd->w[--cmd->n]);
	}
	char c = s[i];
	char d = i + 1 < lx->n ? s[i + 1] : '\0';
	char e = i + 2 < lx->n ? s[i + 2] : '\0';
	if (c == '<' && d == '<' && e == '<') {
		lx->i += 3;
		redirect_target(lx, false, false);
	} else if (c == '<' && d == '<') {
		lx->i += 2;
		bool strip = e == '-';
		lx->i += strip;
		redirect_target(lx, true, strip);
	} else {
		lx->i += 1;
		if (d == '>' || d == '&' || (c == '>' && d == '|') || (c == '<' && d == '>'))
			lx->i++;
		redirect_target(lx, false, false);
	}
}

int envrc_refs(const char *text, size_t n, struct envrc_refs *ret, unsigned *ret_bad_line)
{
	*ret = (struct envrc_refs){ 0 };
	if (ret_bad_line)
		*ret_bad_line = 0;
	if (!text)
		text = "", n = 0;

	const char *nul = memchr(text, '\0', n);
	if (nul) {
		unsigned line = 1;
		for (const char *s = text; s < nul; s++)
			line += *s == '\n';
		if (ret_bad_line)
			*ret_bad_line = line;
		return -EBADMSG;
	}

	struct lexer lx = { .s = text, .n = n, .line = 1 };
	struct command cmd = { 0 };
	struct envrc_refs r = { 0 };
	while (!lx.bad_line) {
		skip_blanks(&lx);
		if (lx.i >= lx.n)
			break;
		char c = text[lx.i];
		char d = lx.i + 1 < n ? text[lx.i + 1] : '\0';
		if (c == '\n') {
			command_end(&r, &cmd);
			lx.i++;
			lx.line++;
			skip_heredocs(&lx);
		} else if (c == '#') {
			/* a comment: # where a word would start */
			while (lx.i < n && text[lx.i] != '\n')
				lx.i++;
		} else if (c == '&' && d == '>') {
			/* &> and &>>: both outputs to a file */
			lx.i++;
			lex_redirect(&lx, &cmd);
		} else if (c == '<' || c == '>') {
			lex_redirect(&lx, &cmd);
		} else if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
			/* ; ;; & && | || |& ( ): a new command starts */
			command_end(&r, &cmd);
			lx.i++;
			if ((c != '(' && c != ')' && d == c) || (c == '|' && d == '&'))
				lx.i++;
		} else {
			cmd.w = xgrow(cmd.w, cmd.n, sizeof(*cmd.w));
			lex_word(&lx, &cmd.w[cmd.n++], false);
		}
	}
	if (lx.bad_line) {
		/* left open: the shell refuses that command and cannot go on */
		for (size_t i = 0; i < cmd.n; i++)
			word_free(&cmd.w[i]);
		cmd.n = 0;
	} else {
		command_end(&r, &cmd);
	}
	free(cmd.w);
	for (size_t k = 0; k < lx.n_pending; k++)
		free(lx.pending[k].delim);
	free(lx.pending);

	if (lx.bad_line) {
		envrc_refs_free(&r);
		if (ret_bad_line)
			*ret_bad_line = lx.bad_line;
		return -EBADMSG;
	}
	*ret = r;
	return 0;
}

void envrc_refs_free(struct envrc_refs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	*r = (struct envrc_refs){ 0 };
}

const char *envrc_ref_kind_name(enum envrc_ref_kind kind)
{
	switch (kind) {
	case ENVRC_SOURCE: return "source";
	case ENVRC_DOTENV: return "dotenv";
	case ENVRC_PATH_DIR: return "path";
	case ENVRC_PARENT: return "parent";
	case ENVRC_NIX: return "nix";
	}
	return "?";
}
