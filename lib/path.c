#include "lib/path.h"

#include "lib/compat.h"
#include "lib/util.h"

char *path_join(const char *a, const char *b)
{
	if (str_empty(b))
		return xstrdup(a);
	if (str_empty(a))
		return xstrdup(b);
	size_t n = strlen(a);
	bool slash = a[n - 1] == '/' || b[0] == '/';
	if (a[n - 1] == '/' && b[0] == '/')
		b++;
	return xstrcat3(a, slash ? "" : "/", b);
}

bool path_is_absolute(const char *p)
{
	return p && p[0] == '/';
}

bool path_is_beneath(const char *child, const char *parent)
{
	size_t n = strlen(parent);
	if (n == 1 && parent[0] == '/')
		return child[0] == '/';
	return strncmp(child, parent, n) == 0 && (child[n] == '\0' || child[n] == '/');
}

const char *path_below(const char *child, const char *parent)
{
	size_t n = strlen(parent);
	if (n == 1 && parent[0] == '/')
		return child + 1;
	child += n;
	return *child == '/' ? child + 1 : child;
}

char *path_normalize(const char *p)
{
	size_t n = strlen(p);
	char *out = xmalloc(n + 2);
	size_t len = 0;

	out[len++] = '/';
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *end = str_chrnul(p, '/');
		size_t seg = (size_t)(end - p);
		if (seg == 1 && p[0] == '.') {
			/* nothing */
		} else if (seg == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 1 && out[len - 1] != '/')
				len--;
			if (len > 1)
				len--;
		} else {
			if (len > 1)
				out[len++] = '/';
			memcpy(out + len, p, seg);
			len += seg;
		}
		p = end;
	}
	out[len] = '\0';
	return out;
}

size_t path_depth(const char *p)
{
	size_t d = 0;
	for (; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			d++;
	return d;
}

char *path_parent(const char *path, const char **ret_name)
{
	if (streq(path, "/"))
		return NULL;
	const char *slash = strrchr(path, '/');
	if (ret_name)
		*ret_name = slash ? slash + 1 : path;
	if (!slash)
		return xstrdup("");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
		if (x == '/')
			x = 1;
		if (y == '/')
			y = 1;
		if (x != y || !x)
			return (int)x - (int)y;
	}
}
