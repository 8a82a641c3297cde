#include "jail/say.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "mount/mount.h"
#include "policy/own.h"
#include "policy/steer.h"

void say_places_failure(const struct places_failure *f)
{
	const char *path = f->path ? f->path : "";
	switch (f->fault) {
	case PLACES_BASE:
		log_error("cannot use '%s' for the run's private directories: %s", path,
			  say_private_reason(f->err, "not a private directory of yours"));
		break;
	case PLACES_RUN_DIR:
	case PLACES_MKDIR:
	case PLACES_POLICY:
		log_error("cannot create '%s': %s", path, strerror(f->err));
		break;
	case PLACES_KEPT_HOME:
		log_error("cannot use --home '%s': %s", path,
			  say_private_reason(f->err, "not a private directory of yours (mode 0700, owned by you)"));
		break;
	case PLACES_CACHE:
		log_error("cannot use the cache directory '%s': %s", path,
			  say_private_reason(f->err, "not a private directory of yours"));
		break;
	case PLACES_STATE:
		log_error("cannot use the state directory '%s': %s", path,
			  say_private_reason(f->err, "not a private directory of yours"));
		break;
	case PLACES_LINK:
		log_error("cannot link '%s' into the jail's home: %s", path, strerror(f->err));
		break;
	}
}

void say_handoff_refused(const char *workspace, const char *path, struct report *rep)
{
	const char *rel = path_is_beneath(path, workspace) && !streq(path, workspace) ? path_below(path, workspace) : path;
	for (size_t i = 0; i < rep->n_denials; i++)
		if (streq(rep->denials[i].kind, "handoff") && streq(rep->denials[i].what, rel)) {
			report_denial(rep, "handoff", rel, "read-only during the run");
			return;
		}
	report_denial_ruled(rep, "handoff", rel, "read-only during the run",
			    "trust hand-off, bound read-only in the namespace jail while the run goes on",
			    "built in: the trust hand-offs (stockade.1, TRUST HAND-OFFS)",
			    "none from inside the jail: make the change outside it (git config, git remote add)");
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	log_error("refused: a rename over trust hand-off '%s': it is read-only while the run goes on in the namespace jail",
		  rel);
	if (streq(base, "config") || streq(base, "config.worktree") || str_has_suffix(base, ".lock"))
		log_hint("set it outside the jail, or run with --backend landlock, where the guard keeps a git config's inert "
			 "settings (remotes, branches, identity) after the run");
	else
		log_hint("change it outside the jail: what the run leaves there would run later, outside it");
}

void say_places_notes(const struct places *pl)
{
	for (size_t i = 0; i < pl->n_notes; i++) {
		const struct places_note *n = &pl->notes[i];
		switch (n->kind) {
		case PLACES_NOTE_LIST:
			log_note("cannot look in '%s' for run directories left by killed runs: %s", n->path, strerror(n->err));
			break;
		case PLACES_NOTE_HOLDERS:
			log_note("cannot tell whether '%s', left by an earlier run, is still in use: %s", n->path,
				 strerror(n->err));
			break;
		case PLACES_NOTE_REMOVE:
			log_note("cannot remove '%s', left by an earlier run: %s", n->path, strerror(n->err));
			break;
		}
	}
}

