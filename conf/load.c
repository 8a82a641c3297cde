/* stockade.ini through inih. inih is given the file a line at a time by a
 * reader of ours, which counts lines (inih's handler has no line number
 * in Debian's build), takes away leading blanks (so that no line is ever
 * a continuation of the one before: a key is on one line), refuses a line
 * longer than inih's buffer rather than have it cut, and reads each
 * section header itself (inih says nothing of a section without keys,
 * and an unknown one must not pass unseen). */
#include "conf/conf.h"

#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/sha256.h"
#include "lib/util.h"
#include "policy/allow.h"
#include "policy/layer.h"

const char *const conf_section_names[] = { "sandbox", "profile", "command", NULL };

/* The longest line, in bytes, without its end. */
#define CONF_MAX_LINE 4096
/* The largest file: far beyond any real one, so that a hostile one
 * cannot make a run read a disk's worth. */
#define CONF_MAX_FILE (1u << 20)

struct parser {
	const char *path;
	const char *text;
	size_t len, off;
	unsigned line;
	struct conf_file *f;
	struct conf_section *cur;	/* the section the lines belong to now */
	struct conf_error *err;
	bool failed;
};

static int set_error(struct parser *ps, unsigned line, const char *key, char *msg)
{
	if (ps->failed) {
		free(msg);
		return 0;
	}
	ps->failed = true;
	*ps->err = (struct conf_error){
		.file = xstrdup(ps->path),
		.line = line,
		.key = key ? xstrdup(key) : NULL,
		.msg = msg,
	};
	return 0;
}

void conf_error_free(struct conf_error *e)
{
	free(e->file);
	free(e->key);
	free(e->msg);
	*e = (struct conf_error){ 0 };
}

static char *allowed_sections(void)
{
	return xstrdup("[sandbox], [profile NAME] or [command \"WORDS\"]");
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == '.';
}

