/* The floor of a guard that checks every directory of a workspace: one
 * fstatat of each, from the top, as the guard's index does. Prints the
 * number of directories and the median of 7 passes in microseconds. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **dirs;
static size_t n, cap;

static void walk(int fd, const char *rel)
{
	DIR *d = fdopendir(fd);
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *path;
		if (asprintf(&path, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0)
			exit(1);
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			dirs = realloc(dirs, cap * sizeof(*dirs));
		}
		dirs[n++] = path;
		int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0)
			walk(cfd, path);
	}
	closedir(d);
}

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench-dirs ROOT\n");
		return 2;
	}
	int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[1]);
		return 1;
	}
	walk(dup(root), "");
	long us[7];
	for (int k = 0; k < 7; k++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		struct stat st;
		for (size_t i = 0; i < n; i++)
			(void)fstatat(root, dirs[i], &st, AT_SYMLINK_NOFOLLOW);
		clock_gettime(CLOCK_MONOTONIC, &b);
		us[k] = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
	}
	qsort(us, 7, sizeof(long), cmp);
	printf("%zu %ld\n", n, us[3]);
	return 0;
}
