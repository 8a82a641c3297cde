#include "jail/cli.h"

#include <getopt.h>
#include <stdio.h>

#include "lib/util.h"
#include "policy/layer.h"

enum {
	OPT_READ = 0x100,
	OPT_WRITE,
	OPT_HIDE,
	OPT_NET,
	OPT_PUBLISH,
	OPT_CONNECT,
	OPT_BACKEND,
	OPT_MODE,
	OPT_ENV,
	OPT_UNSET,
	OPT_HOME,
	OPT_HIDE_IGNORED,
	OPT_REPORT,
	OPT_CONFIG,
	OPT_JSON,
	OPT_LIST,
	OPT_REVOKE,
	OPT_VERSION,
	OPT_MAX_PROCS,
	OPT_MEMORY,
	OPT_TMP_SIZE,
	OPT_NAME,
	OPT_IDLE,
	OPT_SESSION,
	OPT_AS,
	OPT_ALLOW,
};

static const struct option long_options[] = {
	{ "workspace", required_argument, NULL, 'C' },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "profile", required_argument, NULL, 'p' },
	{ "read", required_argument, NULL, OPT_READ },
	{ "write", required_argument, NULL, OPT_WRITE },
	{ "hide", required_argument, NULL, OPT_HIDE },
	{ "net", required_argument, NULL, OPT_NET },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "publish", required_argument, NULL, OPT_PUBLISH },
	{ "connect", required_argument, NULL, OPT_CONNECT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "unset", required_argument, NULL, OPT_UNSET },
	{ "home", required_argument, NULL, OPT_HOME },
	{ "hide-ignored", no_argument, NULL, OPT_HIDE_IGNORED },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "revoke", required_argument, NULL, OPT_REVOKE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "max-procs", required_argument, NULL, OPT_MAX_PROCS },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "tmp-size", required_argument, NULL, OPT_TMP_SIZE },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "session", required_argument, NULL, OPT_SESSION },
	{ "as", required_argument, NULL, OPT_AS },
	{ 0 },
};

void cli_usage(FILE *f)
{
	fputs("usage: stockade [OPTION]... [--] COMMAND [ARG]...\n"
	      "       stockade doctor [--json]\n"
	      "       stockade explain [OPTION]... [-- COMMAND [ARG]...]\n"
	      "       stockade trust [FILE] | --list | --revoke FILE\n"
	      "       stockade quarantine [list | restore ID [--as PATH]]\n"
	      "       stockade why [OPTION]... PATH|HOST:PORT|unix:PATH [-- COMMAND [ARG]...]\n"
	      "       stockade session start [OPTION]... [--name NAME] [--idle TIME]\n"
	      "       stockade session exec [OPTION]... ID -- COMMAND [ARG]...\n"
	      "       stockade session list | stop ID\n"
	      "\n"
	      "Runs COMMAND in a jail: it keeps the workspace (the current directory) and\n"
	      "the system, and cannot read your secrets, write elsewhere, reach services\n"
	      "it was not given, or touch your other processes.\n"
	      "\n"
	      "  -C, --workspace DIR     the writable workspace (default: the current directory)\n"
	      "      --config FILE       read this stockade.ini instead of the workspace's\n"
	      "  -p, --profile NAME      apply [profile NAME] from stockade.ini\n"
	      "      --read PATH         let the command read PATH (repeatable)\n"
	      "      --write PATH        let the command write PATH (repeatable)\n"
	      "      --hide PATH         keep PATH from the command, even inside a grant\n"
	      "      --net MODE          off, loopback (default), allow or on\n"
	      "      --allow HOST[:PORT] let the command reach this host by name (ports 443\n"
	      "                          and 80 unless given; *.NAME: the names beneath\n"
	      "                          it; @npm, @pypi, @crates, @go, @github: a\n"
	      "                          registry's hosts); implies --net allow\n"
	      "      --publish [HOST_ADDR:]PORT[:JAIL_PORT]\n"
	      "                          make the run's listener on JAIL_PORT reachable\n"
	      "                          from the host on HOST_ADDR:PORT (127.0.0.1)\n"
	      "      --connect HOST:PORT | unix:PATH\n"
	      "                          let the command reach this one service of the host\n"
	      "      --backend NAME      auto (default), namespaces, landlock or seatbelt\n"
	      "      --mode MODE         auto (default), required (refuse if anything is\n"
	      "                          unenforced) or off (run without a jail)\n"
	      "      --env NAME[=VALUE]  pass NAME through, or set it\n"
	      "      --unset NAME        remove NAME from the environment\n"
	      "      --home DIR          keep this home across runs instead of a fresh one\n"
	      "      --hide-ignored      hide the files git ignores in the workspace\n"
	      "      --max-procs N       the run's processes and threads (default 8192)\n"
	      "      --memory SIZE       the run's memory, as 4G or 50% (default 75%)\n"
	      "      --tmp-size SIZE     /tmp, home and /dev/shm together (default 50%)\n"
	      "      --report FILE       write what was enforced and refused as JSON\n"
	      "      --session ID        run COMMAND in that session (session exec ID)\n"
	      "      --name NAME         session start: the session's id (default: a random one)\n"
	      "      --idle TIME         session start: end it after TIME with no command\n"
	      "                          (30m, 2h, 7d, 0 for never; default 1h)\n"
	      "  -q, --quiet             say nothing unless something fails\n"
	      "  -v, --verbose           say what is enforced and what is not (explain: everything)\n"
	      "      --json              doctor and explain: as JSON\n"
	      "      --as PATH           quarantine restore: the whole item at PATH instead\n"
	      "  -h, --help              show this help\n"
	      "      --version           show the version\n"
	      "\n"
	      "Exit status: the command's own; 128+N when signal N ended it; 125 when\n"
	      "stockade failed and the command did not run; 126 when the command is not\n"
	      "executable; 127 when it was not found; 122 when the command ran but the\n"
	      "guard could not undo all it changed in the trust hand-offs (said above).\n",
	      f);
}

