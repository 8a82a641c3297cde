/* A session's holder (holder.h). */
#include "jail/holder.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "jail/config.h"
#include "jail/places.h"
#include "landlock/landlock.h"
#include "jail/run.h"
#include "jail/say.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "lib/wire.h"
#include "policy/allow.h"
#include "policy/env.h"
#include "policy/layer.h"
#include "policy/report.h"

#define MAX_CLIENTS 128

struct hold_exec;

struct hold_client {
	int fd;
	uid_t uid;
	bool hello;
	bool foreign;		/* another user's: answered with a refusal, then dropped */
	struct hold_exec *exec;	/* the one it waits for, or NULL */
};

struct hold_exec {
	long id;
	struct hold_client *client;	/* NULL once the client is gone */
	pid_t pid;			/* in the jail, once started */
	bool say_started;		/* the client asked for "started" (a pty's master comes with it) */
	int report_fd;			/* -1: no report asked for */
	unsigned long long start_us;
	/* The session's denials when it began: what was refused while it
	 * ran is said when it fails, as a run's is. */
	unsigned *denied;
	size_t n_denied;
	/* The command as given, from where and on what PATH: its program
	 * looked for when the exec ends in 126 or 127, what its words name
	 * when it fails. */
	char **argv, *path_env, *cwd;
};

static void hold_exec_free(struct hold_exec *x)
{
	free(x->denied);
	strv_free(x->argv);
	free(x->path_env);
	free(x->cwd);
	free(x);
}

struct holder {
	struct holder_setup s;
	char *id, *sock_path, *info_path, *log_path;
	/* The session's log (the holder's stderr), read: what it holds
	 * past told is said to nobody yet. The next exec's caller, or the
	 * stopper, is given it, as a run gives its lines to its caller. */
	int log_fd;
	off_t told;
	bool stopped;		/* by a stop, not by its jail's end */
	struct run *r;
	const struct places *pl;
	int zygote;		/* -1 until ready */
	const char *backend;
	struct hold_client *clients[MAX_CLIENTS];
	size_t n_clients;
	struct hold_exec **execs;
	size_t n_execs;
	long next_id;
	unsigned long execs_done;
	unsigned long long last_us;	/* the last exec's end, or the start */
	unsigned long long started_us;
	bool stop;
	int stopper;		/* a client waiting for "stopped", or -1 */
	/* The last exec's environment, its caller's and where it ran, with
	 * what the scrub made of them: an agent's commands come one after
	 * another with the same, and the session's policy and places, the
	 * rest of what the scrub reads, never change. */
	struct {
		char **caller, *cwd, **envp;
	} env_kept;
};

struct holder *holder_new(const struct holder_setup *s)
{
	struct holder *h = xcalloc(1, sizeof(*h));
	h->s = *s;
	h->id = xstrdup(s->id);
	h->sock_path = xstrdup(s->sock_path);
	h->info_path = xstrdup(s->info_path);
	h->log_path = xstrdup(s->log_path);
	h->log_fd = open(s->log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	h->zygote = -1;
	h->stopper = -1;
	h->next_id = 1;
	h->started_us = h->last_us = now_usec();
	return h;
}

static void client_drop(struct holder *h, size_t i);

void holder_free(struct holder *h)
{
	if (!h)
		return;
	while (h->n_clients)
		client_drop(h, h->n_clients - 1);
	for (size_t i = 0; i < h->n_execs; i++) {
		if (h->execs[i]->report_fd >= 0)
			close(h->execs[i]->report_fd);
		free(h->execs[i]->denied);
		free(h->execs[i]);
	}
	free(h->execs);
	strv_free(h->env_kept.caller);
	free(h->env_kept.cwd);
	strv_free(h->env_kept.envp);
	if (h->s.listen_fd >= 0)
		close(h->s.listen_fd);
	if (h->stopper >= 0)
		close(h->stopper);
	free(h->id);
	free(h->sock_path);
	free(h->info_path);
	free(h->log_path);
	if (h->log_fd >= 0)
		close(h->log_fd);
	free(h);
}

static void write_info(const struct holder *h)
{
	_cleanup_free_ char *tmp = xstrcat3(h->info_path, ".new", "");
	FILE *f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "id=%s\npid=%d\nworkspace=%s\nbackend=%s\nstarted=%lld\nidle=%u\n", h->id, (int)getpid(),
		h->r->p->workspace, h->backend, (long long)time(NULL), h->s.idle_s);
	/* whole, or not put in place */
	if (fclose(f) == 0)
		(void)rename(tmp, h->info_path);
}

void holder_ready(struct holder *h, struct run *r, const struct places *pl, int zsock, const char *backend)
{
	h->r = r;
	h->pl = pl;
	h->zygote = zsock;
	h->backend = backend;
	write_info(h);
	/* What the jail's start said, the starter says: "r", then how much
	 * of the log that is. */
	struct stat st;
	if (h->log_fd >= 0 && fstat(h->log_fd, &st) == 0)
		h->told = st.st_size;
	if (h->s.ready_fd >= 0) {
		char ready[32];
		int n = snprintf(ready, sizeof(ready), "r%lld", (long long)h->told);
		(void)!write(h->s.ready_fd, ready, (size_t)n);
		close(h->s.ready_fd);
		h->s.ready_fd = -1;
	}
	h->last_us = now_usec();
}

