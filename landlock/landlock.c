#include "landlock/landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "lib/fd.h"
#include "lib/util.h"
#include "landlock/internal.h"

/* The one table: each right, the ABI that brought it, and the least effect
 * that grants it (0: never granted, only handled). */
static const struct right {
	uint64_t bit;
	const char *name;
	int abi;
	enum effect grant;
	bool file;		/* applies to a file, not only to a directory */
} rights[] = {
	{ LANDLOCK_ACCESS_FS_EXECUTE, "execute", 1, EFFECT_READ, true },
	{ LANDLOCK_ACCESS_FS_WRITE_FILE, "write_file", 1, EFFECT_WRITE, true },
	{ LANDLOCK_ACCESS_FS_READ_FILE, "read_file", 1, EFFECT_READ, true },
	{ LANDLOCK_ACCESS_FS_READ_DIR, "read_dir", 1, EFFECT_READ, false },
	{ LANDLOCK_ACCESS_FS_REMOVE_DIR, "remove_dir", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_REMOVE_FILE, "remove_file", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_CHAR, "make_char", 1, EFFECT_NONE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_DIR, "make_dir", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_REG, "make_reg", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_SOCK, "make_sock", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_FIFO, "make_fifo", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_BLOCK, "make_block", 1, EFFECT_NONE, false },
	{ LANDLOCK_ACCESS_FS_MAKE_SYM, "make_sym", 1, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_REFER, "refer", 2, EFFECT_WRITE, false },
	{ LANDLOCK_ACCESS_FS_TRUNCATE, "truncate", 3, EFFECT_WRITE, true },
	{ LANDLOCK_ACCESS_FS_IOCTL_DEV, "ioctl_dev", 5, EFFECT_READ, true },
};

int landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		return (errno == ENOSYS || errno == EOPNOTSUPP) ? 0 : -errno;
	return (int)abi;
}

uint64_t landlock_rights(enum effect e, bool dir, int abi)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++) {
		const struct right *r = &rights[i];
		if (r->abi > abi || r->grant == EFFECT_NONE || e < r->grant)
			continue;
		if (dir || r->file)
			mask |= r->bit;
	}
	return mask;
}

uint64_t landlock_handled_fs(int abi)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++)
		if (rights[i].abi <= abi)
			mask |= rights[i].bit;
	return mask;
}

static uint64_t file_rights_mask(void)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++)
		if (rights[i].file)
			mask |= rights[i].bit;
	return mask;
}

void landlock_rights_print(FILE *f, uint64_t mask)
{
	bool first = true;
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++) {
		if (!(mask & rights[i].bit))
			continue;
		fprintf(f, "%s%s", first ? "" : ",", rights[i].name);
		first = false;
	}
	if (first)
		fputs("-", f);
}

/* The rules the plan renders, sorted by path so that the rules beneath a
 * path are one contiguous range. */
struct node {
	const char *path;
	enum effect effect;
	const char *origin;
	mode_t mode;
};

struct planner {
	int abi;
	bool no_carve;
	size_t cap_rules;
	struct node *nodes;
	size_t n_nodes;
	struct landlock_plan *plan;
};

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct node *)a)->path, ((const struct node *)b)->path);
}

