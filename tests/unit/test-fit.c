/* fit: the backend a run gets, as a table of what the host is known to
 * do and what the policy asks; and what each backend's plan says it
 * enforces and leaves out on hosts of each kind. */
#include "jail/fit.h"

#include "jail/plan.h"
#include "lib/util.h"
#include "tests/tap.h"

static const struct {
	const char *what;
	bool probed, userns;
	int abi;
	enum run_mode mode;
	enum backend asked, want;
} choices[] = {
	{ "a run's cheap probe: the namespace jail, tried", false, false, 7, MODE_AUTO, BACKEND_AUTO, BACKEND_NAMESPACES },
	{ "a run's cheap probe without Landlock: still tried", false, false, 0, MODE_AUTO, BACKEND_AUTO, BACKEND_NAMESPACES },
	{ "doctor found user namespaces", true, true, 7, MODE_AUTO, BACKEND_AUTO, BACKEND_NAMESPACES },
	{ "doctor found them refused, Landlock enforced", true, false, 4, MODE_AUTO, BACKEND_AUTO, BACKEND_LANDLOCK },
	{ "doctor found both missing: nothing", true, false, 0, MODE_AUTO, BACKEND_AUTO, BACKEND_NONE },
	{ "--backend landlock where namespaces work", true, true, 7, MODE_AUTO, BACKEND_LANDLOCK, BACKEND_LANDLOCK },
	{ "--backend namespaces where they are refused", true, false, 7, MODE_AUTO, BACKEND_NAMESPACES, BACKEND_NAMESPACES },
	{ "--mode required does not choose", false, false, 7, MODE_REQUIRED, BACKEND_AUTO, BACKEND_NAMESPACES },
	{ "--mode off: none, whatever else", false, false, 7, MODE_OFF, BACKEND_LANDLOCK, BACKEND_NONE },
};

static void test_choose(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(choices); i++) {
		struct host h = { .probed = choices[i].probed, .userns = choices[i].userns, .landlock_abi = choices[i].abi, .yama = -1 };
		struct policy p;
		policy_init(&p);
		p.mode = choices[i].mode;
		p.backend = choices[i].asked;
		const char *why = NULL;
		enum backend b = fit_choose(&p, &h, &why);
		ok(b == choices[i].want && !str_empty(why), "%s: %s (%s)", choices[i].what, backend_name(b), why ? why : "?");
		policy_free(&p);
	}
}

static bool has_gap(const struct report *rep, const char *what)
{
	for (size_t i = 0; i < rep->n_gaps; i++)
		if (streq(rep->gaps[i].what, what))
			return true;
	return false;
}

static bool has_line(const struct report *rep, const char *part)
{
	for (size_t i = 0; rep->enforced[i]; i++)
		if (strstr(rep->enforced[i], part))
			return true;
	return false;
}

/* What a plan says of itself, on hosts that differ in one thing each. */
static void test_describe(void)
{
	struct policy p;
	policy_init(&p);
	p.uid = 1000;

	struct {
		const char *what;
		enum backend backend;
		int abi, yama;
		enum net_mode net;
		bool cgroup;
		const char *enforced;	/* a line that must be there */
		const char *gap;	/* a gap that must be there, or NULL for none of landlock's */
		size_t n_gaps;
	} cases[] = {
		{ "namespaces, ABI 7", BACKEND_NAMESPACES, 7, -1, NET_LOOPBACK, false, "Landlock ABI 7 on top", NULL, 0 },
		{ "namespaces without Landlock", BACKEND_NAMESPACES, 0, -1, NET_LOOPBACK, false, "namespaces: user, mount", "landlock", 1 },
		{ "namespaces, --net on below ABI 6", BACKEND_NAMESPACES, 5, -1, NET_ON, false, "namespaces: user, mount, pid, ipc, uts, cgroup", "abstract unix sockets", 1 },
		{ "landlock, ABI 7, a cgroup", BACKEND_LANDLOCK, 7, -1, NET_LOOPBACK, true, "the supervisor allows local addresses only", "/proc of other processes", 3 },
		{ "landlock without a cgroup", BACKEND_LANDLOCK, 7, -1, NET_OFF, false, "processes: all die with stockade", "/proc of other processes", 3 },
		{ "landlock under Yama 2", BACKEND_LANDLOCK, 7, 2, NET_LOOPBACK, true, "unix sockets: the supervisor", "network and unix sockets", 4 },
		{ "landlock, ABI 3", BACKEND_LANDLOCK, 3, -1, NET_LOOPBACK, true, "filesystem: Landlock ABI 3", "landlock", 5 },
		{ "--mode off", BACKEND_NONE, 7, -1, NET_LOOPBACK, false, NULL, "everything", 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct host h = { .landlock_abi = cases[i].abi, .yama = cases[i].yama };
		p.net = cases[i].net;
		struct plan pl;
		plan_init(&pl, cases[i].backend);
		is_int(plan_filter(&pl, &p, &h), 0, "%s: the filter", cases[i].what);
		struct report rep;
		report_init(&rep);
		plan_describe(&pl, &p, &h, cases[i].cgroup, &rep);
		ok(streq(rep.backend, backend_name(cases[i].backend)), "%s: the report names the backend", cases[i].what);
		if (cases[i].enforced)
			ok(has_line(&rep, cases[i].enforced), "%s: enforced '%s'", cases[i].what, cases[i].enforced);
		if (!ok(rep.n_gaps == cases[i].n_gaps && (!cases[i].gap || has_gap(&rep, cases[i].gap)),
			"%s: %zu part(s) unenforced%s%s", cases[i].what, cases[i].n_gaps, cases[i].gap ? ", among them " : "",
			cases[i].gap ? cases[i].gap : ""))
			for (size_t k = 0; k < rep.n_gaps; k++)
				diag("gap: %s: %s", rep.gaps[k].what, rep.gaps[k].why);
		if (cases[i].backend == BACKEND_LANDLOCK)
			ok(strv_contains(rep.supervises, "connect") && strv_contains(rep.supervises, "refused system calls") &&
				   strv_contains(rep.supervises, "listen") == (cases[i].net == NET_LOOPBACK),
			   "%s: the listener decides connect (and listen with loopback)", cases[i].what);
		report_free(&rep);
		plan_free(&pl);
	}
	policy_free(&p);
}

int main(void)
{
	test_choose();
	test_describe();
	return tap_done();
}
