/* cli: cli_parse() on the command lines of DESIGN.md: options before the
 * command and `--`, the command's own options left alone, the doctor,
 * explain and trust subcommands, --help and --version, and usage errors
 * (-EINVAL with a message naming the option) for stockade to turn into
 * exit status 125. Pure: nothing is resolved. */
#include "jail/cli.h"

#include "lib/util.h"
#include "tests/tap.h"

struct parsed {
	int r;
	struct options o;
	char *error;
};

/* Parses a NULL-terminated word list; argv[0] is "stockade". */
static struct parsed parse_words(const char *const *words)
{
	size_t n = 0;
	while (words[n])
		n++;
	char **argv = xcalloc(n + 2, sizeof(char *));
	argv[0] = xstrdup("stockade");
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = xstrdup(words[i]);
	struct parsed p = { 0 };
	p.r = cli_parse((int)n + 1, argv, &p.o, &p.error);
	strv_free(argv);
	return p;
}

#define PARSE(...) parse_words((const char *const[]){ __VA_ARGS__, NULL })

static void parsed_free(struct parsed *p)
{
	options_free(&p->o);
	free(p->error);
}

static bool argv_is(char **got, const char *const *want)
{
	size_t i = 0;
	for (; want[i]; i++)
		if (!got || !got[i] || !streq(got[i], want[i]))
			return false;
	return got && got[i] == NULL;
}

#define ARGV_IS(got, ...) argv_is(got, (const char *const[]){ __VA_ARGS__, NULL })

static void diag_argv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		diag("  argv[%zu] = '%s'", i, v[i]);
}

static void test_run(void)
{
	struct parsed p = PARSE("ls", "-la");
	is_int(p.r, 0, "'stockade ls -la' parses");
	is_int(p.o.command, CMD_RUN, "it is a run");
	if (!ok(ARGV_IS(p.o.argv, "ls", "-la"), "the command keeps its own option -la"))
		diag_argv(p.o.argv);
	parsed_free(&p);

	p = PARSE("ls", "--net", "on", "-C", "/x");
	is_int(p.r, 0, "'stockade ls --net on -C /x' parses");
	ok(ARGV_IS(p.o.argv, "ls", "--net", "on", "-C", "/x"), "options after the command are the command's");
	ok(!p.o.layer.net_set && !p.o.layer.workspace, "and stockade's are untouched");
	parsed_free(&p);

	p = PARSE("--net", "on", "--", "npm", "ci");
	is_int(p.r, 0, "'stockade --net on -- npm ci' parses");
	ok(p.o.layer.net == NET_ON && p.o.layer.net_set && streq(p.o.layer.net_source.key, "--net"), "--net on given, its source the option");
	ok(ARGV_IS(p.o.argv, "npm", "ci"), "the command after --");
	parsed_free(&p);

	p = PARSE("--net=off", "--", "--weird-command", "--x");
	is_int(p.r, 0, "'--net=off -- --weird-command' parses");
	ok(p.o.layer.net == NET_OFF, "--net=off");
	ok(ARGV_IS(p.o.argv, "--weird-command", "--x"), "a command that looks like an option, after --");
	parsed_free(&p);

	p = PARSE("--", "doctor");
	is_int(p.r, 0, "'stockade -- doctor' parses");
	ok(p.o.command == CMD_RUN && ARGV_IS(p.o.argv, "doctor"), "runs a command named doctor");
	parsed_free(&p);

	p = PARSE("-C", "/ws", "--config", "/c.ini", "-p", "lint", "--read", "/r1", "--write", "/w1",
		  "--hide", ".env", "--read", "/r2", "--backend", "landlock", "--mode", "required",
		  "--home", "/h", "--hide-ignored", "--report", "/tmp/r.json", "-v", "--", "make", "test");
	is_int(p.r, 0, "every option at once parses");
	is_str(p.o.layer.workspace, "/ws", "-C");
	is_str(p.o.config, "/c.ini", "--config");
	is_str(p.o.profile, "lint", "-p");
	is_int(p.o.layer.n_rules, 4, "four path rules");
	if (p.o.layer.n_rules == 4) {
		ok(streq(p.o.layer.rules[0].path, "/r1") && p.o.layer.rules[0].access == ACCESS_READ &&
			   streq(p.o.layer.rules[0].source.key, "--read"),
		   "rule 1: --read /r1");
		ok(streq(p.o.layer.rules[1].path, "/w1") && p.o.layer.rules[1].access == ACCESS_WRITE &&
			   streq(p.o.layer.rules[1].source.key, "--write"),
		   "rule 2: --write /w1");
		ok(streq(p.o.layer.rules[2].path, ".env") && p.o.layer.rules[2].access == ACCESS_HIDE &&
			   streq(p.o.layer.rules[2].source.key, "--hide"),
		   "rule 3: --hide .env, as given (nothing resolved)");
		ok(streq(p.o.layer.rules[3].path, "/r2") && p.o.layer.rules[3].access == ACCESS_READ, "rule 4: --read /r2, in order");
	}
	is_int(p.o.layer.backend, BACKEND_LANDLOCK, "--backend landlock");
	is_int(p.o.layer.mode, MODE_REQUIRED, "--mode required");
	is_str(p.o.layer.home, "/h", "--home");
	ok(p.o.hide_ignored, "--hide-ignored");
	is_str(p.o.report, "/tmp/r.json", "--report");
	is_int(p.o.verbosity, 1, "-v");
	ok(ARGV_IS(p.o.argv, "make", "test"), "the command");
	ok(!p.o.layer.net_set, "the network is not set: the layers before decide (loopback by default)");
	parsed_free(&p);

	p = PARSE("--workspace", "/a", "-C", "/b", "-q", "true");
	is_int(p.r, 0, "repeated -C parses");
	is_str(p.o.layer.workspace, "/b", "the last -C wins");
	is_int(p.o.verbosity, -1, "-q");
	parsed_free(&p);

	p = PARSE("-qv", "true");
	is_int(p.r, 0, "clustered -qv parses");
	is_int(p.o.verbosity, 1, "-qv: the last wins (verbose)");
	parsed_free(&p);

	p = PARSE("--env", "FOO", "--env", "BAR=1=2", "--unset", "BAZ", "--env", "EMPTY=", "env");
	is_int(p.r, 0, "--env and --unset parse");
	is_int(p.o.layer.n_env_ops, 4, "four environment operations, in order");
	if (p.o.layer.n_env_ops == 4) {
		ok(p.o.layer.env_ops[0].kind == ENV_PASS && streq(p.o.layer.env_ops[0].name, "FOO") && !p.o.layer.env_ops[0].value,
		   "--env FOO passes FOO through");
		ok(p.o.layer.env_ops[1].kind == ENV_SET && streq(p.o.layer.env_ops[1].name, "BAR") &&
			   streq(p.o.layer.env_ops[1].value, "1=2"),
		   "--env BAR=1=2 sets BAR to '1=2'");
		ok(p.o.layer.env_ops[2].kind == ENV_UNSET && streq(p.o.layer.env_ops[2].name, "BAZ"), "--unset BAZ");
		ok(p.o.layer.env_ops[3].kind == ENV_SET && streq(p.o.layer.env_ops[3].name, "EMPTY") &&
			   streq(p.o.layer.env_ops[3].value, ""),
		   "--env EMPTY= sets an empty value");
	}
	parsed_free(&p);
}

