#include "policy/allow.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>

#include "lib/util.h"

/* The common registries, each as its own documentation names the hosts a
 * client fetches from. A list is what a package manager's install needs,
 * nothing of the registry's web site beyond it. */
static const char *const npm_entries[] = {
	/* https://docs.npmjs.com/cli/using-npm/registry: metadata and
	 * tarballs both come from the registry itself. */
	"registry.npmjs.org", NULL,
};
static const char *const pypi_entries[] = {
	/* https://docs.pypi.org/api/: the index (pypi.org/simple) and the
	 * files it links to, on files.pythonhosted.org. */
	"pypi.org", "files.pythonhosted.org", NULL,
};
static const char *const crates_entries[] = {
	/* https://doc.rust-lang.org/cargo/reference/registry-index.html: the
	 * sparse index (index.crates.io), its config.json's "dl" for the
	 * .crate files (static.crates.io), and the web API (crates.io). */
	"crates.io", "index.crates.io", "static.crates.io", NULL,
};
static const char *const go_entries[] = {
	/* https://go.dev/ref/mod#module-proxy and #checksum-database: GOPROXY
	 * and GOSUMDB's defaults. */
	"proxy.golang.org", "sum.golang.org", NULL,
};
static const char *const github_entries[] = {
	/* https://docs.github.com/en/rest/meta/meta ("domains"): the site
	 * and git over HTTPS, its API, archives (codeload), and release
	 * assets and raw files on githubusercontent.com. */
	"github.com", "api.github.com", "codeload.github.com", "*.githubusercontent.com", NULL,
};

const struct allow_list allow_lists[] = {
	{ "@npm", npm_entries, "https://docs.npmjs.com/cli/using-npm/registry" },
	{ "@pypi", pypi_entries, "https://docs.pypi.org/api/" },
	{ "@crates", crates_entries, "https://doc.rust-lang.org/cargo/reference/registry-index.html" },
	{ "@go", go_entries, "https://go.dev/ref/mod#module-proxy" },
	{ "@github", github_entries, "https://docs.github.com/en/rest/meta/meta" },
};
const size_t allow_n_lists = ARRAY_SIZE(allow_lists);

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* The name in normal form into out, or what is wrong with it. */
static const char *normalize(const char *name, char out[static ALLOW_NAME_MAX + 1])
{
	size_t n = strlen(name);
	if (n && name[n - 1] == '.')
		n--;
	if (n == 0)
		return "an empty name";
	if (n > ALLOW_NAME_MAX)
		return "a name of more than 253 characters";
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == '.') {
			if (label == 0)
				return "an empty label (two dots together, or a dot first)";
			if (out[i - 1] == '-')
				return "a label that ends with '-'";
			label = 0;
		} else if ((unsigned char)c >= 0x80) {
			return "a name in another script: write it in its ASCII form (xn--...)";
		} else if (!label_char(c)) {
			return "not a host name: letters, digits, '-' and '_' in labels separated by dots";
		} else if (label == 0 && c == '-') {
			return "a label that begins with '-'";
		} else if (++label > 63) {
			return "a label of more than 63 characters";
		}
		out[i] = c;
	}
	if (label == 0)
		return "an empty label (two dots together, or a dot first)";
	if (out[n - 1] == '-')
		return "a label that ends with '-'";
	out[n] = '\0';
	/* A last label of digits alone is no top-level domain: an IPv4
	 * address, or one cut short. */
	const char *last = strrchr(out, '.');
	last = last ? last + 1 : out;
	if (strspn(last, "0123456789") == strlen(last))
		return "a last label of digits alone: an address, not a name";
	return NULL;
}

int allow_name_normalize(const char *name, char out[static ALLOW_NAME_MAX + 1])
{
	return normalize(name, out) ? -EINVAL : 0;
}

