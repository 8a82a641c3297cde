#include "jail/quarantine.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "guard/guard.h"
#include "jail/git.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"

/* A git config's values are read up to this, and the config itself. */
#define CONFIG_MAX (4u << 20)

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
	_cleanup_free_ char *stored = str_visible(it->stored);
	printf("%s  %s  run %ld  %s  %s\n", id, when, it->run, why, path);
	_cleanup_strv_ char **dropped = guard_quarantined_settings(it);
	for (size_t i = 0; dropped[i]; i++) {
		_cleanup_free_ char *key = str_visible(dropped[i]);
		printf("%s%s", i ? ", " : "    dropped: ", key);
		if (!dropped[i + 1])
			putchar('\n');
	}
	printf("    now at %s\n", stored);
}

static int list(const char *state_dir)
{
	struct guard_quarantined *v = NULL;
	size_t n = 0;
	int r = guard_quarantine_list(state_dir, &v, &n);
	if (r < 0) {
		log_error("cannot read the quarantine in '%s': %s", state_dir, strerror(-r));
		return EXIT_STOCKADE;
	}
	if (!n)
		log_note("the quarantine in '%s' is empty", state_dir);
	for (size_t i = 0; i < n; i++)
		print_item(&v[i]);
	guard_quarantined_free(v, n);
	return 0;
}

/* ---- a config's dropped settings, put back into the config now there ---- */

/* A setting's name as git config takes it on its command line: never an
 * option, nothing a line could not hold. */
static bool key_plain(const char *key)
{
	return !str_empty(key) && key[0] != '-' && strchr(key, '.') && !str_has_control(key);
}

/* Every value of key in file (git config -z --get-all), NUL-separated in
 * *ret (n bytes); none: n 0. -errno, or 1 when git refused (said). */
static int config_values(const char *git, const char *file, int keep_fd, const char *key, char **ret, size_t *ret_n)
{
	char *args[] = { "config", "-z", "--file", (char *)file, "--get-all", (char *)key, NULL };
	_cleanup_free_ char *err = NULL;
	int status;
	int r = git_run(git, "/", NULL, keep_fd, args, CONFIG_MAX, ret, ret_n, &err, &status);
	if (r < 0)
		return r;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
		*ret_n = 0;	/* not set */
		return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		err[strcspn(err, "\n")] = '\0';
		log_error("cannot read '%s' from '%s': git config says: %s", key, file, err);
		free(*ret);
		*ret = NULL;
		return 1;
	}
	return 0;
}

/* Runs git config with args on the config being written; 0, or 1 once
 * said. ok_status: an exit status that is no failure (5: unset what was
 * not set). */
static int config_edit(const char *git, int keep_fd, char *const *args, int ok_status, const char *what)
{
	_cleanup_free_ char *out = NULL, *err = NULL;
	size_t n = 0;
	int status;
	int r = git_run(git, "/", NULL, keep_fd, args, CONFIG_MAX, &out, &n, &err, &status);
	if (r < 0) {
		log_error("cannot run git config to %s: %s", what, strerror(-r));
		return 1;
	}
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != ok_status)) {
		err[strcspn(err, "\n")] = '\0';
		log_error("cannot %s: git config says: %s", what, err);
		return 1;
	}
	return 0;
}

/* NUL-separated values, each quoted, joined by ", " for a line; "(none)"
 * for none. */
static char *values_text(const char *v, size_t n)
{
	if (!n)
		return xstrdup("(none)");
	struct text t = { 0 };
	for (size_t off = 0; off < n;) {
		size_t len = strnlen(v + off, n - off);
		text_adds(&t, t.n ? ", '" : "'");
		text_add(&t, v + off, len);
		text_addc(&t, '\'');
		off += len + 1;
	}
	return text_take(&t);
}

/* The settings in keys, as stored (the config as the run left it), into
 * the config at name in dfd through a copy of it (tmp), which then takes
 * its place. 0, or 1 once said. */