static void test_subcommands(void)
{
	struct parsed p = PARSE("doctor");
	is_int(p.r, 0, "'stockade doctor' parses");
	ok(p.o.command == CMD_DOCTOR && !p.o.json && p.o.argv && !p.o.argv[0], "doctor, no --json, no command");
	parsed_free(&p);

	p = PARSE("doctor", "--json");
	is_int(p.r, 0, "'stockade doctor --json' parses");
	ok(p.o.command == CMD_DOCTOR && p.o.json, "doctor with --json");
	parsed_free(&p);

	p = PARSE("explain", "--net", "off", "--", "make", "test");
	is_int(p.r, 0, "'stockade explain --net off -- make test' parses");
	ok(p.o.command == CMD_EXPLAIN && p.o.layer.net == NET_OFF, "explain, --net off");
	ok(ARGV_IS(p.o.argv, "make", "test"), "explain's command");
	parsed_free(&p);

	p = PARSE("explain");
	is_int(p.r, 0, "'stockade explain' without a command parses");
	ok(p.o.command == CMD_EXPLAIN && p.o.argv && !p.o.argv[0], "explain, no command");
	parsed_free(&p);

	p = PARSE("trust");
	is_int(p.r, 0, "'stockade trust' parses");
	ok(p.o.command == CMD_TRUST && p.o.argv && !p.o.argv[0], "trust, no file");
	parsed_free(&p);

	p = PARSE("trust", "stockade.ini");
	is_int(p.r, 0, "'stockade trust stockade.ini' parses");
	ok(p.o.command == CMD_TRUST && ARGV_IS(p.o.argv, "stockade.ini"), "trust with a file");
	parsed_free(&p);
	p = PARSE("trust", "--list");
	ok(p.r == 0 && p.o.trust_list && !p.o.argv[0], "trust --list");
	parsed_free(&p);
	p = PARSE("trust", "--revoke", "x.ini");
	ok(p.r == 0 && streq(p.o.revoke, "x.ini") && !p.o.argv[0], "trust --revoke FILE");
	parsed_free(&p);
	p = PARSE("trust", "--list", "x.ini");
	ok(p.r == -EINVAL && strstr(p.error, "usage: stockade trust"), "trust --list FILE: a usage error");
	parsed_free(&p);
	p = PARSE("trust", "a.ini", "b.ini");
	ok(p.r == -EINVAL, "trust of two files: a usage error");
	parsed_free(&p);
	p = PARSE("--list", "--", "true");
	ok(p.r == -EINVAL && strstr(p.error, "goes with 'stockade trust'"), "--list outside trust: a usage error");
	parsed_free(&p);

	/* quarantine restore ID, with --as PATH after it (where getopt has
	 * stopped) or before the verb's words */
	p = PARSE("quarantine", "restore", "20261203-1");
	ok(p.r == 0 && p.o.command == CMD_QUARANTINE && ARGV_IS(p.o.argv, "restore", "20261203-1") && !p.o.restore_as,
	   "quarantine restore ID");
	parsed_free(&p);
	p = PARSE("quarantine", "restore", "20261203-1", "--as", "/tmp/x");
	ok(p.r == 0 && ARGV_IS(p.o.argv, "restore", "20261203-1") && p.o.restore_as && streq(p.o.restore_as, "/tmp/x"),
	   "quarantine restore ID --as PATH");
	parsed_free(&p);
	p = PARSE("quarantine", "restore", "20261203-1", "--as=rel/x");
	ok(p.r == 0 && ARGV_IS(p.o.argv, "restore", "20261203-1") && p.o.restore_as && streq(p.o.restore_as, "rel/x"),
	   "quarantine restore ID --as=PATH");
	parsed_free(&p);
	p = PARSE("quarantine", "--as", "/tmp/x", "restore", "20261203-1");
	ok(p.r == 0 && ARGV_IS(p.o.argv, "restore", "20261203-1") && p.o.restore_as && streq(p.o.restore_as, "/tmp/x"),
	   "quarantine --as PATH restore ID");
	parsed_free(&p);
	p = PARSE("quarantine", "list");
	ok(p.r == 0 && ARGV_IS(p.o.argv, "list"), "quarantine list");
	parsed_free(&p);

	p = PARSE("--help");
	ok(p.r == 0 && p.o.command == CMD_HELP, "--help");
	parsed_free(&p);
	p = PARSE("-h", "--bogus");
	ok(p.r == 0 && p.o.command == CMD_HELP, "-h wins before anything after it is looked at");
	parsed_free(&p);
	p = PARSE("--version");
	ok(p.r == 0 && p.o.command == CMD_VERSION, "--version");
	parsed_free(&p);
}

