#include "policy/steer.h"

#include <errno.h>
#include <stdlib.h>

#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"

char **steer_trees(const struct policy *p)
{
	char **v = strv_new();
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if (r->access == ACCESS_WRITE && !(r->flags & RULE_DEVICE) && !strv_contains(v, r->path))
			strv_add(&v, r->path);
	}
	return v;
}

const char *steer_tree_of(char *const *trees, const char *path)
{
	const char *widest = NULL;
	for (size_t i = 0; trees && trees[i]; i++)
		if (path_is_beneath(path, trees[i]) && (!widest || strlen(trees[i]) < strlen(widest)))
			widest = trees[i];
	return widest;
}

struct walk {
	char *const *trees;
	struct steer *s;
	char **met;	/* the widest tree of each writable directory looked in */
};

static void on_step(void *data, const char *dir, const char *name, const char *link)
{
	struct walk *w = data;
	const char *tree = steer_tree_of(w->trees, dir);
	if (!tree)
		return;
	if (!w->s->dir) {
		w->s->dir = xstrdup(dir);
		w->s->tree = xstrdup(tree);
	}
	if (link && !w->s->link)
		w->s->link = path_join(dir, name);
	if (!strv_contains(w->met, tree))
		strv_add(&w->met, tree);
}

int steer_path(char *const *trees, const char *path, struct steer *ret)
{
	*ret = (struct steer){ 0 };
	struct walk w = { .trees = trees, .s = ret, .met = strv_new() };
	int r = path_walk(path, on_step, &w, &ret->target, &ret->missing);
	if (r < 0) {
		strv_free(w.met);
		steer_free(ret);
		return r;
	}
	const char *holds = steer_tree_of(trees, ret->target);
	ret->inside = holds != NULL;
	if (!ret->tree && holds)
		ret->tree = xstrdup(holds);
	for (size_t i = 0; w.met[i]; i++)
		if (!path_is_beneath(ret->target, w.met[i]))
			ret->escapes = true;
	strv_free(w.met);
	return 0;
}

void steer_free(struct steer *s)
{
	free(s->target);
	free(s->dir);
	free(s->tree);
	free(s->link);
	*s = (struct steer){ 0 };
}