static void send_simple(int fd, const char *type, const char *key, const char *value)
{
	struct wire_out o = { 0 };
	wire_begin(&o, type);
	if (key)
		wire_add(&o, key, value);
	(void)wire_send(fd, &o, NULL, 0);
	wire_out_free(&o);
}

/* What the log holds that nobody was told (the guard's lines between
 * commands, the run's end), each whole line once, to this client. */
static void tell_untold(struct holder *h, int fd)
{
	if (h->log_fd < 0)
		return;
	char buf[16384];
	size_t have = 0;
	for (;;) {
		ssize_t n = pread(h->log_fd, buf + have, sizeof(buf) - 1 - have, h->told + (off_t)have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			*nl = '\0';
			send_simple(fd, "said", "line", line);
			line = nl + 1;
		}
		size_t used = (size_t)(line - buf);
		if (!used && have == sizeof(buf) - 1) {
			/* a line longer than the buffer: said in pieces */
			send_simple(fd, "said", "line", buf);
			used = have;
		}
		h->told += (off_t)used;
		memmove(buf, line, have - used);
		have -= used;
	}
}

/* A refusal before the command runs: the line and the status. */
static void refuse(int fd, int status, const char *message, const char *hint)
{
	struct wire_out o = { 0 };
	wire_begin(&o, "error");
	wire_add_long(&o, "status", status);
	wire_add(&o, "message", message);
	if (hint)
		wire_add(&o, "hint", hint);
	(void)wire_send(fd, &o, NULL, 0);
	wire_out_free(&o);
}

static struct hold_exec *exec_by_id(const struct holder *h, long id, size_t *ret_i)
{
	for (size_t i = 0; i < h->n_execs; i++)
		if (h->execs[i]->id == id) {
			if (ret_i)
				*ret_i = i;
			return h->execs[i];
		}
	return NULL;
}

/* A signal to a started exec's process group, by the zygote. */
static void signal_exec(const struct holder *h, const struct hold_exec *x, long sig)
{
	if (x->pid <= 0 || h->zygote < 0)
		return;
	struct wire_out o = { 0 };
	wire_begin(&o, "signal");
	wire_add_long(&o, "id", x->id);
	wire_add_long(&o, "sig", sig);
	(void)wire_send(h->zygote, &o, NULL, 0);
	wire_out_free(&o);
}

static void client_drop(struct holder *h, size_t i)
{
	struct hold_client *c = h->clients[i];
	/* Its command ends with it, as a run's ends with stockade; what the
	 * command left running stays the session's. */
	if (c->exec) {
		c->exec->client = NULL;
		signal_exec(h, c->exec, SIGKILL);
	}
	close(c->fd);
	free(c);
	h->clients[i] = h->clients[--h->n_clients];
}

static void hello(struct holder *h, struct hold_client *c, const struct wire_msg *m)
{
	long v;
	if (wire_get_long(m, "version", 1, 1000, &v) < 0 || v != WIRE_VERSION) {
		refuse(c->fd, EXIT_STOCKADE, "this session speaks version 1 of the protocol", NULL);
		return;
	}
	c->hello = true;
	struct wire_out o = { 0 };
	wire_begin(&o, "hello");
	wire_add_long(&o, "version", WIRE_VERSION);
	wire_add(&o, "session", h->id);
	wire_add(&o, "workspace", h->r->p->workspace);
	wire_add(&o, "backend", h->backend);
	wire_add(&o, "network", net_mode_name(h->r->p->net));
	wire_add_long(&o, "pid", getpid());
	wire_add_long(&o, "running", (long)h->n_execs);
	wire_add_long(&o, "execs", (long)h->execs_done);
	wire_add_long(&o, "idle", h->s.idle_s);
	(void)wire_send(c->fd, &o, NULL, 0);
	wire_out_free(&o);
}

/* The environment a command of the session gets: its caller's, scrubbed
 * and pointed into the jail as the session's policy says. */
static char **exec_env(struct holder *h, const struct wire_msg *m, const char *cwd, struct env *e)
{
	_cleanup_free_ char **caller = wire_get_all(m, "env");
	*e = (struct env){ 0 };
	if (h->env_kept.envp && streq(h->env_kept.cwd, cwd) && strv_equal(h->env_kept.caller, caller)) {
		/* the kept strings, borrowed: e is freed within the exec */
		size_t n = strv_length(h->env_kept.envp);
		e->envp = xcalloc(n + 1, sizeof(char *));
		memcpy(e->envp, h->env_kept.envp, n * sizeof(char *));
		return e->envp;
	}
	env_again(e, caller, h->r->p);
	env_point_into_jail(e, h->pl->home, h->pl->tmpdir, cwd, h->r->p->env_decided);
	strv_free(h->env_kept.caller);
	free(h->env_kept.cwd);
	strv_free(h->env_kept.envp);
	h->env_kept.caller = strv_copy(caller);
	h->env_kept.cwd = xstrdup(cwd);
	h->env_kept.envp = strv_copy(e->envp);
	return e->envp;
}

