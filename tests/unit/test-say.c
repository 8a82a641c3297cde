/* say: what a failed command's words name that the jail cannot read
 * (say_named_paths, say_unreadable_named): the words a path hides in (a
 * shell's -c script, an option's value, a list), made absolute; the line
 * that names what exists outside and no rule reads, with the fix; a
 * hidden one named with its rule and never offered; what the jail reads,
 * what does not exist, and the jail's own trees left out. On files made
 * in a mkdtemp directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "jail/say.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/steer.h"
#include "tests/tap.h"

#define WORDS(...) ((char *const[]){ "cmd", __VA_ARGS__, NULL })

static bool has(char **v, const char *s)
{
	return strv_contains(v, s);
}

/* The lines, as one text (" | " between them), or NULL for none. */
static char *one(char **lines)
{
	char *t = NULL;
	for (size_t i = 0; lines[i]; i++) {
		char *next = t ? xstrcat3(t, " | ", lines[i]) : xstrdup(lines[i]);
		free(t);
		t = next;
	}
	strv_free(lines);
	return t;
}

static void test_words(void)
{
	_cleanup_strv_ char **v = say_named_paths(
		WORDS("/a/b", "../up/x", "~/notes.txt", "-I/inc/dir", "--file=/etc/f", "PYTHONPATH=/p1:/p2",
		      "cat '/q x/y' && ls ./rel/z; echo no", "https://example.com/a/b", "plain", "~user/x"),
		"/w/sub", "/home/u");
	ok(has(v, "/a/b"), "an absolute word");
	ok(has(v, "/w/up/x"), "a relative word, from the command's directory, normalised");
	ok(has(v, "/home/u/notes.txt"), "~/ is your home");
	ok(has(v, "/inc/dir"), "-I/inc/dir: the path after the option's letters");
	ok(has(v, "/etc/f"), "--file=/etc/f: the option's value");
	ok(has(v, "/p1") && has(v, "/p2"), "a list's paths");
	ok(has(v, "/w/sub/rel/z"), "a path in a shell's script");
	ok(has(v, "/q"), "a quoted path in a script is split at its space (the whole word is taken too)");
	ok(!has(v, "/w/sub/plain"), "a word with no slash names no path");
	ok(!has(v, "https://example.com/a/b") && !has(v, "/w/sub/https:/example.com/a/b"), "a URL is no path");
	ok(!has(v, "/w/sub/~user/x"), "~user/ is not resolved");
	_cleanup_strv_ char **none = say_named_paths(WORDS("/only-the-program-is-not-a-word"), "/w", "/h");
	_cleanup_strv_ char **first = say_named_paths((char *const[]){ "/bin/prog", NULL }, "/w", "/h");
	ok(strv_length(first) == 0, "the program itself (argv[0]) is not a word");
	ok(strv_length(none) == 1, "one word, one path");
}

