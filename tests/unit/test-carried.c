/* carried: the run's policy as the jail carries it, for `stockade why`
 * inside the run. What goes in comes back: every rule with its access,
 * flags, origin and source (file and line, option, default), the network
 * mode and its source, each grant, the backend and the places; a path
 * with a tab, a newline or a backslash survives; and anything that is not
 * a policy stockade wrote is refused with the line that is wrong. */
#include "policy/carried.h"

#include <errno.h>

#include "lib/util.h"
#include "policy/why.h"
#include "tests/tap.h"

static void sample(struct policy *p, struct rule *place)
{
	policy_init(p);
	p->workspace = xstrdup("/w/proj");
	p->cwd = xstrdup("/w/proj/src");
	p->net = NET_LOOPBACK;
	p->net_source = (struct source){ .kind = SOURCE_FILE, .key = "network", .file = "/w/proj/stockade.ini", .line = 3 };
	policy_add_rule(p, "/w/proj", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("workspace"), "workspace");
	policy_add_rule(p, "/home/u/.ssh", ACCESS_HIDE, RULE_SYSTEM, SOURCE_DEFAULT_OF("credentials"), "default: credentials");
	policy_add_rule(p, "/w/proj/.git/hooks", ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH,
			SOURCE_DEFAULT_OF("trust hand-off"), "trust hand-off");
	policy_add_rule(p, "/data/odd\tname\nwith\\slash", ACCESS_READ, 0, SOURCE_OPTION_OF("--read"), NULL);
	policy_add_rule(p, "/srv/logs", ACCESS_READ, 0,
			(struct source){ .kind = SOURCE_FILE, .key = "read", .file = "/w/proj/stockade.ini", .line = 7 }, NULL);
	struct net_grant g = { 0 };
	const char *why = NULL;
	if (net_grant_parse(GRANT_CONNECT, "127.0.0.1:5432", &g, &why) == 0) {
		g.source = SOURCE_OPTION_OF("--connect");
		p->grants = xgrow(p->grants, p->n_grants, sizeof(*p->grants));
		p->grants[p->n_grants++] = g;
	}
	policy_sort(p);
	*place = (struct rule){ .path = (char *)"/tmp", .access = ACCESS_WRITE, .flags = RULE_FRESH,
				.source = SOURCE_DEFAULT_OF("private /tmp (tmpfs)"), .origin = (char *)"private /tmp (tmpfs)" };
}

static const struct rule *rule_on(const struct policy *p, const char *path, enum access a)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (streq(p->rules[i].path, path) && p->rules[i].access == a)
			return &p->rules[i];
	return NULL;
}