/* "sandbox", "profile NAME", "profile \"NAME\"", "command \"WORDS\"". */
static int parse_header(struct parser *ps, const char *inner, size_t n)
{
	_cleanup_free_ char *s = xstrndup(inner, n);
	/* blanks around the name, as inih strips them */
	char *start = s;
	while (*start == ' ' || *start == '\t')
		start++;
	char *end = start + strlen(start);
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	struct conf_section sec = { .line = ps->line };
	const char *arg = NULL;
	if (streq(start, "sandbox")) {
		sec.kind = CONF_SANDBOX;
	} else if (str_has_prefix(start, "profile ") || str_has_prefix(start, "profile\t")) {
		sec.kind = CONF_PROFILE;
		arg = start + 8;
	} else if (str_has_prefix(start, "command ") || str_has_prefix(start, "command\t")) {
		sec.kind = CONF_COMMAND;
		arg = start + 8;
	} else {
		_cleanup_free_ char *allowed = allowed_sections();
		return set_error(ps, ps->line, NULL, xasprintf("unknown section [%s]: use %s", start, allowed));
	}
	if (arg) {
		while (*arg == ' ' || *arg == '\t')
			arg++;
		size_t an = strlen(arg);
		bool quoted = an >= 2 && arg[0] == '"' && arg[an - 1] == '"';
		_cleanup_free_ char *name = quoted ? xstrndup(arg + 1, an - 2) : xstrdup(arg);
		if (sec.kind == CONF_PROFILE) {
			bool ok = name[0] != '\0';
			for (const char *c = name; *c; c++)
				ok = ok && name_char(*c);
			if (!ok)
				return set_error(ps, ps->line, NULL,
						 xasprintf("invalid section [%s]: a profile's name is letters, digits, '-', '_' and '.'",
							   start));
			sec.name = TAKE_PTR(name);
		} else {
			if (!quoted || strchr(name, '"') || str_has_control(name))
				return set_error(ps, ps->line, NULL,
						 xasprintf("invalid section [%s]: use [command \"PROGRAM ARG...\"], the words in double quotes",
							   start));
			sec.words = strv_new();
			for (char *save = NULL, *w = strtok_r(name, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
				strv_add(&sec.words, w);
			if (!sec.words[0]) {
				strv_free(sec.words);
				return set_error(ps, ps->line, NULL,
						 xasprintf("invalid section [%s]: a command section names at least the program", start));
			}
			/* the words as one text, single-spaced */
			struct text t = { 0 };
			for (size_t i = 0; sec.words[i]; i++) {
				if (i)
					text_addc(&t, ' ');
				text_adds(&t, sec.words[i]);
			}
			sec.name = text_take(&t);
		}
	}
	for (size_t i = 0; i < ps->f->n; i++) {
		const struct conf_section *o = &ps->f->v[i];
		if (o->kind == sec.kind && (sec.kind == CONF_SANDBOX || streq(o->name, sec.name))) {
			unsigned first = o->line;
			free(sec.name);
			strv_free(sec.words);
			return set_error(ps, ps->line, NULL,
					 xasprintf("section [%s] again: it began at line %u already; one section of a name", start,
						   first));
		}
	}
	ps->f->v = xgrow(ps->f->v, ps->f->n, sizeof(*ps->f->v));
	ps->f->v[ps->f->n] = sec;
	ps->cur = &ps->f->v[ps->f->n++];
	return 1;
}

/* inih's reader: the next line, blanks in front taken away. */
static char *next_line(char *str, int num, void *stream)
{
	struct parser *ps = stream;
	if (ps->failed || ps->off >= ps->len)
		return NULL;
	const char *p = ps->text + ps->off;
	const char *nl = memchr(p, '\n', ps->len - ps->off);
	size_t n = nl ? (size_t)(nl - p) + 1 : ps->len - ps->off;
	ps->off += n;
	ps->line++;
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (n > (size_t)num - 1 || n - (nl ? 1 : 0) > CONF_MAX_LINE) {
		set_error(ps, ps->line, NULL, xasprintf("the line is longer than %u bytes", CONF_MAX_LINE));
		return NULL;
	}
	memcpy(str, p, n);
	str[n] = '\0';
	if (n && p[0] == '[') {
		/* inih stops at the first ']' too, and ignores what follows */
		const char *close = memchr(p, ']', n);
		if (close) {
			/* after the header, only blanks or a comment */
			const char *rest = close + 1;
			while (rest < p + n && (*rest == ' ' || *rest == '\t' || *rest == '\r' || *rest == '\n'))
				rest++;
			if (rest < p + n && *rest != ';' && *rest != '#') {
				set_error(ps, ps->line, NULL,
					  xstrdup("text after the section's ']': put a comment after ';' or '#'"));
				return NULL;
			}
			if (parse_header(ps, p + 1, (size_t)(close - p - 1)) == 0)
				return NULL;
		}
	}
	return str;
}

/* The items of a comma-separated list, blanks around each taken away;
 * NULL when one is empty. */
static char **split_list(const char *value)
{
	char **v = strv_new();
	const char *p = value;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == 0) {
			strv_free(v);
			return NULL;
		}
		strv_push(&v, xstrndup(p, n));
		if (!comma)
			return v;
		p = comma + 1;
	}
}

/* What the key's setter takes: each item of a list, or the value whole;
 * NULL when an item of a list is empty. */
static char **key_items(const struct layer_key *k, const char *value)
{
	if (k->list)
		return split_list(value);
	char **v = strv_new();
	strv_push(&v, xstrdup(value));
	return v;
}

/* NULL when value suits the key, or what is wrong: the key's own setter
 * tried on a layer of its own. */