void say_guard_failure(const struct guard_failure *f, int err, const char *workspace, bool ending)
{
	const char *path = f->path ? f->path : workspace;
	const char *why = strerror(-err);
	switch (f->step) {
	case GUARD_STEP_WORKSPACE:
		log_error("cannot read the workspace '%s' for its trust hand-offs: %s", path, why);
		break;
	case GUARD_STEP_STATE:
		log_error("cannot use the guard's state '%s': %s", path,
			  err == -EPERM ? "not a private directory of yours" : why);
		break;
	case GUARD_STEP_BASELINE:
		if (err == -EBADMSG) {
			log_error("cannot %s the trust hand-offs of '%s': the guard's baseline '%s' is damaged",
				  ending ? "undo changes to" : "keep", workspace, path);
			log_hint("a run in this workspace was killed and its baseline cannot be trusted; check .git/hooks, "
				 ".git/config and the other hand-offs by hand, then remove '%s'",
				 path);
		} else {
			log_error("cannot use the guard's baseline '%s': %s", path, why);
		}
		break;
	case GUARD_STEP_SNAPSHOT:
		log_error("cannot keep the trust hand-off '%s' of '%s': %s", path, workspace, why);
		break;
	case GUARD_STEP_UNDO: {
		_cleanup_free_ char *full = f->path && f->path[0] != '/' ? path_join(workspace, f->path) : xstrdup(path);
		log_error("cannot undo a change to the trust hand-off '%s' of '%s': %s", path, workspace, why);
		log_hint("it may still be in effect; until it is gone no run starts in '%s'. Look at it, then remove it: "
			 "rm -rf -- '%s'",
			 workspace, full);
		break;
	}
	}
}

void say_guard_report(const struct guard_report *gr, const char *area, const struct policy *p, struct report *rep)
{
	bool any_aside = false, any_vetted = false;
	for (size_t i = 0; i < gr->n_changes; i++) {
		struct guard_change cc = gr->changes[i];
		/* a git directory outside the workspace is named whole */
		_cleanup_free_ char *full = area ? path_join(area, cc.path) : NULL;
		if (full)
			cc.path = full;
		const struct guard_change *c = &cc;
		const char *kind = guard_change_kind_name(c->kind);
		_cleanup_free_ char *dropped = NULL;
		for (size_t k = 0; c->dropped && c->dropped[k]; k++) {
			char *d = dropped ? xstrcat3(dropped, ", ", c->dropped[k]) : xstrdup(c->dropped[k]);
			free(dropped);
			dropped = d;
		}
		if (c->kind == GUARD_VETTED)
			log_error("kept the inert settings of git config '%s' and undid the rest (%s)%s%s%s", c->path,
				  dropped ? dropped : "?", c->quarantined ? ": the config as the run left it is in '" : "",
				  c->quarantined ? c->quarantined : "", c->quarantined ? "'" : "");
		else if (c->kind == GUARD_UNRESTORABLE)
			/* not "undid": what the run did to it stays done */
			log_error("cannot undo a change to trust hand-off '%s': the guard holds no copy of its old content "
				  "(unreadable, or over its size cap: named before the run), which is gone%s%s%s",
				  c->path, c->quarantined ? "; the new content is in '" : "",
				  c->quarantined ? c->quarantined : "", c->quarantined ? "'" : "");
		else if (c->beside)
			log_error("undid a change to trust hand-off '%s' (%s): the quarantine could not take it, so it is "
				  "renamed beside itself to '%s', where nothing reads it",
				  c->path, kind, c->quarantined);
		else if (c->quarantined)
			log_error("undid a change to trust hand-off '%s' (%s): the new content is in '%s'", c->path, kind,
				  c->quarantined);
		else
			log_error("undid a change to trust hand-off '%s' (%s)", c->path, kind);
		if (c->unrestored)
			log_error("cannot put back the old content of trust hand-off '%s': it is kept in the quarantine as "
				  "'%s' (stockade quarantine restore %s)",
				  c->path, c->old_id ? c->old_id : "?", c->old_id ? c->old_id : "ID");
		any_aside |= c->id != NULL && !c->beside;
		any_vetted |= c->id != NULL && !c->beside && c->kind == GUARD_VETTED;
		_cleanup_free_ char *fix = NULL;
		if (c->id && c->kind == GUARD_VETTED)
			fix = xasprintf("stockade quarantine restore %s puts the settings dropped back into the config, outside "
					"the jail (restore %s --as PATH: the whole config as the run left it, at PATH); read "
					"them first",
					c->id, c->id);
		else if (c->id)
			fix = xstrcat3("stockade quarantine restore ", c->id, " puts it back, outside the jail; read it first");
		report_denial_ruled(rep, "handoff", c->path, kind, "trust hand-off: what the run writes there runs later outside",
				    "built in: the trust hand-offs (stockade.1, TRUST HAND-OFFS)", fix);
	}
	if (any_vetted)
		log_hint("stockade quarantine lists what was set aside; stockade quarantine restore ID puts one back, the "
			 "settings dropped from a git config into the config as it is now (restore ID --as PATH: the whole "
			 "file at PATH)");
	else if (any_aside)
		log_hint("stockade quarantine lists what was set aside; stockade quarantine restore ID puts one back");
	/* A nested run's quarantine is in the outer jail's home or TMPDIR
	 * (stockade.1, nested runs), which go with the outer run. */
	if (any_aside && proc_self_status("NoNewPrivs") > 0 && proc_self_status("Seccomp_filters") > 0)
		log_hint("where this run is nested in another jail, a quarantine in that jail's home or TMPDIR goes when "
			 "the outer run ends: restore from inside it");
	for (size_t i = 0; gr->unlinked && gr->unlinked[i]; i++)
		log_note("gave trust hand-off '%s' a file of its own: it had another name (a hard link), through which a "
			 "run could write it",
			 gr->unlinked[i]);
	for (size_t i = 0; gr->unguarded && gr->unguarded[i]; i++) {
		const char *u = gr->unguarded[i];
		_cleanup_free_ char *what = xstrcat3("trust hand-off '", u, "'");
		/* an .envrc's reference is "FILE:LINE: WORD" */
		_cleanup_free_ char *abs = path_join(area ? area : p->workspace, u);
		struct stat st;
		if (strchr(u, ':')) {
			report_gap(rep, what, "an .envrc names it in a way only running it could tell");
			say_note_once(p, rep, "unenforced: '%s': an .envrc names a file in a way only running it could tell", u);
		} else if (lstat(abs, &st) == 0 && S_ISDIR(st.st_mode) && access(abs, R_OK | X_OK) < 0) {
			/* not a hand-off of its own: a folder the guard cannot
			 * look into for one (a repository's hooks, an .envrc) */
			free(what);
			what = xstrcat3("folder '", u, "'");
			report_gap(rep, what, "unreadable: the guard cannot look inside it for trust hand-offs (a "
					      "repository's hooks, an .envrc) to undo a change there");
			say_note_once(p, rep, "unenforced: %s is unreadable: the guard cannot look inside it for trust hand-offs",
				      what);
		} else {
			report_gap(rep, what, "unreadable or over the guard's size cap: a change is set aside but the old "
					      "content cannot be restored");
			say_note_once(p, rep, "unenforced: %s: unreadable or over the guard's size cap", what);
		}
	}
}