static int net_rank(enum net_mode n)
{
	return n == NET_OFF ? 0 : n == NET_LOOPBACK ? 1 : 2;
}

struct narrowed {
	char **hide, **read;
	bool net;		/* net=off sent */
};

/* One thing that narrows one command: its own --hide, --read or --net
 * (who: the option), or a [command] section's (who: "FILE line N: KEY").
 * Checked against the session's policy and added to what goes to the
 * zygote, which makes it a layer of that command's own; false, and
 * refused with the way to have it, for anything that would widen. */
static bool narrow_one(const struct holder *h, struct hold_client *c, const char *key, const char *v,
		       const char *who, struct wire_out *o, struct narrowed *nw)
{
	const struct policy *p = h->r->p;
	if (streq(key, "net")) {
		enum net_mode n;
		/* off narrows any; allow is neither wider nor narrower than
		 * on or loopback (the session's relay is its own or absent) */
		if (net_mode_from_name(v, &n) < 0 || net_rank(n) > net_rank(p->net) ||
		    (n == NET_LOOPBACK && p->net == NET_ON) ||
		    (n != NET_OFF && n != p->net && (n == NET_ALLOW || p->net == NET_ALLOW))) {
			_cleanup_free_ char *msg = xasprintf("cannot give %s %s to one command of the session: its network "
							     "is %s, and a command's can only be off or the session's",
							     who, v, net_mode_name(p->net));
			_cleanup_free_ char *hint = xasprintf("start a session with it: stockade session start --net %s", v);
			refuse(c->fd, EXIT_STOCKADE, msg, hint);
			return false;
		}
		if (n != p->net && !nw->net) {
			wire_add(o, "net", net_mode_name(n));
			nw->net = true;
		}
		return true;
	}
	_cleanup_free_ char *canon = NULL;
	if (v[0] != '/' || path_canonical(v, &canon) < 0) {
		if (streq(key, "hide"))
			return true;	/* nothing there to hide */
		_cleanup_free_ char *msg = xasprintf("cannot give %s '%s' to one command of the session: %s", who, v,
						     strerror(errno ? errno : EINVAL));
		refuse(c->fd, EXIT_STOCKADE, msg, NULL);
		return false;
	}
	enum effect had = policy_effect(p, canon);
	/* A place the jail makes anew (the namespace jail's home and /tmp,
	 * at the host's paths) is not the host's: a --read or --write there
	 * would reach the jail's own, never what the path names outside, so
	 * the session does not give it (the landlock backend's places lie
	 * elsewhere, and a path there is refused as one outside the session). */
	const struct rule *decides = policy_rule_for(p, canon);
	if (decides && (decides->flags & RULE_FRESH) && !streq(key, "hide"))
		had = EFFECT_NONE;
	if (streq(key, "write")) {
		if (had == EFFECT_WRITE)
			return true;	/* the session's already */
	} else if (!streq(key, "read") || had != EFFECT_NONE) {
		if (had != EFFECT_NONE || streq(key, "hide")) {
			wire_add(o, key, canon);
			strv_add(streq(key, "hide") ? &nw->hide : &nw->read, canon);
		}
		return true;
	}
	_cleanup_free_ char *msg = xasprintf("cannot give %s '%s' to one command of the session: the session does not "
					     "let its commands %s it", who, canon, key);
	_cleanup_free_ char *hint = xasprintf("start a session with it: stockade session start --%s '%s'", key, canon);
	refuse(c->fd, EXIT_STOCKADE, msg, hint);
	return false;
}

/* A command's allow list (who: the option or the section's key). The
 * session's relay answers for the session's names, for all its commands
 * at once: a command has them all (its list the same as the session's,
 * or none) or no network (--net off); any other list is refused, with
 * the start that would give it. */