static char *check_value(const struct layer_key *k, const char *value)
{
	_cleanup_strv_ char **items = key_items(k, value);
	if (!items)
		return xasprintf("an empty item: use %s", k->allowed);
	struct layer scratch = { 0 };
	char *why = NULL;
	for (size_t i = 0; items[i] && !why; i++)
		(void)layer_key_set(k, &scratch, items[i], (struct source){ 0 }, &why);
	layer_free(&scratch);
	return why;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parser *ps = user;
	if (ps->failed)
		return 0;
	if (!ps->cur)
		return set_error(ps, ps->line, name,
				 xstrdup("a key before any section: put it under [sandbox], [profile NAME] or [command \"WORDS\"]"));
	const struct layer_key *k = layer_key_find(name);
	if (!k) {
		struct text t = { 0 };
		for (const struct layer_key *o = layer_keys; o->name; o++) {
			text_adds(&t, o == layer_keys ? "" : ", ");
			text_adds(&t, o->name);
		}
		_cleanup_free_ char *keys = text_take(&t);
		return set_error(ps, ps->line, name, xasprintf("unknown key: the keys are %s", keys));
	}
	for (size_t i = 0; i < ps->cur->n; i++)
		if (ps->cur->v[i].key == k->name)
			return set_error(ps, ps->line, name,
					 xasprintf("the key again in this section: it is set at line %u already; one value "
						   "(a list, separated by commas) per key",
						   ps->cur->v[i].line));
	_cleanup_free_ char *wrong = check_value(k, value);
	if (wrong)
		return set_error(ps, ps->line, name, xasprintf("invalid value '%s': %s", value, wrong));
	ps->cur->v = xgrow(ps->cur->v, ps->cur->n, sizeof(*ps->cur->v));
	ps->cur->v[ps->cur->n++] = (struct conf_entry){ .key = k->name, .value = xstrdup(value), .line = ps->line };
	return 1;
}

/* A section's allow list implies network = allow; a network of another
 * mode beside it says two things at once. */
static void check_allow_mode(struct parser *ps)
{
	for (size_t i = 0; i < ps->f->n && !ps->failed; i++) {
		const struct conf_section *sec = &ps->f->v[i];
		const struct conf_entry *net = NULL, *allow = NULL;
		for (size_t k = 0; k < sec->n; k++) {
			if (streq(sec->v[k].key, "network"))
				net = &sec->v[k];
			else if (streq(sec->v[k].key, "allow"))
				allow = &sec->v[k];
		}
		if (net && allow && !streq(net->value, "allow"))
			set_error(ps, net->line, "network",
				  xasprintf("'%s' beside allow (line %u): the allow list is for network = allow, which it "
					    "sets by itself; take one of the two away",
					    net->value, allow->line));
	}
}

/* The first line holding a byte that is not part of well-formed UTF-8 (or
 * a NUL, then *ret_nul), or 0. */
static unsigned bad_utf8_line(const char *text, size_t len, bool *ret_nul)
{
	*ret_nul = false;
	const unsigned char *s = (const unsigned char *)text;
	unsigned line = 1;
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		if (c == '\n')
			line++;
		if (c == 0) {
			*ret_nul = true;
			return line;
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t n;
		uint32_t cp;
		if (c >= 0xc2 && c <= 0xdf) {
			n = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 4;
			cp = c & 0x07;
		} else {
			return line;
		}
		if (i + n > len)
			return line;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return line;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
			return line;
		i += n;
	}
	return 0;
}

void conf_file_free(struct conf_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct conf_section *s = &f->v[i];
		for (size_t k = 0; k < s->n; k++)
			free(s->v[k].value);
		free(s->v);
		free(s->name);
		strv_free(s->words);
	}
	free(f->v);
	free(f->path);
	free(f->dir);
	free(f->text);
	*f = (struct conf_file){ 0 };
}

const char *conf_file_hash(struct conf_file *f)
{
	if (!f->hash[0])
		sha256_hex(f->text ? f->text : "", f->len, f->hash);
	return f->hash;
}

