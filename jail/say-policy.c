/* The messages about a policy that could not be built, and the notes on
 * what it skipped: what every system says, macOS as well as Linux. */
#include "jail/say-policy.h"

#include "lib/log.h"
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
		if (f->err == ENOENT)
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
	case POLICY_SELF_WRITABLE:
		log_error("refusing to run: stockade itself ('%s') would be writable from the jail", path);
		log_hint("install stockade outside the workspace (make install), or choose another --workspace");
		break;
	case POLICY_STATE_WRITABLE:
		log_error("refusing to run: stockade's state directory '%s' would be writable from the jail", path);
		log_hint("choose a workspace that does not hold it, or set XDG_STATE_HOME elsewhere");
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
	case POLICY_RULE_SPECIAL:
		log_error("%s '%s' %s cannot be honoured: /proc and /dev are the jail's own", key, path, at);
		break;
	case POLICY_PATH_STEERED:
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

void say_skipped(const struct policy *p)
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
		log_note("'%s' is a credential stockade hides: the command may %s it, as %s asks", r->path,
			 r->access == ACCESS_WRITE ? "write" : "read", at);
	}
	for (size_t i = 0; i < p->n_skipped; i++) {
		const struct rule *r = &p->skipped[i];
		if (r->source.kind == SOURCE_OPTION) {
			log_note("%s '%s' does not exist: skipped", key_of(&r->source, "--hide"), r->path);
		} else {
			_cleanup_free_ char *at = where(&r->source);
			log_note("%s '%s' (%s) does not exist: skipped", key_of(&r->source, "hide"), r->path, at);
		}
	}
}