/* "30m", "2h", "90s", "7d", "600" (seconds), "0" (never). */
int session_parse_idle(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s)
		return -EINVAL;
	unsigned long mult = streq(end, "") || streq(end, "s") ? 1 : streq(end, "m") ? 60 : streq(end, "h") ? 3600
		     : streq(end, "d") ? 24 * 3600 : 0;
	if (!mult || v > 30UL * 24 * 3600 / mult)
		return -EINVAL;
	*ret = (unsigned)(v * mult);
	return 0;
}

#define USAGE_ERROR(...)                                                       \
	do {                                                                   \
		*ret_error = xasprintf(__VA_ARGS__);                           \
		return -EINVAL;                                                \
	} while (0)

/* A word as a shell reads it: as it is, or in single quotes. */
static void add_word(struct text *t, const char *w)
{
	if (*w && !w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:@%+,-")]) {
		text_adds(t, w);
		return;
	}
	text_addc(t, '\'');
	for (; *w; w++)
		if (*w == '\'')
			text_adds(t, "'\\''");
		else
			text_addc(t, *w);
	text_addc(t, '\'');
}

/* "stockade --backend landlock session start": the command is a word of
 * stockade's own, which comes first, its options after it. The line so,
 * or NULL where the command is no such word. */
static char *verb_first(char **argv, int argc, int rest)
{
	static const char *const verbs[] = { "session", "doctor", "explain", "trust", "quarantine", "why" };
	bool verb = false;
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		verb |= streq(argv[rest], verbs[i]);
	if (!verb)
		return NULL;
	/* session's own word (start, exec...) stays beside it */
	int words = streq(argv[rest], "session") && rest + 1 < argc ? 2 : 1;
	struct text t = { 0 };
	text_adds(&t, "stockade");
	for (int i = rest; i < rest + words; i++) {
		text_addc(&t, ' ');
		add_word(&t, argv[i]);
	}
	/* the options, less the "--" that ended them */
	int end = streq(argv[rest - 1], "--") ? rest - 1 : rest;
	for (int i = 1; i < end; i++) {
		text_addc(&t, ' ');
		add_word(&t, argv[i]);
	}
	for (int i = rest + words; i < argc; i++) {
		text_addc(&t, ' ');
		add_word(&t, argv[i]);
	}
	return text_take(&t);
}

