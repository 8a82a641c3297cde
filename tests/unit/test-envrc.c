/* envrc: what a direnv .envrc names, read as bash splits it: each
 * command of direnv's stdlib that names a file or a directory, the
 * shell's quoting, escapes, comments, separators, compound commands and
 * here-documents, $PWD, ~, PATH-like assignments, and the words only the
 * shell could work out, which come back unresolved. */
#include "handoff/envrc.h"

#include "lib/util.h"
#include "tests/tap.h"

#define T(s) s, sizeof(s) - 1

/* "kind path[ (unresolved)][ (home)] @line", one a line. */
static char *render(const struct envrc_refs *r)
{
	char *out = xstrdup("");
	for (size_t i = 0; i < r->n; i++) {
		const struct envrc_ref *f = &r->v[i];
		char *next = xasprintf("%s%s %s%s%s @%u\n", out, envrc_ref_kind_name(f->kind), f->path,
				       f->resolved ? "" : " (unresolved)", f->home ? " (home)" : "", f->line);
		free(out);
		out = next;
	}
	return out;
}

static const struct {
	const char *what;
	const char *text;
	const char *want;
} cases[] = {
	/* each command */
	{ "source_env", "source_env ../common\n", "source ../common @1\n" },
	{ "source_env_if_exists", "source_env_if_exists .envrc.private\n", "source .envrc.private @1\n" },
	{ "source and .", "source ./x.sh\n. ./y.sh arg\n", "source ./x.sh @1\nsource ./y.sh @2\n" },
	{ "source with no file", "source\n.\n", "" },
	{ "dotenv, with and without a file", "dotenv\ndotenv .env.local\ndotenv_if_exists\ndotenv_if_exists x\ndotenv \"\"\n",
	  "dotenv .env @1\ndotenv .env.local @2\ndotenv .env @3\ndotenv x @4\ndotenv .env @5\n" },
	{ "PATH_add, every directory", "PATH_add bin scripts\n", "path bin @1\npath scripts @1\n" },
	{ "path_add VAR DIR...", "path_add PYTHONPATH lib src\npath_add ONLYVAR\n", "path lib @1\npath src @1\n" },
	{ "load_prefix and MANPATH_add", "load_prefix vendor/local\nMANPATH_add share/man\n",
	  "path vendor/local @1\npath share/man @2\n" },
	{ "source_up, source_up_if_exists", "source_up\nsource_up_if_exists .envrc.shared\n",
	  "parent .envrc @1\nparent .envrc.shared @2\n" },
	{ "use nix", "use nix\n", "nix shell.nix @1\nnix default.nix @1\n" },
	{ "use nix FILE, use nix -p", "use nix custom.nix\nuse_nix -p hello\n",
	  "nix shell.nix @1\nnix default.nix @1\nnix custom.nix @1\nnix shell.nix @2\nnix default.nix @2\n" },
	{ "use flake", "use flake\nuse flake .#dev\nuse_flake --impure\n",
	  "nix flake.nix @1\nnix flake.lock @1\nnix flake.nix @2\nnix flake.lock @2\nnix flake.nix @3\nnix flake.lock @3\n" },
	{ "use flake of a local directory", "use flake ./sub#x\nuse flake path:nix/dev\n",
	  "nix ./sub/flake.nix @1\nnix ./sub/flake.lock @1\nnix nix/dev/flake.nix @2\nnix nix/dev/flake.lock @2\n" },
	{ "use flake from elsewhere names no file", "use flake nixpkgs#hello\nuse flake github:o/r\n", "" },
	{ "layout", "layout node\nlayout php\nlayout python3\nlayout go\nlayout unknown\n",
	  "path node_modules/.bin @1\npath vendor/bin @2\npath .direnv @3\npath .direnv @4\n" },
	{ "use vim", "use vim\nuse vim .vimrc.dev\n", "source .vimrc.local @1\nsource .vimrc.dev @2\n" },
	{ "other uses name nothing", "use node 18\nuse rbenv\n", "" },

	/* quoting */
	{ "single quotes", "source_env 'dir with space'\n", "source dir with space @1\n" },
	{ "double quotes", "source \"a b\"\n", "source a b @1\n" },
	{ "a backslash", "PATH_add a\\ b c\\$d\n", "path a b @1\npath c$d @1\n" },
	{ "escapes in double quotes", "source \"x\\\"y\\\\z\\q\"\n", "source x\"y\\z\\q @1\n" },
	{ "quotes joined", "source 'it'\"'\"'s'\n", "source it's @1\n" },
	{ "quoted globs and $ are literal", "source '*.sh' \"a?\"\nsource '$HOME/x'\n", "source *.sh @1\nsource $HOME/x @2\n" },
	{ "a line continuation", "source \\\n  x\nsource y\n", "source x @2\nsource y @3\n" },
	{ "a multi-line quote", "source 'a\nb'\nsource c\n", "source a\nb @1\nsource c @3\n" },

	/* comments and separators */
	{ "comments", "# source evil\nsource a # comment\nsource a#b\n  # x\n", "source a @2\nsource a#b @3\n" },
	{ "separators", "source a; source b && source c || source d | source e & source f\n",
	  "source a @1\nsource b @1\nsource c @1\nsource d @1\nsource e @1\nsource f @1\n" },
	{ "a comment right after ;", "source a;# source b\n", "source a @1\n" },
	{ "leading blanks", "   \t source_env x\n", "source x @1\n" },

	/* where commands are */
	{ "if/then/else", "if [ -f x ]; then\n  source_env x\nelif true; then source y\nelse\n\tsource z\nfi\n",
	  "source x @2\nsource y @3\nsource z @5\n" },
	{ "if COMMAND", "if source a; then :; fi\n", "source a @1\n" },
	{ "test &&", "[[ -f .envrc.local ]] && source_env .envrc.local\n", "source .envrc.local @1\n" },
	{ "braces, subshells, !, loops", "{ source d; }\n(source g)\n! source f\nwhile read l; do source e; done\n",
	  "source d @1\nsource g @2\nsource f @3\nsource e @4\n" },
	{ "functions", "f() { source h; }\nfunction g { source i; }\n", "source h @1\nsource i @2\n" },
	{ "case", "case $x in\n  a) source ca ;;\n  b|c) source cb;;\nesac\n", "source ca @2\nsource cb @3\n" },
	{ "for", "for f in a b; do source $f; done\n", "source $f (unresolved) @1\n" },
	{ "assignments and builtin, command first", "FOO=1 source x\nbuiltin source y\ncommand . z\n",
	  "source x @1\nsource y @2\nsource z @3\n" },
	{ "a quoted command word is still one", "\"source\" x\n\\source y\n", "source x @1\nsource y @2\n" },
	{ "a quoted reserved word is a command", "\"if\" source x\n", "" },
	{ "not where a command is", "echo source x\necho PATH_add bin\nsource_env_x y\n", "" },

	/* redirections and here-documents */
	{ "redirections", "source a > /dev/null 2>&1\nsource b 2>/dev/null\nsource </dev/null c\nsource d &>x\n",
	  "source a @1\nsource b @2\nsource c @3\nsource d @4\n" },
	{ "a digit that is an argument", "source 2 >x\n", "source 2 @1\n" },
	{ "a here-string", "source e <<< \"x\"\n", "source e @1\n" },
	{ "a here-document's body is data", "cat <<EOF\nsource evil\ndon't\nEOF\nsource good\n", "source good @5\n" },
	{ "<<- and a quoted delimiter", "cat <<-'END' >x; source same_line\n\tsource evil\n\tEND\nsource g2\n",
	  "source same_line @1\nsource g2 @4\n" },
	{ "two here-documents on a line", "cat <<A <<B\na\nA\nb\nB\nsource h3\n", "source h3 @6\n" },

	/* $PWD */
	{ "$PWD and ${PWD} first", "PATH_add $PWD/bin \"${PWD}/tools\" $PWD \"$PWD\"//x\nsource $PWD/../x\n",
	  "path bin @1\npath tools @1\npath . @1\npath x @1\nsource ../x @2\n" },
	{ "$PWD not first, or not the name", "source ${PWD}x\nsource x/$PWD\nsource $PWDX\nsource $PWD.x\n",
	  "source ${PWD}x (unresolved) @1\nsource x/$PWD (unresolved) @2\nsource $PWDX (unresolved) @3\n"
	  "source $PWD.x (unresolved) @4\n" },

	/* ~ */
	{ "~", "source ~/x\nsource \"~/x\"\nsource_env \"~/y\"\nPATH_add ~user/bin\nsource a~\n",
	  "source ~/x (home) @1\nsource ~/x @2\nsource ~/y (home) @3\npath ~user/bin (home) @4\nsource a~ @5\n" },

	/* unresolved */
	{ "$VAR", "source $HOME/x\nsource ${X}\ndotenv $F\nsource_up $N\n",
	  "source $HOME/x (unresolved) @1\nsource ${X} (unresolved) @2\ndotenv $F (unresolved) @3\nparent $N (unresolved) @4\n" },
	{ "$(...) and backticks", "source \"$(dirname x)/y\"\nsource `pwd`/z\nsource $(a \"$(b ')')\")\n",
	  "source \"$(dirname x)/y\" (unresolved) @1\nsource `pwd`/z (unresolved) @2\nsource $(a \"$(b ')')\") (unresolved) @3\n" },
	{ "globs and braces", "PATH_add bin* x? a[b] {a,b} c{d}\n",
	  "path bin* (unresolved) @1\npath x? (unresolved) @1\npath a[b] (unresolved) @1\n"
	  "path {a,b} (unresolved) @1\npath c{d} (unresolved) @1\n" },
	{ "$'...' and $\"...\"", "source $'a\\'b'\nsource $\"c\"\n", "source $'a\\'b' (unresolved) @1\nsource $\"c\" (unresolved) @2\n" },
	{ "special parameters", "source $1 $@\nsource x$?\n", "source $1 (unresolved) @1\nsource x$? (unresolved) @2\n" },
	{ "use flake $X", "use flake $X\n", "nix $X (unresolved) @1\n" },
	{ "use nix $X", "use nix $X\n", "nix shell.nix @1\nnix default.nix @1\nnix $X (unresolved) @1\n" },
	{ "a $( ) over lines keeps the line count", "x=$(\n  echo\n)\nsource a\n", "source a @4\n" },

	/* PATH-like assignments */
	{ "export PATH=...:$PATH", "export PATH=\"$PWD/node_modules/.bin:$PATH\"\n", "path node_modules/.bin @1\n" },
	{ "PATH=...", "PATH=$PWD/bin:$PATH:/opt/x\nPATH+=:${PWD}/more\n",
	  "path bin @1\npath /opt/x @1\npath . @2\npath more @2\n" },
	{ "other PATH-like variables", "export PYTHONPATH=src NODE_PATH=lib\nexport LD_PRELOAD=$PWD/x.so\nlocal GOPATH=go\n",
	  "path src @1\npath lib @1\npath x.so @2\npath go @3\n" },
	{ "an empty part is the current directory", "PATH=$PATH:\n", "path . @1\n" },
	{ "parts only the shell knows", "PATH=\"${PATH}:$HOME/bin:$(x):`y`\"\n",
	  "path \"$HOME/bin\" (unresolved) @1\npath \"$(x)\" (unresolved) @1\npath \"`y`\" (unresolved) @1\n" },
	{ "single-quoted parts", "PATH='a:b'\n", "path a @1\npath b @1\n" },
	{ "an assignment before a command", "PATH=bin:$PATH make\n", "path bin @1\n" },
	{ "other variables are not followed", "export FOO=$PWD/bin\nEDITOR=vim\nexport PATH\n", "" },

	/* odd text */
	{ "CRLF: a CR is part of the word, as in bash", "source a\r\n", "source a\r @1\n" },
	{ "empty", "", "" },
	{ "no newline at the end", "source_env x", "source x @1\n" },
};