static bool narrow_allow(const struct holder *h, struct hold_client *c, const struct allow_entry *v, size_t n,
			 const char *who)
{
	const struct policy *p = h->r->p;
	if (!n)
		return true;
	bool same = p->net == NET_ALLOW;
	for (size_t i = 0; same && i < n; i++) {
		bool found = false;
		for (size_t k = 0; !found && k < p->n_allow; k++)
			found = allow_entry_same(&v[i], &p->allow[k]);
		same = found;
	}
	for (size_t k = 0; same && k < p->n_allow; k++) {
		bool found = false;
		for (size_t i = 0; !found && i < n; i++)
			found = allow_entry_same(&v[i], &p->allow[k]);
		same = found;
	}
	if (same)
		return true;
	char *given = NULL, *start = NULL;
	for (size_t i = 0; i < n; i++) {
		/* a built-in list by its name, once */
		if (v[i].list && i > 0 && v[i - 1].list && streq(v[i - 1].list, v[i].list))
			continue;
		_cleanup_free_ char *text = v[i].list ? xstrdup(v[i].list) : allow_entry_text(&v[i]);
		char *g = xasprintf("%s%s%s", given ? given : "", given ? ", " : "", text);
		char *s = xasprintf("%s --allow '%s'", start ? start : "", text);
		free(given);
		free(start);
		given = g, start = s;
	}
	_cleanup_free_ char *msg = NULL;
	if (p->net != NET_ALLOW)
		msg = xasprintf("cannot give %s %s to one command of the session: its network is %s, and a command's can "
				"only be off or the session's",
				who, given, net_mode_name(p->net));
	else
		msg = xasprintf("cannot give %s %s to one command of the session: its commands have the session's names, "
				"all of them or none (--net off), never a list of their own",
				who, given);
	_cleanup_free_ char *hint = xasprintf("%sstart a session with it: stockade session start%s",
					      p->net == NET_ALLOW ? "give it none (the session's names), or " : "", start);
	refuse(c->fd, EXIT_STOCKADE, msg, hint);
	free(given);
	free(start);
	return false;
}

/* The command's own options that narrow (hide=, read=, net=, allow=
 * fields). */
static bool narrowing(const struct holder *h, struct hold_client *c, const struct wire_msg *m, struct wire_out *o,
		      struct narrowed *nw)
{
	struct allow_entry *allow = NULL;
	size_t n_allow = 0;
	for (size_t i = 0; i < m->n; i++) {
		const char *why;
		if (streq(m->f[i].key, "allow") &&
		    allow_parse(m->f[i].value, SOURCE_OPTION_OF("--allow"), &allow, &n_allow, &why) < 0) {
			allow_entries_free(allow, n_allow);
			_cleanup_free_ char *msg = xasprintf("invalid --allow '%s': %s", m->f[i].value, why);
			refuse(c->fd, EXIT_STOCKADE, msg, NULL);
			return false;
		}
	}
	bool ok = narrow_allow(h, c, allow, n_allow, "--allow");
	allow_entries_free(allow, n_allow);
	if (!ok)
		return false;
	for (size_t i = 0; i < m->n; i++) {
		const char *key = m->f[i].key;
		if (streq(key, "net") || streq(key, "hide") || streq(key, "read")) {
			_cleanup_free_ char *who = xstrcat3("--", key, "");
			if (!narrow_one(h, c, key, m->f[i].value, who, o, nw))
				return false;
		}
	}
	return true;
}

/* "FILE line N: KEY", for a section's setting. */
static char *where(const struct source *s)
{
	return xasprintf("%s line %u: %s", s->file ? s->file : "?", s->line, s->key ? s->key : "?");
}

/* The [command] sections of the session's files that match the command:
 * a nested layer for it alone, which can only narrow what the session
 * has. Their rules and network go as its own options do; their
 * environment into e; anything else is refused, said with the start that
 * would give it. */
static bool sections(const struct holder *h, struct hold_client *c, char *const *argv, char *const *caller,
		     const char *cwd, struct env *e, struct wire_out *o, struct narrowed *nw)
{
	if (!h->r->rc)
		return true;
	struct layer *ls = NULL;
	size_t n = 0;
	(void)config_exec_layers(h->r->rc, argv, caller, env_get(e->envp, "PATH"), cwd, h->r->p, &ls, &n);
	bool ok = true;
	for (size_t i = 0; ok && i < n; i++) {
		const struct layer *l = &ls[i];
		for (size_t k = 0; ok && k < l->n_rules; k++) {
			const struct layer_rule *lr = &l->rules[k];
			static const char *const keys[] = { [ACCESS_WRITE] = "write", [ACCESS_READ] = "read",
							    [ACCESS_PROTECT] = "read", [ACCESS_HIDE] = "hide" };
			_cleanup_free_ char *abs = lr->path[0] == '/' ? xstrdup(lr->path) : path_join(l->dir ? l->dir : cwd, lr->path);
			_cleanup_free_ char *who = where(&lr->source);
			ok = narrow_one(h, c, keys[lr->access], abs, who, o, nw);
		}
		if (ok && l->n_allow) {
			_cleanup_free_ char *who = where(&l->allow[0].source);
			ok = narrow_allow(h, c, l->allow, l->n_allow, who);
		}
		if (ok && l->net_set) {
			_cleanup_free_ char *who = where(&l->net_source);
			ok = narrow_one(h, c, "net", net_mode_name(l->net), who, o, nw);
		}
		for (size_t k = 0; ok && k < l->n_env_ops; k++) {
			const struct env_op *op = &l->env_ops[k];
			if (op->kind == ENV_PASS && env_is_secret(op->name)) {
				_cleanup_free_ char *who = where(&op->source);
				_cleanup_free_ char *msg = xasprintf("cannot pass %s to one command of the session (%s): the "
								     "session takes it away", op->name, who);
				_cleanup_free_ char *hint = xasprintf("start a session with it: stockade session start --env %s", op->name);
				refuse(c->fd, EXIT_STOCKADE, msg, hint);
				ok = false;
			} else if (op->kind != ENV_PASS) {
				env_put(e, op->name, op->kind == ENV_SET ? op->value : NULL, "a [command] section");
			}
		}
		/* What a session settles once, for all its commands. */
		const struct source *other = l->n_grants ? &l->grants[0].source : layer_session_setting(l);
		if (ok && other) {
			_cleanup_free_ char *who = where(other);
			_cleanup_free_ char *msg = xasprintf("cannot apply %s to one command of the session: a session settles "
							     "it once, for all its commands", who);
			refuse(c->fd, EXIT_STOCKADE, msg, "start a session with it (stockade session start with that option), or run the command on its own: stockade -- COMMAND");
			ok = false;
		}
	}
	for (size_t i = 0; i < n; i++)
		layer_free(&ls[i]);
	free(ls);
	return ok;
}