/* A script's first line after its #! (in line, of size bytes), or NULL
 * where it has none. */
static char *script_shebang(const char *program, char *line, size_t size)
{
	_cleanup_close_ int fd = open(program, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t n = fd >= 0 ? read(fd, line, size - 1) : -1;
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return NULL;
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	return line + 2;
}

/* The interpreter a first line names, as written, or NULL. */
static char *shebang_interpreter(const char *shebang)
{
	if (!shebang)
		return NULL;
	shebang += strspn(shebang, " \t");
	return shebang[0] == '/' ? xstrndup(shebang, strcspn(shebang, " \t")) : NULL;
}

/* The interpreter a script's first line names, as written, or NULL. */
static char *script_line_interpreter(const char *program)
{
	char line[256];
	return shebang_interpreter(script_shebang(program, line, sizeof(line)));
}

/* The same, canonical, where it exists. */
static char *script_interpreter(const char *program)
{
	_cleanup_free_ char *written = script_line_interpreter(program);
	char *canon = NULL;
	if (!written || path_canonical(written, &canon) < 0)
		return NULL;
	return canon;
}

/* The path a command's word names, absolute: ~/ is your home (when
 * home is given), a relative one starts at the command's directory.
 * NULL: a ~user word, or nothing to start from. */
static char *word_path(const char *word, const char *cwd, const char *home)
{
	if (word[0] == '/')
		return xstrdup(word);
	if (str_has_prefix(word, "~/"))
		return home ? path_join(home, word + 2) : NULL;
	return word[0] != '~' && cwd ? path_join(cwd, word) : NULL;
}

/* What runs a script that is not executable, given its first line
 * (NULL: none): the program that line names (the one env looks up, for
 * #!/usr/bin/env python3), or for none, the one its name's ending says,
 * else sh. */
static char *script_runner(const char *path, char *shebang)
{
	_cleanup_free_ char *interp = shebang_interpreter(shebang);
	if (interp && streq(interp, "/usr/bin/env")) {
		/* the words after env's own: its options (-S) and NAME=VALUEs */
		char *save = NULL;
		for (char *w = strtok_r(shebang, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
			if (!streq(w, interp) && w[0] != '-' && !strchr(w, '='))
				return xstrdup(w);
	}
	if (interp)
		return xstrdup(interp);
	static const struct {
		const char *ending, *runner;
	} endings[] = { { ".py", "python3" }, { ".js", "node" }, { ".mjs", "node" }, { ".rb", "ruby" },
			{ ".pl", "perl" },   { ".bash", "bash" } };
	for (size_t i = 0; i < ARRAY_SIZE(endings); i++)
		if (str_has_suffix(path, endings[i].ending))
			return xstrdup(endings[i].runner);
	return xstrdup("sh");
}

/* Why the file word names (from cwd) cannot be run, where that is in
 * the file itself: a directory, no execute bit, a first line naming an
 * interpreter that is not there. NULL: not that. */
static char *run_fault(const char *word, const char *cwd)
{
	_cleanup_free_ char *path = strchr(word, '/') ? word_path(word, cwd, NULL) : NULL;
	struct stat st;
	if (!path || stat(path, &st) < 0)
		return NULL;
	if (S_ISDIR(st.st_mode))
		return xasprintf("'%s' is a directory", word);
	char line[256];
	char *shebang = script_shebang(path, line, sizeof(line));
	_cleanup_free_ char *interp = shebang_interpreter(shebang);
	if (S_ISREG(st.st_mode) && !(st.st_mode & 0111)) {
		_cleanup_free_ char *runner = script_runner(path, shebang);
		return xasprintf("it is not executable: chmod +x %s, or give it to its interpreter (%s %s)", word, runner,
				 word);
	}
	if (interp && access(interp, F_OK) < 0)
		return xasprintf("its first line names the interpreter '%s', which does not exist", interp);
	return NULL;
}

/* A shell's own command, which no program on PATH provides. */
static bool shell_builtin(const char *word)
{
	static const char *const builtins[] = { "cd",	  "source", ".",     "export", "alias", "unalias", "set",
						"unset",  "ulimit", "umask", "eval",   "exec",  "pushd",   "popd",
						"shopt",  "declare", "typeset", "local", "readonly", "history", "builtin" };
	for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
		if (streq(word, builtins[i]))
			return true;
	return false;
}

/* argv as one shell command, each word as it is where a shell would read
 * it so; NULL where a word would need quoting. */
static char *as_shell_words(char *const *argv)
{
	struct text t = { 0 };
	for (size_t i = 0; argv[i]; i++) {
		const char *w = argv[i];
		if (!*w || w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:@%+,-")]) {
			free(text_take(&t));
			return NULL;
		}
		if (i)
			text_addc(&t, ' ');
		text_adds(&t, w);
	}
	return text_take(&t);
}

char *say_shell_builtin(char *const *argv, const char *run)
{
	if (!argv || !argv[0] || !shell_builtin(argv[0]))
		return NULL;
	/* what it changes (a directory, the environment) is the shell's,
	 * and ends with it: the rest goes in the same shell (bash's, where
	 * there is one: sh may have no source) */
	_cleanup_free_ char *words = as_shell_words(argv);
	if (!words)
		words = xstrcat3(argv[0], " ...", "");
	const char *sh = access("/bin/bash", X_OK) == 0 ? "bash" : "sh";
	return xasprintf("'%s' is a shell's own command, not a program: run the whole line in one shell, as %s %s -c "
			 "'%s && NEXT-COMMAND'",
			 argv[0], run, sh, words);
}

void say_cannot_run(const struct policy *p, const struct options *o)
{
	log_error("cannot run '%s': %s", p->argv[0], strerror(p->program_error));
	if (o && o->verb_first && p->program_error == ENOENT) {
		log_hint("'%s' is a command of stockade's own, which comes first, before its options: %s", p->argv[0],
			 o->verb_first);
		return;
	}
	_cleanup_free_ char *fault = run_fault(p->argv[0], p->cwd);
	_cleanup_free_ char *builtin = !fault && p->program_error == ENOENT ? say_shell_builtin(p->argv, "stockade --")
									      : NULL;
	if (fault || builtin)
		log_hint("%s", fault ? fault : builtin);
}

static char *hidden_program(const struct policy *p, const char *what, const char *path);

void say_child_error(const struct child_error *e, const struct policy *p)
{
	const char *argv0 = p->argv[0];
	const char *err = strerror(e->err);
	switch (e->step) {
	case CHILD_STEP_MOUNT:
		log_error("cannot build the jail: %s '%s': %s", mount_step_name((enum mount_step)e->mount_step), e->path,
			  err);
		if (e->err == ELOOP)
			log_hint("a directory on that path turned into a symlink while the jail was set up");
		break;
	case CHILD_STEP_NETLINK:
		log_error("cannot bring up the jail's loopback: %s", err);
		break;
	case CHILD_STEP_INIT:
		log_error("the jail's init cannot %s: %s", e->path, err);
		break;
	case CHILD_STEP_PGRP:
		log_error("cannot give the command a process group of its own: %s", err);
		break;
	case CHILD_STEP_SESSION:
		log_error("cannot give the command a session and terminal of its own: %s", err);
		break;
	case CHILD_STEP_TERMINAL:
		log_error("cannot open the jail's terminal '%s': %s", e->path, err);
		break;
	case CHILD_STEP_CGROUP:
		log_error("cannot move the command into the cgroup '%s': %s", e->path, err);
		break;
	case CHILD_STEP_CHDIR:
		log_error("cannot change to '%s': %s", e->path, err);
		break;
	case CHILD_STEP_CAPS:
		log_error("cannot drop capabilities: %s", err);
		break;
	case CHILD_STEP_NNP:
		log_error("cannot set no_new_privs: %s", err);
		break;
	case CHILD_STEP_LANDLOCK:
		if (e->path[0])
			log_error("cannot apply the Landlock rule on '%s': %s", e->path, err);
		else
			log_error("cannot enforce the Landlock ruleset: %s", err);
		if (e->err == ELOOP)
			log_hint("a directory on that path turned into a symlink while the jail was set up");
		break;
	case CHILD_STEP_SECCOMP:
		log_error("cannot load the seccomp filter: %s", err);
		break;
	case CHILD_STEP_HANDOVER:
		log_error("cannot hand the seccomp listener to stockade: %s", err);
		break;
	case CHILD_STEP_EXEC: {
		log_error("cannot run '%s': %s", argv0, err);
		/* A script whose interpreter the jail does not have: the
		 * program is granted (wherever it lies), what its first line
		 * names is not; the option that gives it, as it is. */
		_cleanup_free_ char *interp = e->err == EACCES || e->err == ENOENT ? script_interpreter(e->path) : NULL;
		/* a program or interpreter a rule hides: --read of it would be
		 * refused (the hide decides), so the rule is named instead */
		_cleanup_free_ char *hidden = e->err == EACCES || e->err == ENOENT
						      ? hidden_program(p, interp ? "its interpreter" : "the program", interp ? interp : e->path)
						      : NULL;
		_cleanup_free_ char *fault = !interp && !hidden ? run_fault(e->path, p->cwd) : NULL;
		if (hidden)
			log_hint("%s", hidden);
		else if (fault)
			log_hint("%s", fault);
		else if (interp && policy_effect(p, interp) == EFFECT_NONE)
			log_hint("its interpreter '%s' lies outside what the jail may read: --read %s", interp, interp);
		else if (e->err == EACCES)
			log_hint("the program, or what it needs to start, lies outside what the jail may read; grant it with --read PATH");
		break;
	}
	default:
		log_error("the command's setup failed: %s", err);
	}
}

static int str_cmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void say_discarded(const struct policy *p, struct report *rep, const char *place, const char *what,
		   const struct written *w, const char *keep)
{
	if (!w->files)
		return;
	report_discarded(rep, place, w->files, w->bytes, w->paths, keep);
	struct size_spec sz = { .bytes = w->bytes };
	char size[48];
	if (w->bytes < 1024)
		snprintf(size, sizeof(size), "%llu byte%s", w->bytes, w->bytes == 1 ? "" : "s");
	else
		size_spec_format(&sz, 0, size, sizeof(size));
	/* in order, whatever order the directory listed them in */
	qsort(w->tops, strv_length(w->tops), sizeof(char *), str_cmp_ptr);
	_cleanup_free_ char *tops = xstrdup("");
	for (size_t i = 0; w->tops[i]; i++) {
		char *more = xstrcat3(tops, i ? ", " : "", w->tops[i]);
		free(tops);
		tops = more;
	}
	/* Said once for the same places: a tool that writes its logs there on
	 * every run is said the first time, and -v says it each run. In a
	 * tmp, names are made anew each run: the place alone is the key. */
	_cleanup_free_ char *key = xstrcat3("discarded ", place, streq(place, "home") ? tops : "");
	say_note_once_keyed(p, rep, key, "the run wrote %lu file%s (%s) in %s, discarded with it at the end: %s%s; %s",
			    w->files, w->files == 1 ? "" : "s", size, what, tops, strv_length(w->tops) == 8 ? ", ..." : "",
			    keep);
}

/* One word of a failed command that may name a path: as written, made
 * absolute (~/ is your home, a relative one the command's directory). */
static void add_named(char ***v, const char *tok, size_t n, const char *cwd, const char *home)
{
	if (n < 2 || memchr(tok, '/', n) == NULL || memmem(tok, n, "://", 3))
		return;
	_cleanup_free_ char *word = xstrndup(tok, n);
	_cleanup_free_ char *abs = word_path(word, cwd, home);
	if (!abs)
		return;
	char *norm = path_normalize(abs);
	if (strv_contains(*v, norm))
		free(norm);
	else
		strv_push(v, norm);
}

char **say_named_paths(char *const *argv, const char *cwd, const char *home)
{
	char **v = strv_new();
	/* Each word, and its parts: a shell's -c script, an option's value
	 * (--file=/x, -I/x), a list (/a:/b). */
	static const char sep[] = " \t\n;&|()<>'\"`=:,";
	for (size_t i = 1; argv && argv[i] && strv_length(v) < 64; i++) {
		const char *w = argv[i];
		add_named(&v, w, strlen(w), cwd, home);
		for (const char *s = w; *s;) {
			s += strspn(s, sep);
			const char *tok = s;
			size_t n = strcspn(s, sep);
			s += n;
			if (n && tok[0] == '-') {
				const char *slash = memchr(tok, '/', n);
				if (!slash)
					continue;
				n -= (size_t)(slash - tok);
				tok = slash;
			}
			add_named(&v, tok, n, cwd, home);
		}
	}
	return v;
}

/* The system's own trees (/proc, /sys, /dev): the jail has its own. */
static bool system_tree(const char *path)
{
	return path_is_beneath(path, "/proc") || path_is_beneath(path, "/sys") || path_is_beneath(path, "/dev");
}

/* A path the jail cannot show as it is outside: no rule reads it, or it
 * lies beneath a place the backend makes (its own /tmp, the fresh home),
 * which is not the host's. rule, when given: the rule that decides it. */
static bool outside_jail(const struct policy *p, const char *canon, const struct rule **rule)
{
	if (system_tree(canon))
		return false;
	const struct rule *r = policy_rule_for(p, canon);
	if (rule)
		*rule = r;
	return policy_effect(p, canon) == EFFECT_NONE || (r && (r->flags & RULE_FRESH));
}

/* Where path leads on the host, canonical, when it exists and nothing on
 * the way to it is the run's to change: a link the run made in the
 * workspace (./data -> ~/private) must not turn a hint into a grant of
 * what it points at. NULL otherwise. */
static char *host_target(const struct policy *p, const char *path)
{
	struct steer st;
	if (steer_path(p->writable, path, &st) < 0)
		return NULL;
	char *target = !st.missing && !steer_steerable(&st) ? TAKE_PTR(st.target) : NULL;
	steer_free(&st);
	return target;
}

/* Whether the report names path in a refusal already (a hidden path's
 * open, a socket's connect), with its own fix. */
static bool refused_already(const struct report *rep, const char *path)
{
	for (size_t i = 0; rep && i < rep->n_denials; i++)
		if (rep->denials[i].what && strstr(rep->denials[i].what, path))
			return true;
	return false;
}

/* A missing path whose folder is there, out of the jail's reach, and
 * yours to write outside: what a failed command would have made there.
 * The folder, canonical, or NULL. */
static char *folder_to_make_in(const struct policy *p, const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 || errno != ENOENT)
		return NULL;
	_cleanup_free_ char *parent = path_parent(path, NULL);
	_cleanup_free_ char *dir = parent && !streq(parent, "/") ? host_target(p, parent) : NULL;
	if (!dir || system_tree(dir) || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) < 0 ||
	    policy_effect(p, dir) != EFFECT_NONE)
		return NULL;
	return TAKE_PTR(dir);
}

/* A path a hide rule keeps from the jail, as a message names it: with the
 * rule's origin (a file and line, an option), for a --read of it is
 * refused; `stockade why` says the rest. */
static char *hidden_entry(const char *shown, const struct rule *r)
{
	return xasprintf("%s (%s)", shown, r->origin ? r->origin : "a hide rule");
}

/* The line for a program (or what it needs to start, what) at canon,
 * which the hide rule r keeps from the jail. */
static char *hidden_program_line(const char *what, const char *canon, const struct rule *r)
{
	_cleanup_free_ char *shown = str_visible(canon), *entry = hidden_entry(shown, r);
	return xasprintf("the jail hides %s: %s; stockade why %s says why", what, entry, shown);
}

/* The same for the program path names, where a hide rule keeps it from
 * the jail; NULL otherwise. */
static char *hidden_program(const struct policy *p, const char *what, const char *path)
{
	_cleanup_free_ char *canon = host_target(p, path);
	const struct rule *r = NULL;
	if (!canon || !outside_jail(p, canon, &r) || !r || r->access != ACCESS_HIDE)
		return NULL;
	return hidden_program_line(what, canon, r);
}

char **say_unreadable_named(const struct policy *p, const struct report *rep, char *const *argv, const char *cwd,
			    const char *start)
{
	_cleanup_strv_ char **named = say_named_paths(argv, cwd, p->user_home);
	/* What a command makes in its fresh home is its own: a ~/ word (the
	 * jail's HOME, wherever the backend put it), and in the namespace
	 * jail anything in your home, where the fresh one is mounted. */
	_cleanup_strv_ char **untilded = p->home ? NULL : say_named_paths(argv, cwd, NULL);
	bool home_mounted = !p->home && rep && rep->backend && streq(rep->backend, backend_name(BACKEND_NAMESPACES));
	_cleanup_strv_ char **makes_in = strv_new();
	struct text paths = { 0 }, fix = { 0 }, hidden = { 0 }, makes = { 0 }, write = { 0 }, kept = { 0 };
	_cleanup_free_ char *first_hidden = NULL, *kept_dir = NULL;
	size_t n = 0;
	for (size_t i = 0; named[i] && n < 3; i++) {
		struct stat st;
		_cleanup_free_ char *canon = NULL, *dir = NULL, *t = NULL;
		/* /dev/stderr is the jail's own, wherever it leads outside */
		if (system_tree(named[i]))
			continue;
		bool fresh_home = !p->home && path_is_beneath(named[i], p->user_home) &&
				  (home_mounted || !strv_contains(untilded, named[i]));
		if (!fresh_home && (dir = folder_to_make_in(p, named[i])) && own_held_by(p, dir)) {
			/* a --write of it would be refused: it holds
			 * stockade's own state (or stockade) */
			_cleanup_free_ char *shown = str_visible(named[i]);
			t = xasprintf("%s%s", kept.n ? ", " : "", shown);
			text_adds(&kept, t);
			if (!kept_dir)
				kept_dir = str_visible(dir);
			n++;
			continue;
		}
		if (dir) {
			_cleanup_free_ char *shown = str_visible(named[i]), *shown_dir = str_visible(dir);
			t = xasprintf("%s%s", makes.n ? ", " : "", shown);
			text_adds(&makes, t);
			if (!strv_contains(makes_in, dir)) {
				strv_add(&makes_in, dir);
				free(t);
				t = xasprintf(" --write %s", shown_dir);
				text_adds(&write, t);
			}
			n++;
			continue;
		}
		const struct rule *r = NULL;
		if (!(canon = host_target(p, named[i])) || !outside_jail(p, canon, &r))
			continue;
		/* what you cannot read outside either, no option helps; a
		 * socket is --connect's (said when refused) */
		if (access(canon, R_OK) < 0 || stat(canon, &st) < 0 || S_ISSOCK(st.st_mode) ||
		    refused_already(rep, canon) || refused_already(rep, named[i]))
			continue;
		_cleanup_free_ char *shown = str_visible(canon);
		if (r && r->access == ACCESS_HIDE) {
			/* a secret is not offered here: why says which rule
			 * hides it, and what taking it away means */
			if (!hidden.n)
				first_hidden = xstrdup(shown);
			_cleanup_free_ char *entry = hidden_entry(shown, r);
			t = xasprintf("%s%s", hidden.n ? ", " : "", entry);
			text_adds(&hidden, t);
		} else {
			t = xasprintf("%s%s", paths.n ? ", " : "", shown);
			text_adds(&paths, t);
			free(t);
			t = xasprintf(" --read %s", shown);
			text_adds(&fix, t);
		}
		n++;
	}
	_cleanup_free_ char *ps = text_take(&paths), *fs = text_take(&fix), *hs = text_take(&hidden),
			    *ms = text_take(&makes), *ws = text_take(&write), *ks = text_take(&kept);
	char **lines = strv_new();
	const char *to = start ? start : "";
	size_t skip = start ? 0 : 1;	/* the fix's first space, with nothing before it */
	if (*ps)
		strv_push(&lines, xasprintf("the command names what the jail cannot read: %s; to allow: %s%s (--write "
					    "in place of --read where it changes them)",
					    ps, to, fs + skip));
	if (*ms)
		strv_push(&lines, xasprintf("the command names a file to make in a folder out of the jail's reach: %s; "
					    "to allow: %s%s",
					    ms, to, ws + skip));
	if (*ks)
		strv_push(&lines, xasprintf("the command names a file to make in a folder the run may not write: %s; a "
					    "--write of %s is refused (the run would reach stockade's own state): make it "
					    "in the workspace, or create the file outside the jail first and grant that "
					    "file with --write",
					    ks, kept_dir));
	if (*hs)
		strv_push(&lines,
			  xasprintf("the command names what the jail hides: %s; stockade why %s says why", hs, first_hidden));
	return lines;
}

char *say_unreadable_program(const struct policy *p, const char *word, const char *path_env, const char *cwd,
			     const char *start)
{
	_cleanup_free_ char *found = NULL, *canon = NULL;
	if (path_find_program(word, path_env, cwd, &found) < 0)
		return run_fault(word, cwd);
	const struct rule *r = NULL;
	if (!(canon = host_target(p, found)) || !outside_jail(p, canon, &r))
		return run_fault(found, cwd);
	if (r && r->access == ACCESS_HIDE)
		return hidden_program_line("the program", canon, r);
	_cleanup_free_ char *shown = str_visible(canon);
	return xasprintf("the program %s lies outside what the jail can read; to allow: %s%s--read %s", shown,
			 start ? start : "", start ? " " : "", shown);
}