static void test_cases(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct envrc_refs r;
		unsigned bad = 9;
		int ret = envrc_refs(cases[i].text, strlen(cases[i].text), &r, &bad);
		if (!ok(ret == 0 && bad == 0, "%s: read", cases[i].what)) {
			diag("  %d, line %u", ret, bad);
			continue;
		}
		_cleanup_free_ char *got = render(&r);
		is_str(got, cases[i].want, "%s", cases[i].what);
		envrc_refs_free(&r);
	}
}

static void test_refusals(void)
{
	static const struct {
		const char *what;
		const char *text;
		size_t n;
		unsigned line;
	} bad[] = {
		{ "a double quote left open", T("source a\nsource \"abc\n\n"), 2 },
		{ "a single quote left open", T("x\n\nsource 'abc"), 3 },
		{ "$( left open", T("x=$(foo\nbar\n"), 1 },
		{ "${ left open", T("source ${x\n"), 1 },
		{ "a backtick left open", T("source `x\n"), 1 },
		{ "$'...' left open", T("source $'x"), 1 },
		{ "a NUL byte", T("source a\nsource b\0c\n"), 2 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct envrc_refs r = { .n = 5 };
		unsigned line = 0;
		is_int(envrc_refs(bad[i].text, bad[i].n, &r, &line), -EBADMSG, "%s: -EBADMSG", bad[i].what);
		is_int(line, bad[i].line, "%s: line %u", bad[i].what, bad[i].line);
		ok(r.n == 0 && !r.v, "%s: nothing returned", bad[i].what);
	}
	struct envrc_refs r;
	ok(envrc_refs("'", 1, &r, NULL) == -EBADMSG, "the bad line may be NULL");
	ok(envrc_refs(NULL, 0, &r, NULL) == 0 && r.n == 0, "no text: no references");
	envrc_refs_free(&r);
	envrc_refs_free(NULL);
	/* a here-document left open runs to the end, as in bash */
	ok(envrc_refs("cat <<EOF\nsource x\n", 19, &r, NULL) == 0 && r.n == 0, "a here-document left open: data to the end");
	envrc_refs_free(&r);
}

int main(void)
{
	test_cases();
	test_refusals();
	return tap_done();
}