static int merge_settings(const char *git, const char *stored, int dfd, const char *name, const char *tmp,
			  const char *shown, char *const *keys)
{
	_cleanup_free_ char *tmp_path = xstrcat3("/proc/self/fd/3/", tmp, "");
	for (size_t i = 0; keys[i]; i++) {
		const char *key = keys[i];
		if (!key_plain(key)) {
			log_error("cannot put back '%s' into '%s': not a setting's name", key, shown);
			return 1;
		}
		_cleanup_free_ char *want = NULL, *have = NULL;
		size_t nwant = 0, nhave = 0;
		int r = config_values(git, stored, -1, key, &want, &nwant);
		if (r == 0)
			r = config_values(git, tmp_path, dfd, key, &have, &nhave);
		if (r < 0)
			log_error("cannot run git config to read '%s': %s", key, strerror(-r));
		if (r != 0)
			return 1;
		if (nwant == nhave && memcmp(want, have, nwant) == 0) {
			log_note("'%s' in '%s' is as the run left it already", key, shown);
			continue;
		}
		/* The run's values, and only those, in their order: what the
		 * run had made of the setting (none where it removed it). */
		_cleanup_free_ char *what = xstrcat3("put back '", key, "'");
		char *unset[] = { "config", "--file", tmp_path, "--unset-all", (char *)key, NULL };
		if (config_edit(git, dfd, unset, 5, what))
			return 1;
		for (size_t off = 0; off < nwant;) {
			char *value = want + off;
			off += strnlen(value, nwant - off) + 1;
			char *add[] = { "config", "--file", tmp_path, "--add", (char *)key, value, NULL };
			if (config_edit(git, dfd, add, -1, what))
				return 1;
		}
		_cleanup_free_ char *was = values_text(have, nhave), *now = values_text(want, nwant);
		log_note("put back into '%s': %s = %s (was: %s)", shown, key, now, was);
	}
	if (renameat(dfd, tmp, dfd, name) < 0) {
		log_error("cannot put the merged config in place of '%s': %m", shown);
		return 1;
	}
	return 0;
}

/* A copy of the config at name in dfd, as tmp beside it, with its mode. */
static int copy_config(int dfd, const char *name, const char *tmp)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int e = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (e < 0) {
		close(fd);
		return e;
	}
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_small_fd(fd, CONFIG_MAX, &text, &len);
	if (r < 0)
		return r;
	_cleanup_close_ int out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777);
	if (out < 0)
		return -errno;
	r = write_all(out, text, len);
	if (r == 0 && fchmod(out, st.st_mode & 07777) < 0)
		r = -errno;
	return r;
}

/* The settings the guard dropped from a config, put back into the config
 * that is at its path now, with git config's own semantics, outside any
 * jail; under git's lock (config.lock), on a copy that takes the
 * config's place at once. The item goes once they are in. */
static int put_back(const char *state_dir, const struct guard_quarantined *it)
{
	_cleanup_free_ char *full = path_join(it->workspace, it->path);
	_cleanup_free_ char *shown = str_visible(full);
	bool busy = false;
	int r = guard_workspace_busy(state_dir, it->workspace, &busy);
	if (r < 0 || busy) {
		if (busy) {
			log_error("cannot put back the settings dropped from '%s': a run is under way in '%s'", full,
				  it->workspace);
			log_hint("its end would drop them again; put them back once it is over");
		} else {
			log_error("cannot tell whether a run is under way in '%s': %s", it->workspace, strerror(-r));
		}
		return EXIT_STOCKADE;
	}
	_cleanup_strv_ char **keys = guard_quarantined_settings(it);
	const char *git = git_find();
	if (!git) {
		log_error("cannot put back the settings dropped from '%s': git is not in /usr/bin or /bin", full);
		log_hint("stockade quarantine restore %s --as PATH puts the whole config as the run left it at PATH", it->id);
		return EXIT_STOCKADE;
	}
	const char *name;
	_cleanup_free_ char *dir = path_parent(full, &name);
	_cleanup_close_ int dfd = open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0, 0);
	if (dfd < 0) {
		log_error("cannot open '%s' (never through a symlink): %s", dir, strerror(-dfd));
		return EXIT_STOCKADE;
	}
	_cleanup_free_ char *lock = xstrcat3(name, ".lock", "");
	char num[21];
	_cleanup_free_ char *tmp = xstrcat3(name, ".stockade-", fmt_u64(num, (uint64_t)getpid()));
	int lfd = openat(dfd, lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0) {
		log_error("cannot lock '%s' (%s.lock): %m", full, name);
		if (errno == EEXIST)
			log_hint("a git is writing it; or one was killed, and then remove '%s/%s' first", dir, lock);
		return EXIT_STOCKADE;
	}
	close(lfd);
	int status = EXIT_STOCKADE;
	r = copy_config(dfd, name, tmp);
	if (r < 0)
		log_error("cannot copy '%s' to merge into it: %s", full, strerror(-r));
	else if (merge_settings(git, it->stored, dfd, name, tmp, shown, keys) == 0)
		status = 0;
	(void)unlinkat(dfd, tmp, 0);
	(void)unlinkat(dfd, lock, 0);
	if (status != 0) {
		log_hint("'%s' is as it was; stockade quarantine restore %s --as PATH puts the whole config as the "
			 "run left it at PATH",
			 full, it->id);
		return status;
	}
	r = guard_quarantine_settled(state_dir, it->id);
	if (r < 0)
		log_warn("the settings are back in '%s', but the item %s stays in the quarantine: %s", full, it->id,
			 strerror(-r));
	else
		log_note("put back the settings dropped from '%s' (%s); the rest of it stays as it is", full, it->id);
	return 0;
}