/* The landlock backend's: the command's --hide and --read planned here,
 * where the holder sees what the command does and can list what it
 * cannot, into a ruleset it restricts itself with (a layer granting
 * everything less those). */
static int narrowing_ruleset(const struct narrowed *nw, int *ret)
{
	struct policy p;
	policy_init(&p);
	p.net = NET_ON;
	policy_add_rule(&p, "/", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("the session"), "the session's grants");
	for (size_t i = 0; nw->hide && nw->hide[i]; i++)
		policy_add_rule(&p, nw->hide[i], ACCESS_HIDE, 0, SOURCE_OPTION_OF("--hide"), "--hide");
	for (size_t i = 0; nw->read && nw->read[i]; i++)
		policy_add_rule(&p, nw->read[i], ACCESS_READ, 0, SOURCE_OPTION_OF("--read"), "--read");
	policy_sort(&p);
	struct landlock_plan plan;
	int r = landlock_plan(&p, landlock_abi(), 0, &plan);
	if (r == 0) {
		plan.scoped = 0;
		const char *failing = NULL;
		r = landlock_build(&plan, ret, &failing);
		landlock_plan_free(&plan);
	}
	policy_free(&p);
	return r;
}

static void exec(struct holder *h, struct hold_client *c, const struct wire_msg *m, int *fds, size_t n_fds)
{
	/* What the guard undid since the last command's end (something the
	 * session left running planted it), first. */
	tell_untold(h, c->fd);
	if (c->exec) {
		refuse(c->fd, EXIT_STOCKADE, "this connection runs a command already: one at a time on each", NULL);
		return;
	}
	if (n_fds < 3) {
		refuse(c->fd, EXIT_STOCKADE, "an exec brings descriptors 0, 1 and 2", NULL);
		return;
	}
	_cleanup_free_ char **argv = wire_get_all(m, "arg");
	if (!argv[0] || !argv[0][0]) {
		refuse(c->fd, EXIT_STOCKADE, "no command to run", "stockade session exec ID -- COMMAND [ARG]...");
		return;
	}
	const char *cwd_raw = wire_get(m, "cwd");
	_cleanup_free_ char *cwd = NULL;
	const char *ws = h->r->p->workspace;
	if (!cwd_raw || path_canonical(cwd_raw, &cwd) < 0 || !(streq(cwd, ws) || path_is_beneath(cwd, ws))) {
		_cleanup_free_ char *msg = xasprintf("cannot run '%s' in '%s': it is outside the session's workspace '%s'",
						     argv[0], cwd_raw ? cwd_raw : "?", ws);
		_cleanup_free_ char *hint = xasprintf("cd into '%s', or start a session there: stockade session start -C DIR", ws);
		refuse(c->fd, EXIT_STOCKADE, msg, hint);
		return;
	}
	struct wire_out o = { 0 };
	wire_begin(&o, "exec");
	struct narrowed nw = { 0 };
	struct env e;
	exec_env(h, m, cwd, &e);
	_cleanup_free_ char **caller = wire_get_all(m, "env");
	bool ok = narrowing(h, c, m, &o, &nw) && sections(h, c, argv, caller, cwd, &e, &o, &nw);
	/* The landlock backend: the narrowing paths planned here, into a
	 * ruleset the command restricts itself with. */
	int sent[4] = { fds[0], fds[1], fds[2], -1 };
	size_t n_sent = 3;
	_cleanup_close_ int ruleset = -1;
	if (ok && streq(h->backend, "landlock") && (nw.hide || nw.read)) {
		int err = narrowing_ruleset(&nw, &ruleset);
		if (err < 0) {
			_cleanup_free_ char *msg = xasprintf("cannot plan the command's --hide and --read: %s", strerror(-err));
			refuse(c->fd, EXIT_STOCKADE, msg, NULL);
			ok = false;
		}
		wire_add(&o, "ruleset", "1");
		sent[n_sent++] = ruleset;
	}
	strv_free(nw.hide);
	strv_free(nw.read);
	if (!ok) {
		wire_out_free(&o);
		env_free(&e);
		return;
	}
	int report_fd = -1;
	if (wire_get(m, "report") && n_fds > 3)
		report_fd = dup(fds[3]);
	struct hold_exec *x = xcalloc(1, sizeof(*x));
	*x = (struct hold_exec){ .id = h->next_id++, .client = c, .report_fd = report_fd, .start_us = now_usec(),
				 .say_started = wire_get(m, "tty-fds") || wire_get(m, "started") };
	x->denied = report_denial_counts(h->r->rep, &x->n_denied);
	const char *path_env = env_get(e.envp, "PATH");
	x->cwd = xstrdup(cwd);
	x->argv = strv_copy(argv);
	x->path_env = path_env ? xstrdup(path_env) : NULL;
	wire_add_long(&o, "id", x->id);
	wire_add(&o, "cwd", cwd);
	for (size_t i = 0; argv[i]; i++)
		wire_add(&o, "arg", argv[i]);
	for (size_t i = 0; e.envp && e.envp[i]; i++)
		wire_add(&o, "env", e.envp[i]);
	/* What the command inherits of the caller's, as an exec would (the
	 * zygote keeps each within the session's). */
	long ign, blocked, mask, nice;
	if (wire_get_long(m, "sigign", 0, 0x7fffffff, &ign) == 0 && ign)
		wire_add_long(&o, "sigign", ign);
	if (wire_get_long(m, "sigblk", 0, 0x7fffffff, &blocked) == 0)
		wire_add_long(&o, "sigblk", blocked);
	if (wire_get_long(m, "umask", 0, 0777, &mask) == 0)
		wire_add_long(&o, "umask", mask);
	if (wire_get_long(m, "nice", -20, 19, &nice) == 0)
		wire_add_long(&o, "nice", nice);
	if (wire_get(m, "cpus"))
		wire_add(&o, "cpus", wire_get(m, "cpus"));
	_cleanup_free_ char **lims = wire_get_all(m, "rlimit");
	for (size_t i = 0; lims[i]; i++)
		wire_add(&o, "rlimit", lims[i]);
	static const char *const tty_keys[] = { "tty-fds", "ctty", "rows", "cols", "tio" };
	for (size_t i = 0; i < ARRAY_SIZE(tty_keys); i++)
		if (wire_get(m, tty_keys[i]))
			wire_add(&o, tty_keys[i], wire_get(m, tty_keys[i]));
	int r = wire_send(h->zygote, &o, sent, n_sent);
	wire_out_free(&o);
	env_free(&e);
	if (r < 0) {
		_cleanup_free_ char *msg = xasprintf("cannot start '%s' in the session: %s", argv[0], strerror(-r));
		refuse(c->fd, EXIT_STOCKADE, msg, r == -EMSGSIZE ? "the environment and arguments together must stay under 256 KiB" : NULL);
		if (report_fd >= 0)
			close(report_fd);
		hold_exec_free(x);
		return;
	}
	h->execs = xgrow(h->execs, h->n_execs, sizeof(*h->execs));
	h->execs[h->n_execs++] = x;
	c->exec = x;
}