int cli_parse(int argc, char **argv, struct options *o, char **ret_error)
{
	*o = (struct options){ 0 };
	struct layer *l = &o->layer;
	*ret_error = NULL;

	int first = 1;
	bool net_given = false;
	if (argc > 1 && streq(argv[1], "doctor"))
		o->command = CMD_DOCTOR;
	else if (argc > 1 && streq(argv[1], "explain"))
		o->command = CMD_EXPLAIN;
	else if (argc > 1 && streq(argv[1], "trust"))
		o->command = CMD_TRUST;
	else if (argc > 1 && streq(argv[1], "quarantine"))
		o->command = CMD_QUARANTINE;
	else if (argc > 1 && streq(argv[1], "why"))
		o->command = CMD_WHY;
	if (o->command != CMD_RUN)
		first = 2;
	if (argc > 1 && streq(argv[1], "session")) {
		static const struct { const char *word; enum command cmd; } verbs[] = {
			{ "start", CMD_SESSION_START }, { "exec", CMD_SESSION_EXEC },
			{ "list", CMD_SESSION_LIST }, { "stop", CMD_SESSION_STOP },
		};
		for (size_t i = 0; argc > 2 && i < ARRAY_SIZE(verbs); i++)
			if (streq(argv[2], verbs[i].word))
				o->command = verbs[i].cmd;
		if (o->command == CMD_RUN)
			USAGE_ERROR("usage: stockade session start [OPTION]... | exec ID -- COMMAND... | list | stop ID");
		first = 3;
	}
	o->idle_s = SESSION_IDLE_DEFAULT;
	/* What a command of a session may not be given alone: anything that
	 * would make its jail another. */
/* An option of a stockade.ini key's meaning, through the key's setter. */
#define SET_KEY(key, opt)                                                                  \
	do {                                                                               \
		_cleanup_free_ char *why = NULL;                                           \
		if (layer_key_set(layer_key_find(key), l, optarg, SOURCE_OPTION_OF(opt), &why) < 0) \
			USAGE_ERROR("invalid %s '%s': %s", opt, optarg, why);              \
	} while (0)

/* The first such option, as the person wrote it, for the hint. */
#define SESSION_ONLY(opt) \
	do { \
		if (!o->session_refused) \
			o->session_refused = optarg ? xasprintf("%s '%s'", (opt), optarg) : xstrdup(opt); \
	} while (0)

	/* "+": options end at the command, whose own options are its own. */
	optind = 0;
	opterr = 0;
	int c;
	const char *last_optarg = NULL;	/* a "--" there is an option's value, not the options' end */
	while ((c = getopt_long(argc - first + 1, argv + first - 1, "+:C:p:qvh", long_options, NULL)) != -1) {
		last_optarg = optarg;
		switch (c) {
		case 'C':
			SESSION_ONLY("--workspace");
			free(l->workspace);
			l->workspace = xstrdup(optarg);
			l->workspace_source = SOURCE_OPTION_OF("--workspace");
			break;
		case OPT_CONFIG:
			SESSION_ONLY("--config");
			free(o->config);
			o->config = xstrdup(optarg);
			break;
		case 'p':
			SESSION_ONLY("--profile");
			free(o->profile);
			o->profile = xstrdup(optarg);
			break;
		case OPT_READ:
			layer_add_rule(l, optarg, ACCESS_READ, SOURCE_OPTION_OF("--read"));
			break;
		case OPT_WRITE:
			SESSION_ONLY("--write");
			layer_add_rule(l, optarg, ACCESS_WRITE, SOURCE_OPTION_OF("--write"));
			break;
		case OPT_HIDE:
			layer_add_rule(l, optarg, ACCESS_HIDE, SOURCE_OPTION_OF("--hide"));
			break;
		case OPT_NET:
			SET_KEY("network", "--net");
			net_given = true;
			break;
		case OPT_ALLOW: {
			const char *why;
			if (layer_add_allow(l, optarg, SOURCE_OPTION_OF("--allow"), &why) < 0)
				USAGE_ERROR("invalid --allow '%s': %s", optarg, why);
			break;
		}
		case OPT_PUBLISH:
		case OPT_CONNECT: {
			const char *why, *opt = c == OPT_PUBLISH ? "--publish" : "--connect";
			SESSION_ONLY(opt);
			if (layer_add_grant(l, c == OPT_PUBLISH ? GRANT_PUBLISH : GRANT_CONNECT, optarg,
					    SOURCE_OPTION_OF(c == OPT_PUBLISH ? "--publish" : "--connect"), &why) < 0)
				USAGE_ERROR("invalid %s '%s': %s", opt, optarg, why);
			break;
		}
		case OPT_BACKEND:
			SESSION_ONLY("--backend");
			SET_KEY("backend", "--backend");
			break;
		case OPT_MODE:
			SESSION_ONLY("--mode");
			SET_KEY("mode", "--mode");
			break;
		case OPT_ENV: {
			const char *eq = strchr(optarg, '=');
			size_t n = eq ? (size_t)(eq - optarg) : strlen(optarg);
			if (!env_name_valid(optarg, n))
				USAGE_ERROR("invalid --env '%s': use NAME or NAME=VALUE", optarg);
			_cleanup_free_ char *name = xstrndup(optarg, n);
			if (!eq)
				SESSION_ONLY("--env");
			layer_add_env(l, eq ? ENV_SET : ENV_PASS, name, eq ? eq + 1 : NULL, SOURCE_OPTION_OF("--env"));
			break;
		}
		case OPT_UNSET:
			if (!env_name_valid(optarg, strlen(optarg)))
				USAGE_ERROR("invalid --unset '%s': use a variable name", optarg);
			layer_add_env(l, ENV_UNSET, optarg, NULL, SOURCE_OPTION_OF("--unset"));
			break;
		case OPT_HOME:
			SESSION_ONLY("--home");
			SET_KEY("home", "--home");
			break;
		case OPT_HIDE_IGNORED:
			SESSION_ONLY("--hide-ignored");
			o->hide_ignored = true;
			l->hide_ignored_set = true;
			l->hide_ignored = true;
			l->hide_ignored_source = SOURCE_OPTION_OF("--hide-ignored");
			break;
		case OPT_MAX_PROCS:
			SESSION_ONLY("--max-procs");
			SET_KEY("max-procs", "--max-procs");
			break;
		case OPT_MEMORY:
			SESSION_ONLY("--memory");
			SET_KEY("memory", "--memory");
			break;
		case OPT_TMP_SIZE:
			SESSION_ONLY("--tmp-size");
			SET_KEY("tmp-size", "--tmp-size");
			break;
		case OPT_REPORT:
			free(o->report);
			o->report = xstrdup(optarg);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NAME:
			if (o->command != CMD_SESSION_START)
				USAGE_ERROR("--name goes with 'stockade session start'");
			free(o->session_name);
			o->session_name = xstrdup(optarg);
			break;
		case OPT_IDLE:
			if (o->command != CMD_SESSION_START)
				USAGE_ERROR("--idle goes with 'stockade session start'");
			if (session_parse_idle(optarg, &o->idle_s) < 0)
				USAGE_ERROR("invalid --idle '%s': use a time (90s, 30m, 2h, 7d; at most 30d) or 0 for never", optarg);
			break;
		case OPT_SESSION:
			if (o->command != CMD_RUN)
				USAGE_ERROR("--session goes with a command: stockade --session ID -- COMMAND");
			free(o->session_id);
			o->session_id = xstrdup(optarg);
			o->command = CMD_SESSION_EXEC;
			break;
		case OPT_LIST:
			o->trust_list = true;
			break;
		case OPT_REVOKE:
			free(o->revoke);
			o->revoke = xstrdup(optarg);
			break;
		case OPT_AS:
			free(o->restore_as);
			o->restore_as = xstrdup(optarg);
			break;
		case 'q':
			o->verbosity = -1;
			break;
		case 'v':
			o->verbosity = 1;
			break;
		case 'h':
			o->command = CMD_HELP;
			return 0;
		case OPT_VERSION:
			o->command = CMD_VERSION;
			return 0;
		case ':':
			if (optopt > 0 && optopt < 0x80)
				USAGE_ERROR("option '-%c' needs an argument", optopt);
			USAGE_ERROR("option '%s' needs an argument", argv[first - 1 + optind - 1]);
		default:
			/* A short option's letter is in optopt; getopt may not
			 * have moved past its word yet. */
			if (optopt > 0 && optopt < 0x80)
				USAGE_ERROR("unknown option '-%c'", optopt);
			USAGE_ERROR("unknown option '%s'", argv[first - 1 + optind - 1]);
		}
	}

	/* --allow implies its mode; another mode beside it says two things
	 * at once. */
	if (l->n_allow && net_given && l->net != NET_ALLOW)
		USAGE_ERROR("--allow with --net %s: --allow is for --net allow, which it sets by itself; take one of the two "
			    "away",
			    net_mode_name(l->net));
	if (l->n_allow && !net_given) {
		l->net = NET_ALLOW;
		l->net_set = true;
		l->net_source = SOURCE_OPTION_OF("--allow");
	}
	int rest = first - 1 + optind;
	if (o->command == CMD_SESSION_EXEC && !o->session_id) {
		/* "session exec -- COMMAND": the "--" getopt took ends the
		 * options, and no ID came before it */
		if (rest > first && streq(argv[rest - 1], "--") && argv[rest - 1] != last_optarg)
			USAGE_ERROR("no session ID given: stockade session exec ID -- COMMAND [ARG]...");
		if (rest >= argc || streq(argv[rest], "--"))
			USAGE_ERROR("usage: stockade session exec [OPTION]... ID -- COMMAND [ARG]...");
		o->session_id = xstrdup(argv[rest++]);
	}
	if (o->command == CMD_SESSION_EXEC && rest < argc && streq(argv[rest], "--"))
		rest++;
	if (o->command == CMD_SESSION_STOP) {
		if (rest + 1 != argc)
			USAGE_ERROR("usage: stockade session stop ID");
		o->session_id = xstrdup(argv[rest++]);
	}
	if ((o->command == CMD_SESSION_START || o->command == CMD_SESSION_LIST) && rest < argc)
		USAGE_ERROR("'stockade session %s' takes no command: stockade session exec ID -- COMMAND runs one",
			    o->command == CMD_SESSION_START ? "start" : "list");
	if (o->command == CMD_SESSION_EXEC && rest >= argc)
		USAGE_ERROR("no command given: stockade session exec ID -- COMMAND [ARG]...");
	if (o->command == CMD_SESSION_EXEC && o->session_refused) {
		o->usage_hint = xasprintf("start a session with it: stockade session start %s, or run the command on its "
					  "own: stockade %s -- COMMAND",
					  o->session_refused, o->session_refused);
		USAGE_ERROR("cannot give %s to one command of a session: it would make the command's jail another than the "
			    "session's",
			    o->session_refused);
	}
	if (o->json && o->command != CMD_DOCTOR && o->command != CMD_EXPLAIN)
		USAGE_ERROR("--json goes with 'stockade doctor' and 'stockade explain'");
	if (o->command == CMD_WHY) {
		/* stockade why TARGET [-- COMMAND] */
		if (rest >= argc || streq(argv[rest], "--"))
			USAGE_ERROR("usage: stockade why PATH|HOST:PORT|unix:PATH [-- COMMAND]");
		o->why_target = xstrdup(argv[rest++]);
		if (rest < argc && !streq(argv[rest++], "--"))
			USAGE_ERROR("stockade why: one target, then -- and the command");
	}
	o->argv = strv_new();
	for (int i = rest; i < argc; i++)
		strv_add(&o->argv, argv[i]);
	if (o->command == CMD_RUN && !o->argv[0])
		USAGE_ERROR("no command given");
	if (o->command == CMD_RUN && rest > 1)
		o->verb_first = verb_first(argv, argc, rest);
	if (o->command == CMD_DOCTOR && o->argv[0])
		USAGE_ERROR("'stockade doctor' takes no command");
	if ((o->trust_list || o->revoke) && o->command != CMD_TRUST)
		USAGE_ERROR("%s goes with 'stockade trust'", o->trust_list ? "--list" : "--revoke");
	if (o->command == CMD_TRUST &&
	    (strv_length(o->argv) > 1 || ((o->trust_list || o->revoke) && o->argv[0]) || (o->trust_list && o->revoke)))
		USAGE_ERROR("usage: stockade trust [FILE] | --list | --revoke FILE");
	if (o->command == CMD_QUARANTINE) {
		size_t n = strv_length(o->argv);
		/* --as PATH after the verb's words, where getopt stopped:
		 * taken out of them wherever it is */
		for (size_t i = 0; i < n; i++) {
			bool sep = streq(o->argv[i], "--as"), joined = str_has_prefix(o->argv[i], "--as=");
			if (!sep && !joined)
				continue;
			if (sep && i + 1 == n)
				USAGE_ERROR("option '--as' needs an argument");
			free(o->restore_as);
			o->restore_as = xstrdup(sep ? o->argv[i + 1] : o->argv[i] + strlen("--as="));
			size_t k = sep ? 2 : 1;
			for (size_t j = i; j < i + k; j++)
				free(o->argv[j]);
			memmove(o->argv + i, o->argv + i + k, (n - i - k + 1) * sizeof(*o->argv));
			n -= k;
			i--;
		}
		bool list = n == 0 || (n == 1 && streq(o->argv[0], "list"));
		bool restore = n == 2 && streq(o->argv[0], "restore");
		if (o->restore_as && !restore)
			USAGE_ERROR("--as goes with 'stockade quarantine restore ID'");
		if (!list && !restore)
			USAGE_ERROR("usage: stockade quarantine [list | restore ID [--as PATH]]");
		if (o->restore_as && str_empty(o->restore_as))
			USAGE_ERROR("invalid --as '': use the path to put the item at");
	} else if (o->restore_as) {
		USAGE_ERROR("--as goes with 'stockade quarantine restore ID'");
	}
	return 0;
}

void options_free(struct options *o)
{
	layer_free(&o->layer);
	free(o->report);
	free(o->config);
	free(o->profile);
	free(o->revoke);
	free(o->restore_as);
	free(o->why_target);
	free(o->session_id);
	free(o->session_name);
	free(o->session_refused);
	free(o->usage_hint);
	free(o->verb_first);
	strv_free(o->argv);
	*o = (struct options){ 0 };
}
