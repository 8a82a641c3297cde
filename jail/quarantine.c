#include "jail/quarantine.h"

#include <stdio.h>
#include <time.h>

#include "guard/guard.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"

/* Each name as a terminal shows it safely (\n, \x1b): what the guard set
 * aside has the name the run gave it. */
static void print_item(const struct guard_quarantined *it)
{
	_cleanup_free_ char *id = str_visible(it->id);
	if (!it->path) {
		printf("%s  (its record cannot be read)\n", id);
		return;
	}
	char when[32] = "?";
	time_t t = (time_t)it->when;
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	_cleanup_free_ char *full = path_join(it->workspace, it->path);
	_cleanup_free_ char *path = str_visible(full), *why = str_visible(it->why ? it->why : "?");
	_cleanup_free_ char *detail = it->detail ? str_visible(it->detail) : NULL, *stored = str_visible(it->stored);
	printf("%s  %s  run %ld  %s  %s\n", id, when, it->run, why, path);
	if (detail)
		printf("    dropped: %s\n", detail);
	printf("    now at %s\n", stored);
}

static int list(const char *state_dir)
{
	struct guard_quarantined *v = NULL;
	size_t n = 0;
	int r = guard_quarantine_list(state_dir, &v, &n);
	if (r < 0) {
		log_error("cannot read the quarantine in '%s': %s", state_dir, strerror(-r));
		return 125;
	}
	if (!n)
		log_note("the quarantine in '%s' is empty", state_dir);
	for (size_t i = 0; i < n; i++)
		print_item(&v[i]);
	guard_quarantined_free(v, n);
	return 0;
}

static int restore(const char *state_dir, const char *id)
{
	struct guard_quarantined it;
	struct guard_failure f;
	int r = guard_quarantine_restore(state_dir, id, &it, &f);
	if (r == 0) {
		_cleanup_free_ char *path = path_join(it.workspace, it.path);
		log_note("put back '%s' (%s) from the quarantine", path, id);
	} else if (r == -ESRCH) {
		log_error("cannot restore '%s': no such item in the quarantine '%s/quarantine'", id, state_dir);
		log_hint("stockade quarantine lists the items");
	} else if (r == -EEXIST) {
		log_error("cannot restore '%s': '%s' is there now", id, f.path);
		log_hint("move it away first; nothing is replaced");
	} else if (r == -EBUSY) {
		log_error("cannot restore '%s': a run is under way in '%s'", id, f.path);
		log_hint("its end would set it aside again; restore once it is over");
	} else {
		log_error("cannot restore '%s' to '%s': %s", id, f.path ? f.path : "?", strerror(-r));
	}
	guard_failure_free(&f);
	guard_quarantined_done(&it);
	return r == 0 ? 0 : 125;
}

int quarantine_verb(const char *state_dir, char *const *args)
{
	if (args[0] && streq(args[0], "restore"))
		return restore(state_dir, args[1]);
	return list(state_dir);
}
