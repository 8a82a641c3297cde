/* The messages about a policy that could not be built, and the notes on
 * what it skipped: what every system says, macOS as well as Linux. */
#include "jail/say-policy.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"

/* How a source reads after the thing it named: "on the command line",
 * "in FILE line N (KEY)". */
static char *where(const struct source *s)
{
	if (s->kind == SOURCE_OPTION)
		return xstrdup("on the command line");
	_cleanup_free_ char *t = source_text(s);
	return xstrcat3("in ", t, "");
}

/* The option or key of a source, for "invalid --read": the name the user
 * wrote. */
static const char *key_of(const struct source *s, const char *fallback)
{
	return s->key ? s->key : fallback;
}

const char *say_private_reason(int err, const char *what)
{
	return err == EPERM ? what : strerror(err);
}

void say_policy_failure(const struct policy_failure *f)
{
	_cleanup_free_ char *at = where(&f->source);
	const char *key = key_of(&f->source, "path");
	const char *path = f->path ? f->path : "";
	switch (f->fault) {
	case POLICY_OK:
		break;
	case POLICY_NO_HOME:
		log_error("cannot find your home directory: HOME is unset and the user database has none");
		break;
	case POLICY_NO_CWD:
		log_error("cannot find the current directory: %s", strerror(f->err));
		break;
	case POLICY_CWD_UNRESOLVED:
		log_error("cannot resolve the current directory '%s': %s", path, strerror(f->err));
		break;
	case POLICY_PATH_CONTROL:
		log_error("invalid %s '%s' %s: the path has a control character", key, path, at);
		break;
	case POLICY_PATH_EMPTY:
		log_error("invalid %s '' %s: empty path", key, at);
		break;
	case POLICY_PATH_MISSING:
		log_error("cannot %s '%s' %s: %s", access_name(f->access), path, at, strerror(f->err));
		if (f->err == ENOENT && strchr(path, '$'))
			log_hint("stockade expands no variable in a path ('$' is a character of its name): write the path out, "
				 "or ~/ for your home");
		else if (f->err == ENOENT)
			log_hint("a read or write target must exist; a --hide target that does not is skipped");
		break;
	case POLICY_WORKSPACE_UNUSABLE:
		log_error("cannot use --workspace '%s': %s", path, strerror(f->err));
		break;
	case POLICY_WORKSPACE_NOT_DIR:
		log_error("cannot use --workspace '%s': not a directory", path);
		break;
	case POLICY_WORKSPACE_IS_ROOT:
	case POLICY_WORKSPACE_HOLDS_HOME:
		log_error("refusing to use '%s' as the workspace: %s", path,
			  f->fault == POLICY_WORKSPACE_IS_ROOT ? "it is the root directory" : "it is your home or holds it");
		log_hint("run stockade in a project directory, or pass --workspace DIR");
		break;
	case POLICY_HOME_UNUSABLE:
		log_error("cannot use --home '%s': %s", path,
			  say_private_reason(f->err, "not a private directory of yours (mode 0700, owned by you)"));
		break;
	case POLICY_HOME_HOLDS_HOME:
		log_error("refusing --home '%s': it is your home or holds it", path);
		log_hint("--home keeps a home of the jail's own across runs: name a directory of its own");
		break;
	case POLICY_HANDOFFS:
		log_error("cannot look for trust hand-offs in '%s': %s", path, strerror(f->err));
		break;
	case POLICY_IGNORED: {
		_cleanup_free_ char *set = source_text(&f->source);
		if (f->err == ENOENT)
			log_error("cannot hide what git ignores (%s): git is not in /usr/bin or /bin", set);
		else
			log_error("cannot ask git what it ignores in '%s' (%s): %s", path, set, strerror(f->err));
		log_hint("install git (/usr/bin/git), or run without the setting: hide-ignored is asked for by %s", set);
		break;
	}
	case POLICY_SELF_WRITABLE:
		log_error("refusing to run: stockade itself ('%s') would be writable from the jail", path);
		log_hint("install stockade outside the workspace (make install), or choose another --workspace");
		break;
	case POLICY_STATE_WRITABLE:
		log_error("refusing to run: stockade's state directory '%s' could be made or changed from the jail: the "
			  "run may write '%s', %s",
			  path, f->tree ? f->tree : path,
			  f->tree && path_is_beneath(f->tree, path) ? "inside it" : "which holds it or the way to it");
		log_hint("give the run a workspace and writes beside stockade's state, neither holding it nor inside it");
		break;
	case POLICY_RULE_OVERRULED:
		log_error("%s '%s' %s cannot be honoured: another rule decides that path (%s %s)", key, path, at,
			  access_name(f->other_access), f->other ? f->other : "?");
		log_hint("drop it, or name a path beneath it: on one path hide > protect > read > write, and the deepest rule wins");
		break;
	case POLICY_RULE_HOLDS_WORKSPACE:
		log_error("%s '%s' %s cannot be honoured: it holds the workspace, which the run writes", key, path, at);
		log_hint("hide paths beside the workspace, or choose another --workspace");
		break;
	case POLICY_RULE_STATE:
		log_error("%s '%s' %s cannot be honoured: it is stockade's own state (trust records, the quarantine, the "
			  "sessions' control sockets), which no run sees",
			  key, path, at);
		log_hint("drop it; a session's commands go through stockade session exec, outside the jail");
		break;
	case POLICY_RULE_SPECIAL:
		log_error("%s '%s' %s cannot be honoured: /proc and /dev are the jail's own", key, path, at);
		break;
	case POLICY_PATH_STEERED:
		if (f->source.kind == SOURCE_OPTION) {
			log_error("cannot %s '%s' %s: it leads to '%s' through '%s', in '%s', which a run may write: a run "
				  "could have chosen where it leads",
				  access_name(f->access), path, at, f->other ? f->other : "?", f->via ? f->via : "?",
				  f->tree ? f->tree : "?");
			log_hint("if '%s' is meant, name it as it is (%s %s); else take the symlink away", f->other ? f->other : "?",
				 key, f->other ? f->other : "?");
			break;
		}
		log_error("cannot %s '%s' %s: it leads to '%s' through '%s', in '%s', which a run may write: that way is "
			  "not the file's to grant",
			  access_name(f->access), path, at, f->other ? f->other : "?", f->via ? f->via : "?",
			  f->tree ? f->tree : "?");
		log_hint("if '%s' is meant, name it as it is (%s = %s); else take the symlink away outside the jail",
			 f->other ? f->other : "?", key, f->other ? f->other : "?");
		break;
	case POLICY_STATE_LINK:
		log_error("refusing to run: stockade's state directory is reached through the symlink '%s', which the "
			  "jail could change",
			  path);
		log_hint("point XDG_STATE_HOME at the real directory, outside the workspace and anything the jail may write");
		break;
	}
}