static void test_round_trip(void)
{
	struct policy p, back;
	struct rule place;
	sample(&p, &place);
	const struct rule_list places = { &place, 1 };
	p.places = &places;
	_cleanup_free_ char *text = policy_carry(&p, BACKEND_NAMESPACES);
	enum backend backend;
	unsigned line;
	is_int(policy_uncarry(text, &back, &backend, &line), 0, "the carried policy reads back");
	is_int((int)backend, BACKEND_NAMESPACES, "with its backend");
	is_str(back.workspace, "/w/proj", "its workspace");
	is_str(back.cwd, "/w/proj/src", "where the command started");
	is_int(back.net, NET_LOOPBACK, "the network mode");
	ok(back.net_source.kind == SOURCE_FILE && streq(back.net_source.file, "/w/proj/stockade.ini") &&
		   back.net_source.line == 3 && streq(back.net_source.key, "network"),
	   "and the file, line and key it came from");
	is_int((int)back.n_rules, (int)p.n_rules + 1, "every rule, and the place");
	const struct rule *r = rule_on(&back, "/home/u/.ssh", ACCESS_HIDE);
	ok(r && (r->flags & RULE_SYSTEM) && streq(r->origin, "default: credentials") && r->source.kind == SOURCE_DEFAULT,
	   "a built-in hide, with its origin");
	r = rule_on(&back, "/w/proj/.git/hooks", ACCESS_PROTECT);
	ok(r && r->flags == (RULE_HANDOFF | RULE_BENEATH), "a hand-off's flags");
	r = rule_on(&back, "/data/odd\tname\nwith\\slash", ACCESS_READ);
	ok(r && r->source.kind == SOURCE_OPTION && streq(r->source.key, "--read"),
	   "a path with a tab, a newline and a backslash, from an option");
	r = rule_on(&back, "/srv/logs", ACCESS_READ);
	ok(r && r->source.line == 7 && streq(r->source.file, "/w/proj/stockade.ini"), "a rule from a file line");
	r = rule_on(&back, "/tmp", ACCESS_WRITE);
	ok(r && (r->flags & RULE_FRESH), "the backend's place, as a rule of its own");
	ok(back.n_grants == 1 && back.grants[0].kind == GRANT_CONNECT && back.grants[0].port == 5432 &&
		   streq(back.grants[0].host, "127.0.0.1") && back.grants[0].source.kind == SOURCE_OPTION,
	   "the --connect grant");

	/* why answers the same from either. */
	static const char *const paths[] = { "/home/u/.ssh/id", "/w/proj/a", "/w/proj/.git/hooks/x", "/srv/logs/l",
					     "/tmp/t", "/etc/passwd" };
	bool same = true;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		for (int want = WANT_READ; want <= WANT_WRITE; want++) {
			struct why a, b;
			why_path(&p, paths[i], (enum why_want)want, &a);
			why_path(&back, paths[i], (enum why_want)want, &b);
			bool eq = a.allowed == b.allowed && streq(a.what, b.what) && streq(a.source, b.source) &&
				  (a.rule ? b.rule && streq(a.rule, b.rule) : !b.rule) &&
				  (a.fix ? b.fix && streq(a.fix, b.fix) : !b.fix);
			if (!eq)
				diag("%s: %s / %s", paths[i], a.source, b.source);
			same = same && eq;
			why_free(&a);
			why_free(&b);
		}
	ok(same, "why gives the same answer, rule, source and fix from the carried policy");
	struct why c;
	is_int(why_connect(&back, "127.0.0.1:5432", &c), 0, "why of a connect from it");
	ok(c.allowed && c.rule && streq(c.rule, "--connect 127.0.0.1:5432"), "the granted service is allowed by its grant");
	why_free(&c);
	policy_free(&back);
	policy_free(&p);
}

static void test_refused(void)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *what;
	} bad[] = {
		{ "", 1, "an empty file" },
		{ "stockade-policy 2\nbackend\tlandlock\n", 1, "another version" },
		{ "stockade-policy 1\nbackend\tlandlock\nworkspace\t/w\ncwd\t/w\nrule\tread\t0\trelative\t\t0\t\t\t0\n", 5,
		  "a relative path" },
		{ "stockade-policy 1\nbackend\tlandlock\nworkspace\t/w\ncwd\t/w\nrule\tgrant\t0\t/x\t\t0\t\t\t0\n", 5,
		  "an unknown access" },
		{ "stockade-policy 1\nbackend\tlandlock\nworkspace\t/w\ncwd\t/w\nrule\tread\t0\t/x\t\t9\t\t\t0\n", 5,
		  "an unknown source" },
		{ "stockade-policy 1\nbackend\tlandlock\nworkspace\t/w\ncwd\t/w\nnet\tloopback\t0\n", 5, "a short record" },
		{ "stockade-policy 1\nbackend\tlandlock\nsurprise\t1\n", 3, "an unknown record" },
		{ "stockade-policy 1\nbackend\tnowhere\n", 2, "an unknown backend" },
		{ "stockade-policy 1\nbackend\tlandlock\ncwd\t/w\n", 3, "no workspace" },
		{ "stockade-policy 1\nbackend\tlandlock\nworkspace\t/w\ncwd\t/w\ngrant\t0\th\t70000\t0\t\t0\t\t\t0\n", 5,
		  "a port out of range" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct policy p;
		enum backend b;
		unsigned line = 0;
		int r = policy_uncarry(bad[i].text, &p, &b, &line);
		ok(r == -EINVAL && line == bad[i].line, "refused: %s, at line %u", bad[i].what, bad[i].line);
		if (r != -EINVAL || line != bad[i].line)
			diag("got %d at line %u", r, line);
		policy_free(&p);
	}
}

int main(void)
{
	test_round_trip();
	test_refused();
	return tap_done();
}
