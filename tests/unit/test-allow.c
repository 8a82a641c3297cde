/* policy/allow: what an allow item parses into, what it refuses and why,
 * how names and ports match (a wildcard covers the names beneath it, not
 * its own), the built-in lists, and the fix a refusal prints. Pure. */
#include "policy/allow.h"

#include "lib/util.h"
#include "tests/tap.h"

static struct allow_entry *v;
static size_t n;

static void reset(void)
{
	allow_entries_free(v, n);
	v = NULL;
	n = 0;
}

static int parse(const char *item, const char **why)
{
	*why = NULL;
	return allow_parse(item, SOURCE_OPTION_OF("--allow"), &v, &n, why);
}

static void test_parse(void)
{
	const char *why;
	is_int(parse("Registry.NPMjs.org.", &why), 0, "a name, any case, with its last dot");
	ok(n == 1 && streq(v[0].name, "registry.npmjs.org") && !v[0].wildcard && v[0].port == 0,
	   "kept lowercase, without the dot, on the default ports");
	is_int(parse("*.pythonhosted.org", &why), 0, "a wildcard");
	ok(n == 2 && v[1].wildcard && streq(v[1].name, "pythonhosted.org"), "the wildcard's name is what follows '*.'");
	is_int(parse("github.com:22", &why), 0, "a name with a port");
	ok(n == 3 && v[2].port == 22, "its port");
	_cleanup_free_ char *t0 = allow_entry_text(&v[0]), *t1 = allow_entry_text(&v[1]), *t2 = allow_entry_text(&v[2]);
	is_str(t0, "registry.npmjs.org", "printed: a name");
	is_str(t1, "*.pythonhosted.org", "printed: a wildcard");
	is_str(t2, "github.com:22", "printed: a port");
	reset();
	ok(parse("*.example.co.uk", &why) == 0 && parse("*.bbc.co.uk", &why) == 0 && parse("co.uk", &why) == 0 &&
		   parse("*.co.example", &why) == 0 && parse("*.company.de", &why) == 0 && n == 5,
	   "a wildcard beneath a domain in a country's second level, or beneath another second level, is taken");
	reset();

	static const struct {
		const char *item, *why;
	} bad[] = {
		{ "", "empty" },
		{ "10.0.0.1", "an address is not a name" },
		{ "10.0.0.1:443", "an address is not a name" },
		{ "::1", "an address is not a name" },
		{ "[::1]:443", "an address is not a name" },
		{ "x.com:0", "PORT a number" },
		{ "x.com:65536", "PORT a number" },
		{ "x.com:http", "PORT a number" },
		{ "x.com:", "PORT a number" },
		{ "x.com:53", "name server" },
		{ "x.com:853", "name server" },
		{ "*.com", "top-level" },
		{ "*.co.uk", "public second level" },
		{ "*.CO.UK.", "public second level" },
		{ "*.com.au", "public second level" },
		{ "*.or.jp", "public second level" },
		{ "*.co.jp:22", "public second level" },
		{ "http://a.test", "a URL: give the host name alone" },
		{ "https://a.test/x", "a URL: give the host name alone" },
		{ "http://a.test:8080", "a URL: give the host name alone" },
		{ "*", "a wildcard is" },
		{ "a.*.com", "a wildcard is" },
		{ "**.x.com", "a wildcard is" },
		{ "x..com", "an empty label" },
		{ ".x.com", "an empty label" },
		{ "x com", "not a host name" },
		{ "-a.test", "begins with '-'" },
		{ "a-.test", "ends with '-'" },
		{ "\xc3\xa4.test", "ASCII form (xn--" },
		{ "test.123", "an address, not a name" },
		{ "a.test:443:1", "HOST:PORT" },
		{ "fd00::1", "an address is not a name" },
		{ "x\\.com", "not a host name" },
		{ "localhost", "localhost" },
		{ "api.localhost", "localhost" },
		{ "@nope", "no such list" },
		{ "@npm:443", "no such list" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = parse(bad[i].item, &why);
		ok(r == -EINVAL && n == 0 && why && strstr(why, bad[i].why), "'%s' refused: %s", bad[i].item, bad[i].why);
		if (why && !strstr(why, bad[i].why))
			diag("why: %s", why);
		reset();
	}
	/* 63 bytes a label, 253 a name. */
	char label[70];
	memset(label, 'a', 64);
	label[64] = '\0';
	_cleanup_free_ char *long_label = xstrcat3(label, ".com", "");
	ok(parse(long_label, &why) == -EINVAL && strstr(why, "more than 63"), "a label of 64 bytes refused, so said");
	reset();
	label[63] = '\0';
	_cleanup_free_ char *ok_label = xstrcat3(label, ".com", "");
	ok(parse(ok_label, &why) == 0, "a label of 63 bytes taken");
	reset();
	struct text t = { 0 };
	for (int i = 0; i < 64; i++)
		text_adds(&t, "abc.");
	text_adds(&t, "com");
	_cleanup_free_ char *too_long = text_take(&t);
	ok(parse(too_long, &why) == -EINVAL && strstr(why, "253"), "a name of %zu bytes refused, so said", strlen(too_long));
	reset();
}

static void test_lists(void)
{
	const char *why;
	for (size_t i = 0; i < allow_n_lists; i++) {
		int r = parse(allow_lists[i].name, &why);
		ok(r == 0 && n > 0 && str_has_prefix(allow_lists[i].doc, "https://"),
		   "%s: %zu hosts, documented at %s", allow_lists[i].name, n, allow_lists[i].doc);
		for (size_t k = 0; k < n; k++)
			ok(v[k].list == allow_lists[i].name, "  %s%s: from %s", v[k].wildcard ? "*." : "", v[k].name,
			   allow_lists[i].name);
		reset();
	}
	parse("@npm", &why);
	ok(allow_match(v, n, "registry.npmjs.org", 443) != NULL, "@npm reaches registry.npmjs.org:443");
	ok(allow_match(v, n, "npmjs.org", 443) == NULL, "@npm does not reach npmjs.org");
	reset();
	ok(parse("@NPM", &why) == 0 && allow_match(v, n, "registry.npmjs.org", 443) != NULL, "a list's name in any case");
	reset();
	parse("a.test", &why);
	parse("A.test.", &why);
	parse("a.test:22", &why);
	parse("*.a.test", &why);
	ok(n == 3, "a name written twice is one entry (%zu entries)", n);
	reset();
}

static void test_match(void)
{
	const char *why;
	parse("example.com", &why);
	parse("*.files.example", &why);
	parse("git.example:22", &why);
	static const struct {
		const char *name;
		unsigned short port;
		bool allowed;
		const char *what;
	} cases[] = {
		{ "example.com", 443, true, "a name on 443" },
		{ "example.com", 80, true, "a name on 80" },
		{ "example.com", 8443, false, "a name on another port" },
		{ "example.com", 0, true, "a name, any port (a lookup)" },
		{ "www.example.com", 443, false, "a name beneath an exact one" },
		{ "xexample.com", 443, false, "a name that ends like an allowed one" },
		{ "a.files.example", 443, true, "a name beneath a wildcard" },
		{ "a.b.files.example", 443, true, "two labels beneath a wildcard" },
		{ "files.example", 443, false, "a wildcard's own name" },
		{ "afiles.example", 443, false, "a name that ends like a wildcard's" },
		{ "git.example", 22, true, "a name on its port" },
		{ "git.example", 443, false, "a name with a port, on 443" },
		{ "git.example", 0, true, "a name with a port, looked up" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ok((allow_match(v, n, cases[i].name, cases[i].port) != NULL) == cases[i].allowed, "%s: %s:%u %s", cases[i].what,
		   cases[i].name, cases[i].port, cases[i].allowed ? "allowed" : "not allowed");
	ok(allow_has_port(v, n, 443) && allow_has_port(v, n, 80) && allow_has_port(v, n, 22) && !allow_has_port(v, n, 8080),
	   "the ports: 443, 80, 22, not 8080");
	unsigned short ports[8];
	size_t k = allow_ports(v, n, ports, ARRAY_SIZE(ports));
	ok(k == 3 && ports[0] == 443 && ports[1] == 80 && ports[2] == 22, "each port once, in order (%zu)", k);
	reset();

	char out[ALLOW_NAME_MAX + 1];
	ok(allow_name_normalize("WWW.Example.COM.", out) == 0 && streq(out, "www.example.com"), "normalized: lowercase, no last dot");
	ok(allow_name_normalize("a\\.b", out) < 0, "a byte DNS would escape: no name");
	ok(allow_name_normalize("a..b", out) < 0, "an empty label: no name");
	ok(allow_name_normalize(".", out) < 0, "the root: no name");
	ok(allow_name_normalize("-a.test", out) < 0 && allow_name_normalize("a-.test", out) < 0 &&
		   allow_name_normalize("a.test-", out) < 0 && allow_name_normalize("a-b._c.test", out) == 0,
	   "a label neither begins nor ends with '-' ('_' may begin one)");
	_cleanup_free_ char *f1 = allow_fix("example.com", 443), *f2 = allow_fix("example.com", 22);
	is_str(f1, "--allow example.com", "the fix on 443");
	is_str(f2, "--allow example.com:22", "the fix on another port");
	/* Never a fix the option refuses. */
	static const struct {
		const char *name;
		unsigned short port;
		const char *says;
	} none[] = {
		{ "example.com", 53, "name lookups are stockade's own" },
		{ "example.com", 853, "name lookups are stockade's own" },
		{ "a..b", 443, "'a..b' is not a name --allow takes: an empty label" },
		{ "api.localhost", 80, "localhost is this host" },
		{ "test.123", 443, "an address, not a name" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(none); i++) {
		_cleanup_free_ char *f = allow_fix(none[i].name, none[i].port);
		_cleanup_free_ char *fi = allow_fix_ini(none[i].name, none[i].port);
		_cleanup_free_ char *fn = allow_name_fix(none[i].name, none[i].port);
		ok(str_has_prefix(f, "none: ") && strstr(f, none[i].says) && streq(f, fi) && str_has_prefix(fn, f) &&
			   !str_has_prefix(fn, "--allow"),
		   "no fix for %s:%u: %s", none[i].name, none[i].port, none[i].says);
		if (!strstr(f, none[i].says))
			diag("fix: %s", f);
		/* And what it says is true: the option refuses it. */
		char item[300];
		snprintf(item, sizeof(item), "%s:%u", none[i].name, none[i].port);
		ok(parse(item, &why) == -EINVAL, "  --allow %s is refused", item);
		reset();
	}
	_cleanup_free_ char *fi = allow_fix_ini("example.com", 22);
	is_str(fi, "--allow example.com:22, or in stockade.ini: allow = example.com:22", "the fix with stockade.ini's");
}

int main(void)
{
	test_parse();
	test_lists();
	test_match();
	return tap_done();
}