void allow_entries_free(struct allow_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

struct allow_entry allow_entry_copy(const struct allow_entry *e)
{
	struct allow_entry c = *e;
	c.name = xstrdup(e->name);
	return c;
}

char *allow_entry_text(const struct allow_entry *e)
{
	char num[21], port[23] = "";
	if (e->port)
		stpcpy(stpcpy(port, ":"), fmt_u64(num, e->port));
	return xstrcat3(e->wildcard ? "*." : "", e->name, port);
}

bool allow_entry_same(const struct allow_entry *a, const struct allow_entry *b)
{
	return a->wildcard == b->wildcard && a->port == b->port && streq(a->name, b->name);
}

static void push(struct allow_entry **v, size_t *n, const char *name, bool wildcard, unsigned short port,
		 const char *list, struct source source)
{
	/* Once in a list: a name written twice, or in a list and by
	 * itself, is one entry (the first), one grant and one widening. */
	struct allow_entry e = { .name = (char *)name, .wildcard = wildcard, .port = port };
	for (size_t i = 0; i < *n; i++)
		if (allow_entry_same(&(*v)[i], &e))
			return;
	*v = xgrow(*v, *n, sizeof(**v));
	(*v)[(*n)++] = (struct allow_entry){ .name = xstrdup(name), .wildcard = wildcard, .port = port, .list = list,
					     .source = source };
}

/* One host, as written in a list or by the user: 0 and the entry added,
 * or -EINVAL with why. */
/* A second level a country's registry gives out names beneath (co.uk,
 * com.au, or.jp): a wildcard there covers every company of the country,
 * as one beneath a top-level domain covers everyone. Not the Public
 * Suffix List (a data file stockade does not carry, nor its private
 * part): the generic second levels of the two-letter country domains,
 * which is where nearly all of that list's two-label ICANN entries are. */
static bool country_second_level(const char *name)
{
	static const char *const generic[] = { "ac", "co", "com", "edu", "gob", "go", "gov", "ltd", "me", "mil",
					       "ne", "net", "nic", "or", "org", "plc", "sch" };
	const char *dot = strchr(name, '.');
	if (!dot || strchr(dot + 1, '.') || strlen(dot + 1) != 2)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(generic); i++)
		if (strlen(generic[i]) == (size_t)(dot - name) && strncmp(name, generic[i], (size_t)(dot - name)) == 0)
			return true;
	return false;
}

static int parse_host(const char *item, const char *list, struct source source, struct allow_entry **v, size_t *n,
		      const char **ret_why)
{
	if (strstr(item, "://")) {
		*ret_why = "a URL: give the host name alone (example.com, not https://example.com/)";
		return -EINVAL;
	}
	const char *colon = strchr(item, ':');
	if (colon && strchr(colon + 1, ':')) {
		/* An IPv6 address, bare or as [ADDRESS]:PORT; else a port
		 * written twice. */
		unsigned char a6[sizeof(struct in6_addr)];
		_cleanup_free_ char *inner = item[0] == '[' && strchr(item, ']')
						     ? xstrndup(item + 1, (size_t)(strchr(item, ']') - item - 1))
						     : xstrdup(item);
		*ret_why = inet_pton(AF_INET6, inner, a6) == 1
				   ? "an address is not a name: allow takes host names (--connect gives one service of the host)"
				   : "use HOST or HOST:PORT, PORT a number from 1 to 65535";
		return -EINVAL;
	}
	unsigned short port = 0;
	if (colon) {
		const char *p = colon + 1;
		unsigned long v_ = 0;
		size_t digits = strspn(p, "0123456789");
		if (digits == 0 || digits > 5 || p[digits] != '\0') {
			*ret_why = "use HOST or HOST:PORT, PORT a number from 1 to 65535";
			return -EINVAL;
		}
		for (size_t i = 0; i < digits; i++)
			v_ = v_ * 10 + (unsigned long)(p[i] - '0');
		if (v_ == 0 || v_ > 65535) {
			*ret_why = "use HOST or HOST:PORT, PORT a number from 1 to 65535";
			return -EINVAL;
		}
		port = (unsigned short)v_;
		/* A resolver reached directly is a way out for anything the
		 * command wants to say: names are answered by stockade. */
		if (port == 53 || port == 853) {
			*ret_why = "a name server is not a host to allow: stockade answers the run's lookups itself "
				   "(DNS over TCP and over TLS on 53 and 853 never leave)";
			return -EINVAL;
		}
	}
	_cleanup_free_ char *host = colon ? xstrndup(item, (size_t)(colon - item)) : xstrdup(item);
	bool wildcard = str_has_prefix(host, "*.");
	const char *bare = wildcard ? host + 2 : host;
	if (strchr(bare, '*')) {
		*ret_why = "a wildcard is '*.' before a name (*.example.com: the names beneath example.com)";
		return -EINVAL;
	}
	unsigned char addr[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, bare, addr) == 1 || inet_pton(AF_INET6, bare, addr) == 1) {
		*ret_why = "an address is not a name: allow takes host names (--connect gives one service of the host)";
		return -EINVAL;
	}
	char name[ALLOW_NAME_MAX + 1];
	const char *fault = normalize(bare, name);
	if (fault) {
		*ret_why = fault;
		return -EINVAL;
	}
	if (wildcard && !strchr(name, '.')) {
		*ret_why = "a wildcard beneath a top-level domain covers too much: name the domain (*.example.com)";
		return -EINVAL;
	}
	if (wildcard && country_second_level(name)) {
		*ret_why = "a wildcard beneath a country's public second level (co.uk, com.au, or.jp) covers too much: "
			   "name the domain (*.example.co.uk)";
		return -EINVAL;
	}
	/* localhost is the host's own loopback, which allow never reaches
	 * (the run's own loopback is the command's already). */
	if (streq(name, "localhost") || str_has_suffix(name, ".localhost")) {
		*ret_why = "localhost is this host: the run reaches its own listeners already, and a host's service "
			   "with --connect";
		return -EINVAL;
	}
	push(v, n, name, wildcard, port, list, source);
	return 0;
}

