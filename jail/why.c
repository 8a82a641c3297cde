#include "jail/why.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/allow.h"
#include "policy/carried.h"
#include "policy/why.h"

/* Each field as a terminal shows it safely: the path asked about, and
 * the rules and fixes that name paths, may hold any byte. */
static void print_one(const char *head, const struct why *w)
{
	_cleanup_free_ char *vhead = str_visible(head), *what = str_visible(w->what);
	_cleanup_free_ char *rule = w->rule ? str_visible(w->rule) : NULL, *source = str_visible(w->source);
	_cleanup_free_ char *fix = w->fix ? str_visible(w->fix) : NULL;
	_cleanup_free_ char *note = w->note ? str_visible(w->note) : NULL;
	printf("%s: %s (%s)\n", vhead, w->allowed ? "allowed" : "refused", what);
	if (rule)
		printf("  rule:  %s\n", rule);
	printf("  from:  %s\n", source);
	if (note)
		printf("  note:  %s\n", note);
	if (fix)
		printf("  allow: %s\n", fix);
}

/* The path as the jail would see it: canonical where it exists, else
 * normalised against the current directory. */
static char *target_path(const struct policy *p, const char *arg)
{
	_cleanup_free_ char *abs = arg[0] == '/' ? xstrdup(arg) : path_join(p->cwd, arg);
	char *c = NULL;
	if (path_canonical(abs, &c) == 0)
		return c;
	return path_normalize(abs);
}

int why_verb(const struct policy *p, const char *target)
{
	struct why w;
	if (str_has_prefix(target, "unix:")) {
		_cleanup_free_ char *given = target[5] == '/' ? path_normalize(target + 5) : path_join(p->cwd, target + 5);
		_cleanup_free_ char *path = target_path(p, target + 5);
		why_unix(p, given, path, &w);
		_cleanup_free_ char *head = xstrcat3("connect to unix:", path, "");
		print_one(head, &w);
		why_free(&w);
		return 0;
	}
	if (target[0] != '/' && target[0] != '.' && strchr(target, ':') && why_connect(p, target, &w) == 0) {
		_cleanup_free_ char *head = xstrcat3("connect to ", target, "");
		print_one(head, &w);
		why_free(&w);
		return 0;
	}
	if (str_has_control(target)) {
		log_error("cannot answer for '%s': a path with a control character", target);
		return EXIT_STOCKADE;
	}
	_cleanup_free_ char *path = target_path(p, target);
	_cleanup_free_ char *rh = xstrcat3("read ", path, ""), *wh = xstrcat3("write ", path, "");
	why_path(p, path, WANT_READ, &w);
	why_fix_for_real(p, path, WANT_READ, &w);
	print_one(rh, &w);
	why_free(&w);
	why_path(p, path, WANT_WRITE, &w);
	why_fix_for_real(p, path, WANT_WRITE, &w);
	print_one(wh, &w);
	why_free(&w);
	/* A host name with no port (why registry.npmjs.org), where no such
	 * path is: the question for the host, which a file name to be made
	 * (notes.md) would not be. */
	char name[ALLOW_NAME_MAX + 1];
	struct stat st;
	if (!strchr(target, '/') && strchr(target, '.') && allow_name_normalize(target, name) == 0 &&
	    lstat(path, &st) < 0 && errno == ENOENT)
		log_hint("no such path: for the host, ask why %s:443 in its place", name);
	return 0;
}

int why_in_run(const char *file, const char *target)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int e = read_file_at(AT_FDCWD, file, 64u << 20, &text, &len);
	if (e < 0) {
		log_error("cannot read the run's policy '%s' (%s): %s", file, POLICY_CARRIED_ENV, strerror(-e));
		log_hint("unset " POLICY_CARRIED_ENV " to ask outside a run");
		return EXIT_STOCKADE;
	}
	struct policy p;
	enum backend backend;
	unsigned line;
	if (strlen(text) != len || policy_uncarry(text, &p, &backend, &line) < 0) {
		log_error("cannot read the run's policy '%s' (%s), line %u: not a policy stockade wrote", file,
			  POLICY_CARRIED_ENV, line);
		return EXIT_STOCKADE;
	}
	_cleanup_free_ char *vfile = str_visible(file);
	printf("inside a run (%s backend): answered from the run's own policy, %s\n", backend_name(backend), vfile);
	int st = why_verb(&p, target);
	policy_free(&p);
	return st;
}