int conf_parse(const char *path, const char *text, size_t len, struct conf_file *ret, struct conf_error *err)
{
	*ret = (struct conf_file){ .path = xstrdup(path) };
	*err = (struct conf_error){ 0 };
	ret->dir = path_parent(path, NULL);
	if (!ret->dir || !ret->dir[0]) {
		free(ret->dir);
		ret->dir = xstrdup(".");
	}
	ret->text = xmalloc(len + 1);
	memcpy(ret->text, text, len);
	ret->text[len] = '\0';
	ret->len = len;
	/* A byte order mark, which editors on Windows write first: not part
	 * of the first line (the hash stays of every byte read). */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	struct parser ps = { .path = path, .text = text, .len = len, .f = ret, .err = err };
	bool nul;
	unsigned bad = bad_utf8_line(text, len, &nul);
	if (bad) {
		set_error(&ps, bad, NULL,
			  xstrdup(nul ? "the line holds a NUL byte: a settings file is text, without NUL bytes"
				      : "the line is not UTF-8 text"));
		conf_file_free(ret);
		return -EINVAL;
	}
#ifdef STOCKADE_INIH_RUNTIME
	/* Debian's inih takes these at run time: a line as long as ours,
	 * no continuation lines (the reader makes none anyway), the first
	 * error ends the parse. Upstream's (Homebrew's, Fedora's) has them
	 * fixed at its build: the reader strips leading blanks, so there is
	 * no continuation line either, stops at the first error, and names a
	 * line longer than that inih's buffer. */
	ini_max_line = CONF_MAX_LINE + 3;
	ini_allow_multiline = false;
	ini_stop_on_first_error = true;
	ini_allow_no_value = false;
#endif
	int r = ini_parse_stream(next_line, &ps, on_key, &ps);
	if (!ps.failed && r > 0)
		set_error(&ps, (unsigned)r, NULL,
			  xstrdup("cannot parse the line: use [section], key = value, or a comment starting with ; or #"));
	else if (!ps.failed && r < 0)
		set_error(&ps, 0, NULL, xstrdup("cannot parse the file: out of memory"));
	if (!ps.failed)
		check_allow_mode(&ps);
	if (ps.failed) {
		conf_file_free(ret);
		return -EINVAL;
	}
	return 0;
}

int conf_read(const char *path, enum conf_origin origin, struct conf_file *ret, struct conf_error *err)
{
	*ret = (struct conf_file){ 0 };
	*err = (struct conf_error){ 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		*err = (struct conf_error){
			.file = xstrdup(path),
			.msg = e == ELOOP ? xstrdup("cannot read it: it is a symlink (stockade reads the file itself, not a link)")
					  : xasprintf("cannot read it: %s", strerror(e)),
		};
		return -e;
	}
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	/* a byte past the limit: read_small_fd stops at what it is asked for,
	 * and a file cut there would drop its last keys without a word */
	int r = read_small_fd(fd, CONF_MAX_FILE + 1, &text, &len);
	if (r == 0 && len > CONF_MAX_FILE)
		r = -EFBIG;
	if (r < 0) {
		*err = (struct conf_error){
			.file = xstrdup(path),
			.msg = r == -EFBIG ? xasprintf("cannot read it: larger than 1 MiB (%u bytes), the most a settings file may hold",
						       CONF_MAX_FILE)
					   : xasprintf("cannot read it: %s", strerror(-r)),
		};
		return r;
	}
	r = conf_parse(path, text, len, ret, err);
	if (r == 0)
		ret->origin = origin;
	return r;
}

const struct conf_section *conf_find_section(const struct conf_file *f, enum conf_kind kind, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].kind == kind && (kind == CONF_SANDBOX || streq(f->v[i].name, name)))
			return &f->v[i];
	return NULL;
}

void conf_section_layer(const struct conf_file *f, const struct conf_section *s, struct layer *l)
{
	*l = (struct layer){ .dir = xstrdup(f->dir), .needs_trust = !f->trusted };
	struct source allow_source = { 0 };
	for (size_t i = 0; i < s->n; i++) {
		const struct conf_entry *e = &s->v[i];
		struct source src = { .kind = SOURCE_FILE, .file = f->path, .line = e->line, .key = e->key };
		const struct layer_key *k = layer_key_find(e->key);
		if (!k)
			continue;	/* the loader took only known keys */
		_cleanup_strv_ char **items = key_items(k, e->value);
		for (size_t j = 0; items && items[j]; j++) {
			_cleanup_free_ char *why = NULL;
			(void)layer_key_set(k, l, items[j], src, &why);	/* checked at loading */
		}
		if (streq(k->name, "allow"))
			allow_source = src;
	}
	/* The allow list sets its mode, where the section sets none. */
	if (l->n_allow && !l->net_set) {
		l->net = NET_ALLOW;
		l->net_set = true;
		l->net_source = allow_source;
	}
}