static size_t lower_bound(const struct planner *pl, const char *key)
{
	size_t lo = 0, hi = pl->n_nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(pl->nodes[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct node *lookup(const struct planner *pl, const char *path)
{
	size_t i = lower_bound(pl, path);
	return i < pl->n_nodes && streq(pl->nodes[i].path, path) ? &pl->nodes[i] : NULL;
}

/* Every path beneath P, not P itself, sorts between P "/" and P "0" ('0'
 * follows '/'). */
static void beneath_range(const struct planner *pl, const char *path, size_t *lo, size_t *hi)
{
	if (streq(path, "/")) {
		*lo = pl->n_nodes && streq(pl->nodes[0].path, "/") ? 1 : 0;
		*hi = pl->n_nodes;
		return;
	}
	_cleanup_free_ char *from = xstrcat3(path, "/", "");
	_cleanup_free_ char *to = xstrcat3(path, "0", "");
	*lo = lower_bound(pl, from);
	*hi = lower_bound(pl, to);
}

/* True when some node other than D lies between P and D. */
static bool has_node_between(const struct planner *pl, const char *p, const char *d)
{
	_cleanup_free_ char *a = xstrdup(d);
	size_t plen = strlen(p);
	for (;;) {
		char *slash = strrchr(a, '/');
		if (!slash || (size_t)(slash - a) <= plen)
			return false;
		*slash = '\0';
		if (lookup(pl, a))
			return true;
	}
}

/* Takes ownership of path. */
static void grant_owned(struct planner *pl, char *path, uint64_t access, bool dir, bool carve,
			const char *origin)
{
	if (!access) {
		free(path);
		return;
	}
	struct landlock_plan *plan = pl->plan;
	if (plan->n_rules == pl->cap_rules) {
		pl->cap_rules = pl->cap_rules ? pl->cap_rules * 2 : 64;
		plan->rules = xreallocarray(plan->rules, pl->cap_rules, sizeof(*plan->rules));
	}
	plan->rules[plan->n_rules++] = (struct landlock_rule){
		.path = path,
		.access = access,
		.dir = dir,
		.carve = carve,
		.origin = origin,
	};
}

static void grant(struct planner *pl, const char *path, uint64_t access, bool dir, bool carve,
		  const char *origin)
{
	if (access)
		grant_owned(pl, xstrdup(path), access, dir, carve, origin);
}

static bool is_procfs_transient(const char *name)
{
	if (streq(name, "self") || streq(name, "thread-self"))
		return true;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

static int visit(struct planner *pl, const char *path, enum effect inherited,
		 const char *inherited_origin, uint64_t covered);

struct lead {
	const char *name;	/* not NUL-terminated at len */
	size_t len;
};

static int lead_cmp(const void *a, const void *b)
{
	const struct lead *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Grants everything in a directory but the way to the paths beneath that
 * get less: each other entry becomes a sibling grant, the directory keeps
 * its listing right. Symlinks are never followed; procfs's per-process
 * entries are left out. */
static int enumerate(struct planner *pl, const char *path, enum effect e, const char *origin,
		     uint64_t covered)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct statfs sfs;
	bool procfs = fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;

	uint64_t listing = landlock_rights(e, true, pl->abi) & LANDLOCK_ACCESS_FS_READ_DIR;
	grant(pl, path, listing & ~covered, true, true, origin);
	covered |= listing;
	pl->plan->n_enumerated++;
	if (e == EFFECT_WRITE && !strv_contains(pl->plan->carved, path))
		strv_add(&pl->plan->carved, path);

	/* The names in this directory that lead to a deeper rule: the first
	 * component below it of every node beneath it, sorted. One binary
	 * search per entry then, and no allocation but for the grants. */
	size_t lo, hi;
	beneath_range(pl, path, &lo, &hi);
	size_t plen = streq(path, "/") ? 0 : strlen(path);
	struct lead *leads = xcalloc(hi - lo + 1, sizeof(*leads));
	size_t n_leads = 0;
	for (size_t i = lo; i < hi; i++) {
		const char *rest = pl->nodes[i].path + plen + 1;
		leads[n_leads++] = (struct lead){ .name = rest, .len = strcspn(rest, "/") };
	}
	qsort(leads, n_leads, sizeof(*leads), lead_cmp);

	DIR *d = fdopendir(fd);
	if (!d) {
		free(leads);
		return -errno;
	}
	fd = -1;
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (streq(name, ".") || streq(name, ".."))
			continue;
		if (procfs && is_procfs_transient(name))
			continue;
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type == DT_LNK)
			continue;

		struct lead key = { .name = name, .len = strlen(name) };
		bool on_the_way = n_leads && bsearch(&key, leads, n_leads, sizeof(*leads), lead_cmp);
		size_t nlen = key.len;
		char *child = xmalloc(plen + 1 + nlen + 1);
		memcpy(child, path, plen);
		child[plen] = '/';
		memcpy(child + plen + 1, name, nlen + 1);
		if (on_the_way) {
			r = visit(pl, child, e, origin, covered);
			free(child);
			if (r < 0)
				break;
			continue;
		}
		bool dir = type == DT_DIR;
		grant_owned(pl, child, landlock_rights(e, dir, pl->abi) & ~covered, dir, true, origin);
	}
	closedir(d);
	free(leads);
	return r;
}

static int visit(struct planner *pl, const char *path, enum effect inherited,
		 const char *inherited_origin, uint64_t covered)
{
	const struct node *self = lookup(pl, path);
	enum effect e = self ? self->effect : inherited;
	const char *origin = self ? self->origin : inherited_origin;

	struct stat st;
	if (self)
		st.st_mode = self->mode;
	else if (lstat(path, &st) < 0)
		return (errno == ENOENT || errno == ENOTDIR) ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		return 0;
	bool dir = S_ISDIR(st.st_mode);
	uint64_t want = landlock_rights(e, dir, pl->abi);

	size_t lo, hi;
	beneath_range(pl, path, &lo, &hi);
	bool weaker = false;
	for (size_t i = lo; i < hi && !weaker; i++)
		weaker = pl->nodes[i].effect < e;

	if (dir && weaker && !pl->no_carve)
		return enumerate(pl, path, e, origin, covered);

	grant(pl, path, want & ~covered, dir, false, origin);
	if (!dir)
		return 0;
	covered |= want;
	for (size_t i = lo; i < hi; i++) {
		if (has_node_between(pl, path, pl->nodes[i].path))
			continue;
		int r = visit(pl, pl->nodes[i].path, e, origin, covered);
		if (r < 0)
			return r;
	}
	return 0;
}

int landlock_plan(const struct policy *p, int abi, unsigned flags, struct landlock_plan *ret)
{
	*ret = (struct landlock_plan){ .abi = abi, .flags = flags };
	if (abi <= 0)
		return -EOPNOTSUPP;
	ret->carved = strv_new();

	/* The effects are those of the rules Landlock renders: the policy's
	 * and the backend's own places; trust hand-offs are the guard's, and
	 * without carve-outs hidden and protected paths are someone else's
	 * too. */
	struct policy view = *p;
	view.rules = xcalloc(policy_n_all(p), sizeof(*view.rules));
	view.n_rules = 0;
	view.places = NULL;
	/* an index of its own, never the policy's */
	view.by_path = NULL;
	for (size_t i = 0; i < policy_n_all(p); i++) {
		const struct rule *r = policy_rule_at(p, i);
		if (r->flags & RULE_HANDOFF)
			continue;
		if ((flags & LANDLOCK_PLAN_NO_CARVE) &&
		    (r->access == ACCESS_HIDE || r->access == ACCESS_PROTECT))
			continue;
		view.rules[view.n_rules++] = *r;
	}

	struct planner pl = {
		.abi = abi,
		.no_carve = flags & LANDLOCK_PLAN_NO_CARVE,
		.nodes = xcalloc(view.n_rules, sizeof(struct node)),
		.plan = ret,
	};
	for (size_t i = 0; i < view.n_rules; i++) {
		const struct rule *r = &view.rules[i];
		struct stat st;
		/* A path that is missing or a symlink gets no rule of its
		 * own: Landlock never follows the link, and a missing hide
		 * target is skipped. A backend's own place is a directory it
		 * makes for the run, maybe after this plan. A file its
		 * maker listed is one (no second look: a cgroup view's
		 * dozens of files cost some 3 us each). */
		if (r->flags & RULE_REGULAR) {
			st.st_mode = S_IFREG | 0444;
		} else if (lstat(r->path, &st) < 0) {
			if (!(r->flags & (RULE_FRESH | RULE_CARRIED)))
				continue;
			st.st_mode = r->flags & RULE_CARRIED ? S_IFREG | 0444 : S_IFDIR | 0700;
		} else if (S_ISLNK(st.st_mode)) {
			continue;
		}
		pl.nodes[pl.n_nodes++] = (struct node){ .path = r->path, .origin = r->origin, .mode = st.st_mode };
	}
	qsort(pl.nodes, pl.n_nodes, sizeof(*pl.nodes), node_cmp);
	size_t n = 0;
	for (size_t i = 0; i < pl.n_nodes; i++)
		if (n == 0 || !streq(pl.nodes[n - 1].path, pl.nodes[i].path))
			pl.nodes[n++] = pl.nodes[i];
	pl.n_nodes = n;
	/* Every node is a rule's own path, so the rule deciding it is the
	 * strongest one there: one pass over the rules, not a search per
	 * node. Only protect needs the wider rules. */
	const struct rule **winner = xcalloc(pl.n_nodes + 1, sizeof(*winner));
	for (size_t i = 0; i < view.n_rules; i++) {
		const struct node *nd = lookup(&pl, view.rules[i].path);
		if (!nd)
			continue;
		size_t k = (size_t)(nd - pl.nodes);
		if (!winner[k] || view.rules[i].access > winner[k]->access)
			winner[k] = &view.rules[i];
	}
	for (size_t i = 0; i < pl.n_nodes; i++) {
		const struct rule *w = winner[i];
		pl.nodes[i].origin = w->origin;
		pl.nodes[i].effect = w->access == ACCESS_WRITE ? EFFECT_WRITE
				     : w->access == ACCESS_READ ? EFFECT_READ
				     : w->access == ACCESS_HIDE ? EFFECT_NONE
								: policy_effect(&view, pl.nodes[i].path);
	}
	free(winner);

	int r = 0;
	for (size_t i = 0; i < pl.n_nodes && r >= 0; i++) {
		if (has_node_between(&pl, "/", pl.nodes[i].path) || (i > 0 && streq(pl.nodes[0].path, "/")))
			continue;
		r = visit(&pl, pl.nodes[i].path, EFFECT_NONE, NULL, 0);
	}
	free(pl.nodes);
	free(view.rules);
	free(view.by_path);
	if (r < 0) {
		landlock_plan_free(ret);
		return r;
	}

	ret->handled_fs = landlock_handled_fs(abi);
	/* The namespace jail's root holds only mount points: listing it (and
	 * so every directory of the jail) reveals nothing the jail hides. */
	if (flags & LANDLOCK_PLAN_LIST_ROOT)
		grant(&pl, "/", LANDLOCK_ACCESS_FS_READ_DIR, true, false, "listing the jail's root");
	/* The namespace jail's network namespace is its network policy; the
	 * landlock backend refuses TCP to the command itself (with loopback
	 * the supervisor binds and connects on its behalf). */
	if (abi >= 4 && p->net != NET_ON && !(flags & (LANDLOCK_PLAN_NO_CARVE | LANDLOCK_PLAN_TCP_TO_NETNS)))
		ret->handled_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (abi >= 6)
		ret->scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	return 0;
}

void landlock_plan_free(struct landlock_plan *plan)
{
	for (size_t i = 0; i < plan->n_rules; i++)
		free(plan->rules[i].path);
	free(plan->rules);
	plan->rules = NULL;
	plan->n_rules = 0;
	strv_free(plan->carved);
	plan->carved = NULL;
}

bool landlock_carves_writable(const struct policy *p)
{
	for (size_t i = 0; i < policy_n_all(p); i++) {
		const struct rule *r = policy_rule_at(p, i);
		if (r->access == ACCESS_WRITE || (r->flags & RULE_HANDOFF) || streq(r->path, "/"))
			continue;
		_cleanup_free_ char *parent = xstrdup(r->path);
		char *slash = strrchr(parent, '/');
		if (slash == parent)
			slash[1] = '\0';
		else
			*slash = '\0';
		struct stat st;
		if (policy_effect(p, parent) == EFFECT_WRITE && policy_effect(p, r->path) != EFFECT_WRITE &&
		    lstat(r->path, &st) == 0 &&
		    !S_ISLNK(st.st_mode))
			return true;
	}
	return false;
}

void landlock_plan_print(FILE *f, const struct landlock_plan *plan)
{
	fprintf(f, "landlock abi %d\n", plan->abi);
	fputs("  handled fs: ", f);
	landlock_rights_print(f, plan->handled_fs);
	fprintf(f, "\n  handled net: %s\n",
		plan->handled_net ? "bind_tcp,connect_tcp (no port allowed)" : "-");
	fprintf(f, "  scoped: %s\n",
		plan->scoped ? "abstract_unix_socket,signal" : "-");
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct landlock_rule *r = &plan->rules[i];
		/* a name in an enumerated tree can hold anything */
		fputs("  ", f);
		fputs_visible(r->path, f);
		fprintf(f, "%s ", r->dir && !streq(r->path, "/") ? "/" : "");
		landlock_rights_print(f, r->access);
		fprintf(f, "  (%s", r->carve ? "carved from " : "");
		fputs_visible(r->origin ? r->origin : "?", f);
		fputs(")\n", f);
	}
}

void landlock_describe(int abi, unsigned flags, enum net_mode net, struct report *rep)
{
	char buf[160], num[21];
	const char *n = fmt_u64(num, (uint64_t)(abi > 0 ? abi : 0));
	if (flags & LANDLOCK_PLAN_NO_CARVE) {
		/* On top of the mounts, which enforce the filesystem policy
		 * whether or not Landlock is there. */
		if (abi <= 0) {
			report_gap(rep, "landlock", "not enforced here: the mounts alone enforce the filesystem policy");
			return;
		}
		stpcpy(stpcpy(stpcpy(buf, "Landlock ABI "), n), " on top: every right of that ABI handled");
		report_enforced(rep, buf);
		if (net == NET_ON && abi < 6)
			report_gap(rep, "abstract unix sockets",
				   "with the host's network, the host's abstract sockets are reachable below Landlock ABI 6");
		return;
	}
	stpcpy(stpcpy(stpcpy(buf, "filesystem: Landlock ABI "), n), ", every right of that ABI handled");
	report_enforced(rep, buf);
	if (net == NET_OFF && abi >= 4)
		report_enforced(rep, "network off: Landlock refuses TCP bind and connect");
	report_enforced(rep, abi >= 6 ? "ptrace, /proc/PID, signals and abstract Unix sockets scoped to the run (Landlock)"
				    : "ptrace and /proc/PID of processes outside the run (Landlock)");
	if (abi < 2)
		report_gap(rep, "landlock", "renaming or linking a file into another directory is refused outright (Landlock ABI 2 adds the refer right)");
	if (abi < 4 && net == NET_OFF)
		report_gap(rep, "landlock", "TCP bind and connect are refused by seccomp alone (Landlock ABI 4 adds TCP rules)");
	if (abi < 5)
		report_gap(rep, "landlock", "ioctl on devices opened before the run is not governed (Landlock ABI 5)");
	if (abi < 6)
		report_gap(rep, "landlock", "signals to processes outside the run and abstract Unix sockets outside the run are not blocked (Landlock ABI 6)");
	report_gap(rep, "/proc of other processes",
		   "their cmdline and status are readable: Landlock cannot tell the run's /proc/PID from another's");
}

int landlock_build(const struct landlock_plan *plan, int *ret_fd, const char **ret_failing_path)
{
	struct stockade_ruleset_attr attr = {
		.handled_access_fs = plan->handled_fs,
		.handled_access_net = plan->handled_net,
		.scoped = plan->scoped,
	};
	size_t size = plan->abi >= 6 ? sizeof(attr)
		      : plan->abi >= 4 ? offsetof(struct stockade_ruleset_attr, scoped)
				       : offsetof(struct stockade_ruleset_attr, handled_access_net);
	_cleanup_close_ int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset < 0)
		return -errno;

	const uint64_t file_mask = file_rights_mask();
	/* The directory of the rule before (the first dir_len bytes of its
	 * path), opened (or its -errno): the next rule in it (a carved
	 * tree's entries, a cgroup view's files) is opened from it, by its
	 * name alone. */
	_cleanup_close_ int dir_fd = -ENOENT;
	const char *dir = NULL;
	size_t dir_len = 0;
	/* Each rule's descriptor, closed together. */
	_cleanup_fd_closer_ struct fd_closer done = FD_CLOSER_INIT;
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct landlock_rule *r = &plan->rules[i];
		/* Every planned path is canonical: a symlink on the way now
		 * means the tree changed since planning, and is refused. A
		 * path gone since planning only loses its grant. */
		const char *slash = strrchr(r->path, '/');
		size_t len = (size_t)(slash - r->path);
		int fd = -1;
		if (len && slash[1]) {
			if (!dir || len != dir_len || strncmp(dir, r->path, len) != 0) {
				if (dir_fd >= 0)
					close(dir_fd);
				/* on the stack: the jail's init allocates nothing */
				char parent[PATH_MAX];
				if (len < sizeof(parent)) {
					memcpy(parent, r->path, len);
					parent[len] = '\0';
					dir_fd = open_nofollow(AT_FDCWD, parent, O_PATH | O_DIRECTORY, 0, 0);
				} else {
					dir_fd = -ENAMETOOLONG;
				}
				dir = r->path;
				dir_len = len;
			}
			fd = dir_fd >= 0 ? open_nofollow(dir_fd, slash + 1, O_PATH, 0, 0) : dir_fd;
		} else {
			fd = open_nofollow(AT_FDCWD, r->path, O_PATH, 0, 0);
		}
		if (fd < 0) {
			if (fd == -ENOENT)
				continue;
			*ret_failing_path = r->path;
			return fd;
		}
		/* The plan knows what each path is; a file that became a
		 * directory since gets only file rights, and a directory that
		 * became a file makes the kernel refuse the rule (EINVAL). */
		struct stockade_path_beneath_attr pb = {
			.allowed_access = r->access & plan->handled_fs,
			.parent_fd = fd,
		};
		if (!r->dir)
			pb.allowed_access &= file_mask;
		int e = pb.allowed_access && syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0
				? -errno
				: 0;
		/* done with it: to the closer */
		fd_closer_add(&done, fd);
		if (e < 0) {
			*ret_failing_path = r->path;
			return e;
		}
	}
	*ret_fd = TAKE_FD(ruleset);
	return 0;
}

int landlock_restrict(int ruleset)
{
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return -errno;
	return 0;
}

int landlock_apply(const struct landlock_plan *plan, const char **ret_failing_path)
{
	_cleanup_close_ int ruleset = -1;
	int r = landlock_build(plan, &ruleset, ret_failing_path);
	if (r < 0)
		return r;
	return landlock_restrict(ruleset);
}