/* Whether the item is a config whose settings were dropped, and a config
 * is at its path now: those settings go back into it. */
static bool merges(const struct guard_quarantined *it)
{
	if (!it->why || !streq(it->why, guard_change_kind_name(GUARD_VETTED)) || str_empty(it->detail))
		return false;
	_cleanup_free_ char *full = path_join(it->workspace, it->path);
	struct stat st;
	return lstat(full, &st) == 0 && S_ISREG(st.st_mode);
}

/* PATH as given, absolute, its folder canonical (where it lies); NULL
 * when its folder cannot be resolved. */
static char *as_path(const char *as)
{
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	_cleanup_free_ char *abs = as[0] == '/' || !cwd ? path_normalize(as) : path_join(cwd, as);
	_cleanup_free_ char *norm = path_normalize(abs);
	const char *base;
	_cleanup_free_ char *parent = path_parent(norm, &base);
	_cleanup_free_ char *canon = NULL;
	if (!parent || str_empty(base) || path_canonical(parent, &canon) < 0)
		return NULL;
	return path_join(canon, base);
}

static int restore(const char *state_dir, const char *id, const char *as)
{
	struct guard_quarantined it = { 0 };
	struct guard_failure f = { 0 };
	int r;
	_cleanup_free_ char *dst = NULL;
	if (as) {
		if (str_empty(as) || str_has_control(as) || !(dst = as_path(as))) {
			log_error("cannot restore '%s' as '%s': its folder does not exist", id, as);
			return EXIT_STOCKADE;
		}
		r = guard_quarantine_restore_as(state_dir, id, dst, &it, &f);
	} else {
		r = guard_quarantine_get(state_dir, id, &it);
		if (r == 0 && merges(&it)) {
			int st = put_back(state_dir, &it);
			guard_quarantined_done(&it);
			return st;
		}
		guard_quarantined_done(&it);
		r = guard_quarantine_restore(state_dir, id, &it, &f);
	}
	if (r == 0) {
		_cleanup_free_ char *path = dst ? xstrdup(dst) : path_join(it.workspace, it.path);
		log_note("put back '%s' (%s) from the quarantine", path, id);
	} else if (r == -ESRCH || r == -EINVAL) {
		log_error("cannot restore '%s': no such item in the quarantine '%s/quarantine'", id, state_dir);
		log_hint("stockade quarantine lists the items");
	} else if (r == -EEXIST) {
		log_error("cannot restore '%s': '%s' is there now", id, f.path);
		log_hint("nothing is replaced: move it away first, or stockade quarantine restore %s --as PATH puts the "
			 "item at PATH",
			 id);
	} else if (r == -EBUSY) {
		log_error("cannot restore '%s': a run is under way in '%s'", id, f.path);
		log_hint("its end would set it aside again; restore once it is over");
	} else {
		log_error("cannot restore '%s' to '%s': %s", id, f.path ? f.path : "?", strerror(-r));
	}
	guard_failure_free(&f);
	guard_quarantined_done(&it);
	return r == 0 ? 0 : EXIT_STOCKADE;
}

int quarantine_verb(const char *state_dir, char *const *args, const char *as)
{
	if (args[0] && streq(args[0], "restore"))
		return restore(state_dir, args[1], as);
	return list(state_dir);
}
