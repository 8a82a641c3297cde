/* Network mode allow: the host names a run may reach, each with its port
 * (443 and 80 unless one is given), and the built-in lists of the common
 * registries. Pure: parsing, matching and printing; what reaches them is
 * the relay's (forward/), what the namespace jail and the supervisor hand
 * it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* The longest name DNS carries, as text without its last dot. */
#define ALLOW_NAME_MAX 253

struct allow_entry {
	char *name;		/* lowercase, no last dot; a wildcard's: what follows "*." */
	bool wildcard;		/* "*.NAME": every name beneath NAME, not NAME itself */
	unsigned short port;	/* 0: 443 and 80 */
	const char *list;	/* "@npm" when a built-in list gave it (static), else NULL */
	struct source source;
};

/* A built-in list: its name as written (@npm), what it holds, and where
 * the registry documents its hosts. */
struct allow_list {
	const char *name;
	const char *const *entries;
	const char *doc;
};
extern const struct allow_list allow_lists[];
extern const size_t allow_n_lists;

/* One item as written ("registry.npmjs.org", "*.pythonhosted.org",
 * "github.com:22", "@npm") into entries, added at the end of *v (a
 * list's every entry). Pure: 0, or -EINVAL with what is wrong in *ret_why
 * (static text). */
int allow_parse(const char *item, struct source source, struct allow_entry **v, size_t *n, const char **ret_why);
void allow_entries_free(struct allow_entry *v, size_t n);
/* A copy of an entry (its strings its own). */
struct allow_entry allow_entry_copy(const struct allow_entry *e);
/* "registry.npmjs.org", "*.pythonhosted.org", "github.com:22". */
char *allow_entry_text(const struct allow_entry *e);
bool allow_entry_same(const struct allow_entry *a, const struct allow_entry *b);

/* A name as the allow list compares it: lowercase, without a last dot,
 * letters, digits, '-' and '_' in labels of 1 to 63 bytes, none of which
 * begins or ends with '-', 253 at most in all. Into out (ALLOW_NAME_MAX + 1 bytes): 0, or -EINVAL for what is
 * no host name (an address, a byte DNS would escape). */
int allow_name_normalize(const char *name, char out[static ALLOW_NAME_MAX + 1]);

/* The entry that lets a connection to name (normalized) on port through,
 * or NULL; port 0: on any port (a lookup). */
const struct allow_entry *allow_match(const struct allow_entry *v, size_t n, const char *name, unsigned short port);
/* Does an entry let anything through on port? */
bool allow_has_port(const struct allow_entry *v, size_t n, unsigned short port);
/* The ports the entries name, each once, in order (443 and 80 for an
 * entry without one): how many, at most max written. */
size_t allow_ports(const struct allow_entry *v, size_t n, unsigned short *out, size_t max);
/* How to allow name on port, as the fix of a refusal says it:
 * "--allow example.com" (the default ports), "--allow example.com:22";
 * "none: ..." with why where --allow refuses it (a name server's port,
 * a name it does not take). */
char *allow_fix(const char *name, unsigned short port);
/* The same, and as stockade.ini's allow key says it. */
char *allow_fix_ini(const char *name, unsigned short port);
/* The whole fix of a refused name, narrowest first: that one name
 * (allow_fix), by option and in stockade.ini, else the whole network. Port
 * 0 for a lookup: the default ports. */
char *allow_name_fix(const char *name, unsigned short port);
/* The fix where no one name can be allowed. */
#define ALLOW_NET_FIX "--net on, or in stockade.ini: network = on"