/* A usage error: -EINVAL, a message that names what was wrong. */
static void usage_error(struct parsed p, const char *needle, const char *what)
{
	is_int(p.r, -EINVAL, "%s: -EINVAL", what);
	if (!ok(p.error && strstr(p.error, needle), "%s: the message names '%s'", what, needle))
		diag("  message: %s", p.error ? p.error : "(none)");
	parsed_free(&p);
}

static void test_errors(void)
{
	usage_error(PARSE("--bogus", "ls"), "--bogus", "unknown long option");
	usage_error(PARSE("-x", "ls"), "-x", "unknown short option");
	usage_error(PARSE("-qx", "ls"), "x", "unknown short option at the end of a cluster");
	/* getopt leaves optind on a cluster until its last letter: the
	 * message must not name the word before it. */
	usage_error(PARSE("-xq", "ls"), "-x", "unknown short option at the start of a cluster");
	usage_error(PARSE("--net", "bogus", "ls"), "--net", "--net bogus");
	usage_error(PARSE("--net", "bogus", "ls"), "bogus", "--net bogus names the value");
	usage_error(PARSE("--net"), "--net", "--net without a value");
	usage_error(PARSE("-C"), "-C", "-C without a value");
	usage_error(PARSE("--backend", "none", "ls"), "--backend", "--backend none (not a choice)");
	usage_error(PARSE("--backend", "bwrap", "ls"), "--backend", "--backend bwrap");
	usage_error(PARSE("--mode", "strict", "ls"), "--mode", "--mode strict");
	usage_error(PARSE("--json", "ls"), "--json", "--json without doctor");
	usage_error(PARSE("quarantine", "--json"), "--json", "quarantine --json");
	usage_error(PARSE("quarantine", "list", "--as", "x"), "--as goes with", "quarantine list --as");
	usage_error(PARSE("quarantine", "restore", "ID", "--as"), "'--as' needs an argument", "quarantine restore ID --as");
	usage_error(PARSE("quarantine", "restore"), "usage: stockade quarantine", "quarantine restore without an ID");
	usage_error(PARSE("--as", "x", "--", "ls"), "--as goes with", "--as with a command");
	usage_error(PARSE("--env", "=x", "ls"), "--env", "--env =x (no name)");
	usage_error(PARSE("--env", "", "ls"), "--env", "--env '' (no name)");
	usage_error(PARSE("--env", "A B=1", "ls"), "--env", "--env with a space in the name");
	usage_error(PARSE("--unset", "A=B", "ls"), "--unset", "--unset A=B");
	usage_error(PARSE("doctor", "ls"), "doctor", "doctor with a command");
	usage_error(PARSE("doctor", "--bogus"), "--bogus", "doctor --bogus (names the option, not 'doctor')");

	/* What only a session's start may give is refused in one exec, and
	 * the hint is the start (or a run of its own) with it, as written. */
	struct parsed p = PARSE("session", "exec", "--max-procs", "5", "s1", "--", "true");
	is_int(p.r, -EINVAL, "session exec --max-procs 5: -EINVAL");
	ok(p.error && strstr(p.error, "--max-procs '5'") && !strstr(p.error, "start a session"),
	   "session exec --max-procs 5: the message names the option and its value, the fix is the hint's");
	is_str(p.o.usage_hint,
	       "start a session with it: stockade session start --max-procs '5', or run the command on its own: stockade "
	       "--max-procs '5' -- COMMAND",
	       "session exec --max-procs 5: the hint is the start with it");
	parsed_free(&p);
	p = PARSE("session", "exec", "--hide-ignored", "s1", "--", "true");
	is_str(p.o.usage_hint,
	       "start a session with it: stockade session start --hide-ignored, or run the command on its own: stockade "
	       "--hide-ignored -- COMMAND",
	       "session exec --hide-ignored: a flag's hint has no value");
	parsed_free(&p);
	p = PARSE("--bogus", "ls");
	ok(!p.o.usage_hint, "an unknown option has no hint of its own (see --help)");
	parsed_free(&p);

	p = PARSE("--net", "on");
	is_int(p.r, -EINVAL, "options without a command: -EINVAL");
	is_str(p.error, "no command given", "the message says no command was given");
	parsed_free(&p);
	char *argv[] = { "stockade", NULL };
	struct options o;
	char *err = NULL;
	is_int(cli_parse(1, argv, &o, &err), -EINVAL, "'stockade' alone: -EINVAL");
	is_str(err, "no command given", "'stockade' alone: no command given");
	options_free(&o);
	free(err);
	p = PARSE("--");
	is_int(p.r, -EINVAL, "'stockade --' alone: -EINVAL");
	parsed_free(&p);

	/* After an error, parsing again starts clean (getopt's state). */
	p = PARSE("--bogus");
	parsed_free(&p);
	p = PARSE("-v", "ls");
	ok(p.r == 0 && p.o.verbosity == 1 && ARGV_IS(p.o.argv, "ls"), "a parse after a failed one is clean");
	parsed_free(&p);
}

static void test_usage(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cli_usage(f);
	fclose(f);
	ok(text && str_has_prefix(text, "usage: stockade [OPTION]... [--] COMMAND [ARG]...\n"
					"       stockade doctor [--json]\n"
					"       stockade explain [OPTION]... [-- COMMAND [ARG]...]\n"
					"       stockade trust [FILE] | --list | --revoke FILE\n"),
	   "the usage starts with DESIGN.md's synopsis");
	static const char *const options[] = {
		"--workspace", "--config", "--profile", "--read", "--write", "--hide", "--net", "--backend",
		"--mode", "--env", "--unset", "--home", "--hide-ignored", "--report", "--quiet", "--verbose",
		"--help", "--version",
	};
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		ok(text && strstr(text, options[i]), "the usage names %s", options[i]);
	ok(text && strstr(text, "125") && strstr(text, "126") && strstr(text, "127") && strstr(text, "128+N"),
	   "the usage gives the exit statuses");
	free(text);
}

int main(void)
{
	test_run();
	test_subcommands();
	test_errors();
	test_usage();
	return tap_done();
}