int allow_parse(const char *item, struct source source, struct allow_entry **v, size_t *n, const char **ret_why)
{
	if (str_empty(item)) {
		*ret_why = "an empty name";
		return -EINVAL;
	}
	if (item[0] != '@')
		return parse_host(item, NULL, source, v, n, ret_why);
	for (size_t i = 0; i < allow_n_lists; i++) {
		if (strcasecmp(allow_lists[i].name, item) != 0)
			continue;
		for (const char *const *e = allow_lists[i].entries; *e; e++)
			if (parse_host(*e, allow_lists[i].name, source, v, n, ret_why) < 0)
				return -EINVAL;
		return 0;
	}
	*ret_why = "no such list: the lists are @npm, @pypi, @crates, @go and @github";
	return -EINVAL;
}

static bool name_matches(const struct allow_entry *e, const char *name)
{
	if (!e->wildcard)
		return streq(e->name, name);
	size_t nl = strlen(name), el = strlen(e->name);
	return nl > el + 1 && name[nl - el - 1] == '.' && streq(name + nl - el, e->name);
}

static bool port_matches(const struct allow_entry *e, unsigned short port)
{
	return port == 0 || (e->port ? e->port == port : port == 443 || port == 80);
}

const struct allow_entry *allow_match(const struct allow_entry *v, size_t n, const char *name, unsigned short port)
{
	for (size_t i = 0; i < n; i++)
		if (port_matches(&v[i], port) && name_matches(&v[i], name))
			return &v[i];
	return NULL;
}

bool allow_has_port(const struct allow_entry *v, size_t n, unsigned short port)
{
	for (size_t i = 0; i < n; i++)
		if (port_matches(&v[i], port))
			return true;
	return false;
}

static size_t add_port(unsigned short *out, size_t k, size_t max, unsigned short port)
{
	for (size_t i = 0; i < k && i < max; i++)
		if (out[i] == port)
			return k;
	if (k < max)
		out[k] = port;
	return k + 1;
}

size_t allow_ports(const struct allow_entry *v, size_t n, unsigned short *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].port) {
			k = add_port(out, k, max, v[i].port);
			continue;
		}
		k = add_port(out, k, max, 443);
		k = add_port(out, k, max, 80);
	}
	return k < max ? k : max;
}

char *allow_fix(const char *name, unsigned short port)
{
	char num[21];
	/* Never a fix the option refuses: what parse_host says of it. */
	if (port == 53 || port == 853)
		return xstrdup("none: name lookups are stockade's own, answered for the allowed names (a name server is "
			       "never a host to allow)");
	struct allow_entry *v = NULL;
	size_t n = 0;
	const char *why = NULL;
	if (parse_host(name, NULL, SOURCE_OPTION_OF("--allow"), &v, &n, &why) < 0)
		return xasprintf("none: '%s' is not a name --allow takes: %s", name, why);
	allow_entries_free(v, n);
	if (port == 0 || port == 443 || port == 80)
		return xstrcat3("--allow ", name, "");
	_cleanup_free_ char *with = xstrcat3(name, ":", fmt_u64(num, port));
	return xstrcat3("--allow ", with, "");
}

char *allow_fix_ini(const char *name, unsigned short port)
{
	char *opt = allow_fix(name, port);
	if (!str_has_prefix(opt, "--allow "))
		return opt;
	char *both = xstrcat3(opt, ", or in stockade.ini: allow = ", opt + strlen("--allow "));
	free(opt);
	return both;
}

char *allow_name_fix(const char *name, unsigned short port)
{
	_cleanup_free_ char *opt = allow_fix(name, port);
	if (!str_has_prefix(opt, "--allow "))
		return xasprintf("%s; or " ALLOW_NET_FIX, opt);
	return xasprintf("%s (this name only), or in stockade.ini: allow = %s, or " ALLOW_NET_FIX, opt,
			 opt + strlen("--allow "));
}