static void test_line(void)
{
	char tmpl[] = "/tmp/stockade-test-say-XXXXXX";
	if (!ok(mkdtemp(tmpl) != NULL, "a temporary directory"))
		return;
	_cleanup_free_ char *out = path_join(tmpl, "out.txt"), *ws = path_join(tmpl, "ws"),
			    *in = path_join(tmpl, "ws/in.txt"), *key = path_join(tmpl, "key"),
			    *readable = path_join(tmpl, "shared.txt");
	FILE *f;
	const char *files[] = { out, key, readable };
	ok(mkdir(ws, 0700) == 0, "the workspace");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if ((f = fopen(files[i], "w")))
			fclose(f);
	if ((f = fopen(in, "w")))
		fclose(f);
	struct policy p;
	policy_init(&p);
	p.user_home = xstrdup("/nonexistent-home");
	policy_add_rule(&p, ws, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("test"), "the workspace");
	policy_add_rule(&p, readable, ACCESS_READ, 0, SOURCE_DEFAULT_OF("test"), "--read");
	policy_add_rule(&p, key, ACCESS_HIDE, 0, SOURCE_DEFAULT_OF("test"), "default: credentials");
	_cleanup_free_ char *gone = path_join(tmpl, "not-there");
	p.writable = steer_trees(&p);

	_cleanup_free_ char *l1 = one(say_unreadable_named(&p, NULL, WORDS(out, in, readable, gone, "/proc/self/status", "/dev/stderr", "/dev/fd/1"), ws, NULL));
	_cleanup_free_ char *want1 = xasprintf("the command names what the jail cannot read: %s; to allow: --read %s (--write in place of --read where it changes them) | the command names a file to make in a folder out of the jail's reach: %s; to allow: --write %s", out, out, gone, tmpl);
	is_str(l1, want1, "what exists outside and no rule reads, with its --read; a file to make in a folder out of reach, with its --write; the workspace, a read, /proc and /dev/stderr (wherever it leads) not named");
	_cleanup_free_ char *l2 = one(say_unreadable_named(&p, NULL, WORDS("../out.txt"), ws, "start a session with it: stockade session start"));
	_cleanup_free_ char *want2 = xasprintf("the command names what the jail cannot read: %s; to allow: start a session with it: stockade session start --read %s (--write in place of --read where it changes them)", out, out);
	is_str(l2, want2, "a relative word, made absolute; the fix after the start given");
	_cleanup_free_ char *l3 = one(say_unreadable_named(&p, NULL, WORDS(key), ws, NULL));
	_cleanup_free_ char *want3 = xasprintf("the command names what the jail hides: %s (default: credentials); stockade why %s says why", key, key);
	is_str(l3, want3, "a hidden path is named with its rule and never offered");
	_cleanup_free_ char *l5 = one(say_unreadable_named(&p, NULL, WORDS(key, out), ws, NULL));
	_cleanup_free_ char *want5 = xasprintf("the command names what the jail cannot read: %s; to allow: --read %s (--write in place of --read where it changes them) | the command names what the jail hides: %s (default: credentials); stockade why %s says why", out, out, key, key);
	is_str(l5, want5, "both: the fix for what can be read, the hidden one after it");
	_cleanup_free_ char *l4 = one(say_unreadable_named(&p, NULL, WORDS(in, readable, "/no-such-dir/x", "not-there-either/x"), ws, NULL));
	ok(!l4, "nothing the jail cannot read, no folder to make in: no line");
	_cleanup_free_ char *newin = path_join(ws, "new.txt"), *l14 = one(say_unreadable_named(&p, NULL, WORDS(newin, "sub/"), ws, NULL));
	ok(!l14, "a file to make in the workspace (the jail writes it) is not named");
	/* a link in the workspace (a run may have made it) to what the jail
	 * cannot read: not turned into a hint to grant what it points at */
	_cleanup_free_ char *link = path_join(ws, "data");
	ok(symlink(out, link) == 0, "a link in the workspace to the file outside");
	_cleanup_free_ char *l9 = one(say_unreadable_named(&p, NULL, WORDS(link, "data/"), ws, NULL));
	ok(!l9, "a path through a link in a tree the run writes is not named");
	unlink(link);
	/* the program: found on PATH, where it is outside */
	_cleanup_free_ char *bin = path_join(tmpl, "tool");
	if ((f = fopen(bin, "w")))
		fclose(f);
	chmod(bin, 0755);
	_cleanup_free_ char *l10 = say_unreadable_program(&p, "tool", tmpl, ws, "start a session with it: stockade session start");
	_cleanup_free_ char *want10 = xasprintf("the program %s lies outside what the jail can read; to allow: start a session with it: stockade session start --read %s", bin, bin);
	is_str(l10, want10, "a program found on PATH outside the jail's reach, with the start that gives it");
	_cleanup_free_ char *l11 = say_unreadable_program(&p, "no-such-tool", tmpl, ws, NULL);
	ok(!l11, "a program not found: no line");
	/* a session's exec of a script in the workspace that cannot run:
	 * what is wrong with the file */
	_cleanup_free_ char *script = path_join(ws, "s.sh");
	if ((f = fopen(script, "w"))) {
		fputs("#!/no/such/interp\n", f);
		fclose(f);
	}
	chmod(script, 0644);
	_cleanup_free_ char *l12 = say_unreadable_program(&p, "./s.sh", tmpl, ws, NULL);
	is_str(l12, "it is not executable: chmod +x ./s.sh, or give it to its interpreter (/no/such/interp ./s.sh)",
	       "a script that is not executable: chmod +x, or its interpreter");
	chmod(script, 0755);
	_cleanup_free_ char *l13 = say_unreadable_program(&p, "./s.sh", tmpl, ws, NULL);
	is_str(l13, "its first line names the interpreter '/no/such/interp', which does not exist",
	       "a script whose interpreter is not there: named");
	/* one that env finds, and one with no first line: the program
	 * that runs it, never env itself */
	if ((f = fopen(script, "w"))) {
		fputs("#!/usr/bin/env -S PYTHONDONTWRITEBYTECODE=1 python3 -u\n", f);
		fclose(f);
	}
	chmod(script, 0644);
	_cleanup_free_ char *l16 = say_unreadable_program(&p, "./s.sh", tmpl, ws, NULL);
	is_str(l16, "it is not executable: chmod +x ./s.sh, or give it to its interpreter (python3 ./s.sh)",
	       "a script that is not executable, through env: the program env finds");
	unlink(script);
	_cleanup_free_ char *py = path_join(ws, "t.py");
	if ((f = fopen(py, "w"))) {
		fputs("print(1)\n", f);
		fclose(f);
	}
	chmod(py, 0644);
	_cleanup_free_ char *l17 = say_unreadable_program(&p, "./t.py", tmpl, ws, NULL);
	is_str(l17, "it is not executable: chmod +x ./t.py, or give it to its interpreter (python3 ./t.py)",
	       "a .py with no first line: python3, not sh");
	unlink(py);
	unlink(bin);
	/* what the report names refused already has its own line and fix */
	struct report rep;
	report_init(&rep);
	report_denial(&rep, "open", out, "EACCES");
	_cleanup_free_ char *l7 = one(say_unreadable_named(&p, &rep, WORDS(out), ws, NULL));
	ok(!l7, "a path the report names refused already (with its own fix) is not named again");
	report_free(&rep);
	/* a socket is --connect's, not --read's */
	_cleanup_free_ char *sock = path_join(tmpl, "s.sock");
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "a socket file");
	_cleanup_free_ char *l8 = one(say_unreadable_named(&p, NULL, WORDS(sock), ws, NULL));
	ok(!l8, "a socket file is not offered a --read");
	close(fd);
	unlink(sock);
	/* a file of mode 0: a user cannot read it outside either, and no
	 * option would help; root can, and is told the fix */
	chmod(out, 0);
	_cleanup_free_ char *l6 = one(say_unreadable_named(&p, NULL, WORDS(out), ws, NULL));
	if (geteuid() != 0)
		ok(!l6, "what you cannot read outside either: no line (no option would help)");
	else
		ok(l6 && strstr(l6, "--read"), "as root, a file of mode 0 is read outside: its fix is told");
	policy_free(&p);
	unlink(out);
	unlink(in);
	unlink(key);
	unlink(readable);
	rmdir(ws);
	rmdir(tmpl);
}

int main(void)
{
	test_words();
	test_line();
	return tap_done();
}