/* The notes said already, as the checksums of their text, one a line
 * in the state directory's said-once, newest last; read once a run. A
 * line on every run is a line nobody reads. */
#define SAID_ONCE_FILE "said-once"
#define SAID_ONCE_KEEP 256
static struct {
	bool loaded;
	char **sums;
} said;

static void said_load(const struct policy *p)
{
	if (said.loaded)
		return;
	said.loaded = true;
	said.sums = strv_new();
	_cleanup_free_ char *path = path_join(p->state_dir, SAID_ONCE_FILE);
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, path, 64 * 1024, &text, NULL) < 0)
		return;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strlen(line) == 16)
			strv_add(&said.sums, line);
	}
}

/* Best effort: a note not recorded is said again next time. Appended,
 * one write, so that runs side by side do not mix their lines; cut back
 * to the newest half by a rename when it has grown past its keep. */
static void said_record(const struct policy *p, const char *sum)
{
	strv_add(&said.sums, sum);
	if (mkdir_private(p->state_dir, p->uid) < 0)
		return;
	_cleanup_free_ char *path = path_join(p->state_dir, SAID_ONCE_FILE);
	size_t n = strv_length(said.sums);
	if (n <= SAID_ONCE_KEEP) {
		_cleanup_close_ int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		char line[18];
		memcpy(line, sum, 16);
		line[16] = '\n';
		if (fd >= 0)
			(void)!write(fd, line, 17);
		return;
	}
	_cleanup_free_ char *tmp = xstrcat3(path, ".new", "");
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_TRUNC | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	for (size_t i = n - SAID_ONCE_KEEP / 2; i < n; i++) {
		char line[18];
		memcpy(line, said.sums[i], 16);
		line[16] = '\n';
		if (write(fd, line, 17) != 17)
			return;
	}
	(void)rename(tmp, path);
}

static bool note_once(const struct policy *p, struct report *rep, const char *key, const char *line)
{
	if (rep)
		report_note(rep, line);
	char sum[17];
	fmt_x64(sum, fnv1a(FNV_INIT, key, strlen(key)));
	said_load(p);
	bool known = strv_contains(said.sums, sum);
	/* -q says nothing, and what it kept quiet counts as said: a run
	 * asked to be quiet is the user's choice of what to read (the
	 * report has it). */
	if (!known)
		said_record(p, sum);
	if ((known && log_verbosity < 1) || log_verbosity < 0)
		return false;
	log_note("%s", line);
	return true;
}

bool say_note_once(const struct policy *p, struct report *rep, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *line = NULL;
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	return line && note_once(p, rep, line, line);
}

bool say_note_once_keyed(const struct policy *p, struct report *rep, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *line = NULL;
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	return line && note_once(p, rep, key, line);
}

void say_skipped(const struct policy *p, struct report *rep)
{
	/* What the defaults would have granted, had a run not been able to
	 * steer the way to it: said where nothing else grants it. */
	for (size_t i = 0; i < p->n_declined; i++) {
		const struct declined *d = &p->declined[i];
		if (policy_effect(p, d->path) != EFFECT_NONE)
			continue;
		log_note("not granted: '%s' (%s): the way to it passes through %s '%s', which a run may write; --read '%s' "
			 "if it is meant",
			 d->path, d->origin, d->link ? "the symlink" : "the folder", d->link ? d->link : d->via, d->path);
	}
	for (size_t i = 0; i < p->n_lifted; i++) {
		const struct rule *r = &p->lifted[i];
		_cleanup_free_ char *at = source_text(&r->source);
		say_note_once(p, rep, "'%s' is a credential stockade hides: the command may %s it, as %s asks", r->path,
			      r->access == ACCESS_WRITE ? "write" : "read", at);
	}
	for (size_t i = 0; i < p->n_skipped; i++) {
		const struct rule *r = &p->skipped[i];
		if (r->source.kind == SOURCE_OPTION) {
			say_note_once(p, rep, "%s '%s' does not exist: skipped", key_of(&r->source, "--hide"), r->path);
		} else {
			_cleanup_free_ char *at = where(&r->source);
			say_note_once(p, rep, "%s '%s' (%s) does not exist: skipped", key_of(&r->source, "hide"), r->path,
				      at);
		}
	}
	for (size_t i = 0; i < p->n_grants; i++) {
		const struct net_grant *g = &p->grants[i];
		if (g->kind != GRANT_PUBLISH || net_grant_on_loopback(g))
			continue;
		_cleanup_free_ char *text = net_grant_text(g);
		say_note_once(p, rep, "--publish %s: reachable from other hosts on the network, as asked", text);
	}
}
