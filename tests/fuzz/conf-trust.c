/* libFuzzer: the trust check. The bytes are an untrusted workspace file:
 * its [sandbox] built into a policy over a small real tree, where every
 * key it widens must be named and none applied (the network, mode and
 * backend stay the defaults' when anything widened; no read or write rule
 * of the file gives more than the layers before it); and the same bytes
 * as a trust record, which must never trust a file it does not name. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "conf/conf.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"

static char *base, *ws, *state;
static char **env;

static void setup(void)
{
	char tmpl[] = "/tmp/stockade-fuzz-XXXXXX";
	if (!mkdtemp(tmpl))
		__builtin_trap();
	base = xstrdup(tmpl);
	ws = path_join(base, "ws");
	state = path_join(base, "state");
	_cleanup_free_ char *home = path_join(base, "home");
	_cleanup_free_ char *sub = path_join(ws, "sub");
	_cleanup_free_ char *out = path_join(base, "out");
	mkdir(ws, 0700);
	mkdir(home, 0700);
	mkdir(sub, 0700);
	mkdir(out, 0700);
	env = strv_new();
	strv_push(&env, xstrcat3("HOME=", home, ""));
	strv_add(&env, "PATH=/usr/bin:/bin");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base)
		setup();
	_cleanup_free_ char *path = path_join(ws, "stockade.ini");
	struct conf_file f;
	struct conf_error e;
	if (conf_parse(path, (const char *)data, size, &f, &e) == 0) {
		f.trusted = false;
		const struct conf_section *s = conf_find_section(&f, CONF_SANDBOX, NULL);
		if (s) {
			struct layer ls[2];
			conf_section_layer(&f, s, &ls[0]);
			ls[1] = (struct layer){ .workspace = xstrdup(ws) };
			struct policy p;
			struct policy_failure pf;
			if (policy_build(ls, 2, NULL, env, NULL, &p, &pf) == 0) {
				/* a widened setting leaves every setting of the file unapplied */
				bool setting = false;
				for (size_t i = 0; i < p.n_widenings; i++)
					setting = setting || !streq(p.widenings[i].source.key, "read") &&
								     !streq(p.widenings[i].source.key, "write");
				if (setting && (p.net != NET_LOOPBACK || p.mode != MODE_AUTO || p.backend != BACKEND_AUTO ||
						p.home))
					__builtin_trap();
				for (size_t i = 0; i < p.n_rules; i++)
					if (p.rules[i].source.kind == SOURCE_FILE && p.rules[i].access == ACCESS_WRITE &&
					    !path_is_beneath(p.rules[i].path, ws))
						__builtin_trap();
				for (size_t i = 0; i < p.n_widenings; i++)
					if (p.widenings[i].source.kind != SOURCE_FILE || !p.widenings[i].source.line)
						__builtin_trap();
			}
			policy_failure_free(&pf);
			policy_free(&p);
			layer_free(&ls[0]);
			layer_free(&ls[1]);
		}
		conf_file_free(&f);
	} else {
		conf_error_free(&e);
	}

	/* The bytes as every record in the state directory. */
	_cleanup_free_ char *dir = path_join(state, "trust");
	mkdir(state, 0700);
	mkdir(dir, 0700);
	struct conf_file probe = { .path = xstrdup("/fuzz/named.ini") };
	memset(probe.hash, 'a', 64);	/* made: conf_file_hash leaves it */
	char name[65];
	memset(name, '0', 64);
	name[64] = '\0';
	_cleanup_free_ char *rec = path_join(dir, name);
	int fd = open(rec, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)write_all(fd, data, size);
		close(fd);
	}
	/* a record under a name that is not its path's hash trusts nothing */
	if (conf_trust_check(state, &probe))
		__builtin_trap();
	struct conf_trusted *v;
	size_t n;
	if (conf_trust_list(state, &v, &n) == 0) {
		if (n)
			__builtin_trap();
		conf_trusted_free(v, n);
	}
	free(probe.path);
	return 0;
}