static void client_message(struct holder *h, size_t i)
{
	struct hold_client *c = h->clients[i];
	struct wire_msg m;
	int fds[WIRE_MAX_FDS];
	size_t n_fds = 0;
	int r = wire_recv(c->fd, &m, fds, WIRE_MAX_FDS, &n_fds);
	if (r == -EPIPE || r == -ECONNRESET) {
		client_drop(h, i);
		return;
	}
	if (r < 0 && c->foreign) {
		client_drop(h, i);
		return;
	}
	if (r < 0) {
		refuse(c->fd, EXIT_STOCKADE, "a message this session cannot read (stockade.1, SESSIONS)", NULL);
		return;
	}
	if (c->foreign) {
		/* Whatever it asked: refused, and gone (its message read
		 * first, so that the refusal reaches it). */
		refuse(c->fd, EXIT_STOCKADE, "this session is another user's", NULL);
		for (size_t k = 0; k < n_fds; k++)
			close(fds[k]);
		wire_msg_free(&m);
		client_drop(h, i);
		return;
	} else if (streq(m.type, "hello")) {
		hello(h, c, &m);
	} else if (!c->hello) {
		refuse(c->fd, EXIT_STOCKADE, "say hello first, with version=1", NULL);
	} else if (streq(m.type, "exec") && !h->stop) {
		exec(h, c, &m, fds, n_fds);
	} else if (streq(m.type, "signal")) {
		long sig;
		if (c->exec && wire_get_long(&m, "sig", 1, 64, &sig) == 0)
			signal_exec(h, c->exec, sig);
	} else if (streq(m.type, "stop")) {
		h->stop = true;
		h->stopped = true;
		if (h->stopper < 0) {
			/* answered once the jail is gone (holder_finish) */
			h->stopper = c->fd;
			free(c);
			h->clients[i] = h->clients[--h->n_clients];
		}
	} else {
		_cleanup_free_ char *msg = xasprintf("no such request '%s': hello, exec, signal, stop", m.type);
		refuse(c->fd, EXIT_STOCKADE, msg, NULL);
	}
	for (size_t k = 0; k < n_fds; k++)
		close(fds[k]);
	wire_msg_free(&m);
}

static void accept_client(struct holder *h)
{
	int fd = accept4(h->s.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	/* Blocking from now: each message is small, and the client reads. */
	(void)fcntl(fd, F_SETFL, 0);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	/* Only the user who started the session: the socket's folder is
	 * theirs alone already; the peer's credentials say it again. */
	if (h->n_clients == MAX_CLIENTS) {
		close(fd);
		return;
	}
	bool foreign = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid();
	struct timeval tv = { .tv_sec = 5 };
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	struct hold_client *c = xcalloc(1, sizeof(*c));
	*c = (struct hold_client){ .fd = fd, .uid = cred.uid, .foreign = foreign };
	h->clients[h->n_clients++] = c;
}

static void tap_report(const char *line, void *data)
{
	report_said_line(data, line);
}

static void exec_ended(struct holder *h, long id, int wstatus)
{
	size_t i;
	struct hold_exec *x = exec_by_id(h, id, &i);
	if (!x)
		return;
	/* What the jail planted meanwhile (this command, or anything the
	 * session left running) is undone before the status goes out. */
	struct report *rep = h->r->rep;
	log_tap_set(tap_report, rep);
	int status = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
	bool cleanup_failed = run_recheck_guard(h->r) < 0;
	if (cleanup_failed)
		status = EXIT_UNDO_FAILED;
	if (x->report_fd >= 0) {
		rep->exited = true;
		rep->signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
		rep->exit_code = WIFSIGNALED(wstatus) ? 0 : WEXITSTATUS(wstatus);
		rep->status = status;
		rep->run_us = now_usec() - x->start_us;
		(void)report_write_fd(rep, x->report_fd);
		close(x->report_fd);
	}
	if (x->client) {
		tell_untold(h, x->client->fd);
		/* What was refused while it ran (the session's other commands
		 * are in the same report), in one line when it failed. */
		_cleanup_free_ char *line = status != 0 ? report_denials_line_since(rep, x->denied, x->n_denied) : NULL;
		if (line && *line) {
			/* An option that allows it is the session's to have:
			 * said as the start that gives it. */
			char *to = strstr(line, "; to allow: --");
			if (to)
				*to = '\0';
			_cleanup_free_ char *said =
				xasprintf("stockade: refused: %s%s%s", line,
					  to ? "; to allow, start a session with it: stockade session start " : "",
					  to ? to + strlen("; to allow: ") : "");
			send_simple(x->client->fd, "said", "line", said);
		}
		/* What it names that the session cannot read: a run grants
		 * its own program, a session started before it cannot. */
		static const char start[] = "start a session with it: stockade session start";
		_cleanup_free_ char *program =
			!WIFSIGNALED(wstatus) && (status == 126 || status == 127)
				? say_unreadable_program(h->r->p, x->argv[0], x->path_env, x->cwd, start) : NULL;
		_cleanup_strv_ char **named = status != 0 ? say_unreadable_named(h->r->p, h->r->rep, x->argv, x->cwd, start)
							  : strv_new();
		_cleanup_free_ char *run = NULL, *builtin = NULL;
		if (!program && !WIFSIGNALED(wstatus) && status == 127) {
			run = xasprintf("stockade session exec %s --", h->id);
			builtin = say_shell_builtin(x->argv, run);
		}
		if (program)
			strv_add(&named, program);
		if (builtin)
			strv_add(&named, builtin);
		for (size_t k = 0; named[k]; k++) {
			_cleanup_free_ char *said = xstrcat3("hint: ", named[k], "");
			send_simple(x->client->fd, "said", "line", said);
		}
		struct wire_out o = { 0 };
		wire_begin(&o, "exit");
		if (WIFSIGNALED(wstatus))
			wire_add_long(&o, "signal", WTERMSIG(wstatus));
		else
			wire_add_long(&o, "code", WEXITSTATUS(wstatus));
		wire_add_long(&o, "status", status);
		(void)wire_send(x->client->fd, &o, NULL, 0);
		wire_out_free(&o);
		x->client->exec = NULL;
	}
	hold_exec_free(x);
	h->execs[i] = h->execs[--h->n_execs];
	h->execs_done++;
	h->last_us = now_usec();
}

static void zygote_message(struct holder *h)
{
	struct wire_msg m;
	int fds[WIRE_MAX_FDS];
	size_t n_fds = 0;
	int r = wire_recv(h->zygote, &m, fds, WIRE_MAX_FDS, &n_fds);
	if (r == -EPIPE) {
		/* The zygote is gone: the session is over. */
		h->stop = true;
		h->zygote = -1;
		return;
	}
	if (r < 0)
		return;
	long id;
	struct hold_exec *x = wire_get_long(&m, "id", 0, LONG_MAX, &id) == 0 ? exec_by_id(h, id, NULL) : NULL;
	if (x && streq(m.type, "started")) {
		long pid = 0;
		(void)wire_get_long(&m, "pid", 1, INT32_MAX, &pid);
		x->pid = (pid_t)pid;
		if (x->client && x->say_started) {
			struct wire_out o = { 0 };
			wire_begin(&o, "started");
			wire_add_long(&o, "pid", pid);
			(void)wire_send(x->client->fd, &o, fds, n_fds);
			wire_out_free(&o);
		}
	} else if (x && streq(m.type, "stopped")) {
		if (x->client)
			send_simple(x->client->fd, "stopped", NULL, NULL);
	} else if (x && streq(m.type, "exit")) {
		long st = 0;
		(void)wire_get_long(&m, "status", 0, INT32_MAX, &st);
		exec_ended(h, id, (int)st);
	}
	for (size_t k = 0; k < n_fds; k++)
		close(fds[k]);
	wire_msg_free(&m);
}

/* The guard's watches, after the clients, while no command runs: a
 * hand-off that something the session left running changes between
 * commands is undone at once. A command that runs is checked at its end,
 * undisturbed (its events wait in the watch's queue till then). */
static size_t guard_pollfds(const struct holder *h, struct pollfd *fds)
{
	return h->r && !h->n_execs && !h->stop ? run_guard_pollfds(h->r, fds, RUN_GUARD_AREAS) : 0;
}

static void guard_serve(struct holder *h, const struct pollfd *fds, size_t n)
{
	for (size_t i = 2 + h->n_clients; i < n; i++)
		if (fds[i].revents) {
			run_guard_watched(h->r);
			return;
		}
}

size_t holder_pollfds(const struct holder *h, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	if (max < 2 + MAX_CLIENTS + RUN_GUARD_AREAS)
		return 0;
	fds[n++] = (struct pollfd){ .fd = h->stop ? -1 : h->s.listen_fd, .events = POLLIN };
	fds[n++] = (struct pollfd){ .fd = h->zygote, .events = POLLIN };
	for (size_t i = 0; i < h->n_clients; i++)
		fds[n++] = (struct pollfd){ .fd = h->clients[i]->fd, .events = POLLIN };
	n += guard_pollfds(h, fds + n);
	return n;
}

void holder_serve(struct holder *h, const struct pollfd *fds, size_t n)
{
	if (n < 2)
		return;
	/* before the clients, whose messages may start a command or drop
	 * one of them */
	guard_serve(h, fds, n);
	if (fds[1].revents)
		zygote_message(h);
	/* Clients from the last, so that a drop moves one already seen. */
	for (size_t i = n - 2; i-- > 0;)
		if (i < h->n_clients && fds[2 + i].fd == h->clients[i]->fd && fds[2 + i].revents)
			client_message(h, i);
	if (fds[0].revents & POLLIN)
		accept_client(h);
}

int holder_timeout_ms(const struct holder *h)
{
	if (!h->s.idle_s || h->n_execs || h->n_clients)
		return -1;
	unsigned long long due = h->last_us + (unsigned long long)h->s.idle_s * 1000000ULL, now = now_usec();
	return now >= due ? 0 : (int)((due - now) / 1000 + 1);
}

bool holder_done(const struct holder *h)
{
	return h->stop || holder_timeout_ms(h) == 0;
}

void holder_forget_files(const struct holder *h)
{
	(void)unlink(h->sock_path);
	(void)unlink(h->info_path);
}

void holder_finish(struct holder *h)
{
	holder_forget_files(h);
	/* A command under way was killed with every process of the session:
	 * it ran, so its caller gets what it got (SIGKILL's 137), never the
	 * 125 of a command that did not run. One not yet started may have
	 * begun: the same. */
	for (size_t i = 0; i < h->n_clients; i++) {
		struct hold_client *c = h->clients[i];
		if (!c->exec) {
			refuse(c->fd, EXIT_STOCKADE, "the session has ended", NULL);
			continue;
		}
		_cleanup_free_ char *line = xasprintf("stockade: the session '%s' %s while the command ran: it was killed "
						      "with every process of the session (SIGKILL)",
						      h->id, h->stopped ? "was stopped" : "ended (its jail is gone)");
		send_simple(c->fd, "said", "line", line);
		if (h->stopper < 0)
			tell_untold(h, c->fd);
		struct wire_out o = { 0 };
		wire_begin(&o, "exit");
		wire_add_long(&o, "signal", SIGKILL);
		wire_add_long(&o, "status", 128 + SIGKILL);
		(void)wire_send(c->fd, &o, NULL, 0);
		wire_out_free(&o);
		c->exec->client = NULL;
		c->exec = NULL;
	}
	/* What the session's end undid, to whoever stopped it. */
	if (h->stopper >= 0) {
		tell_untold(h, h->stopper);
		send_simple(h->stopper, "stopped", "session", h->id);
	}
	/* Its log goes with its other places, unless it holds what nobody
	 * was told (an idle end's guard lines): then it stays, and an exec
	 * or stop of the session says where. */
	struct stat st;
	if (h->log_fd >= 0 && fstat(h->log_fd, &st) == 0 && st.st_size <= h->told)
		(void)unlink(h->log_path);
}
