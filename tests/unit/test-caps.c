/* caps: stockade's capget and capset against libcap's reading of the same
 * process, and caps_drop_all() in a child: nothing effective, permitted,
 * inheritable or ambient is left, and as root the bounding set is empty
 * and the securebits that would refill it at exec are locked. */
#include "jail/caps.h"

#include <linux/securebits.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "tests/tap.h"

static void test_reads_as_libcap(void)
{
	struct caps c;
	is_int(caps_get(&c), 0, "caps_get");
	cap_t lc = cap_get_proc();
	ok(lc != NULL, "libcap reads the same process");
	size_t differ = 0;
	for (int cap = 0; lc && cap <= CAP_LAST_CAP; cap++) {
		cap_flag_value_t v = CAP_CLEAR;
		cap_get_flag(lc, cap, CAP_EFFECTIVE, &v);
		if ((v == CAP_SET) != caps_effective(&c, cap))
			differ++;
	}
	is_int(differ, 0, "caps_effective agrees with libcap on every capability (uid %d)", (int)getuid());
	ok(!caps_effective(&c, -1) && !caps_effective(&c, 64), "out-of-range capabilities are not effective");
	if (lc)
		cap_free(lc);
}

/* Runs fn in a child, whose process the changes are made to, and reads
 * back the n ints it reports. */
static void in_child(void (*fn)(int *report), int *report, size_t n)
{
	int p[2];
	if (pipe(p) < 0)
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		fn(report);
		_exit(write(p[1], report, n * sizeof(int)) == (ssize_t)(n * sizeof(int)) ? 0 : 2);
	}
	close(p[1]);
	for (size_t i = 0; i < n; i++)
		report[i] = -1;
	ssize_t got = read(p[0], report, n * sizeof(int));
	close(p[0]);
	waitpid(pid, NULL, 0);
	is_int(got, (ssize_t)(n * sizeof(int)), "the child reported");
}

/* Dropping the effective set and raising it again, as the supervisor does
 * around each call it makes for the command: in a user namespace of the
 * child's own when it is not root. */
static void round_trip(int *report)
{
	report[0] = getuid() != 0 && unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
	struct caps on, off, now;
	caps_get(&on);
	report[1] = caps_effective(&on, CAP_DAC_OVERRIDE);
	off = on;
	for (size_t i = 0; i < ARRAY_SIZE(off.d); i++)
		off.d[i].effective = 0;
	report[2] = caps_set(&off);
	caps_get(&now);
	report[3] = !caps_effective(&now, CAP_DAC_OVERRIDE) && now.d[0].permitted == on.d[0].permitted;
	report[4] = caps_set(&on);
	caps_get(&now);
	report[5] = caps_effective(&now, CAP_DAC_OVERRIDE);
}

static void test_effective_round_trip(void)
{
	int report[6];
	in_child(round_trip, report, ARRAY_SIZE(report));
	is_int(report[0], 0, "a user namespace where not root");
	is_int(report[1], 1, "CAP_DAC_OVERRIDE effective to begin with");
	is_int(report[2], 0, "the effective set emptied");
	is_int(report[3], 1, "nothing effective, the permitted set kept");
	is_int(report[4], 0, "raised again from the permitted set");
	is_int(report[5], 1, "CAP_DAC_OVERRIDE effective again");
}

static void drop_all(int *report)
{
	report[0] = caps_drop_all();
	cap_t lc = cap_get_proc();
	char *text = lc ? cap_to_text(lc, NULL) : NULL;
	report[1] = text && streq(text, "=");
	report[2] = (int)prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0);
	report[3] = (int)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0);
	report[4] = (int)prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
}

static void test_drop_all(void)
{
	int report[5];
	in_child(drop_all, report, ARRAY_SIZE(report));
	is_int(report[0], 0, "caps_drop_all succeeds (uid %d)", (int)getuid());
	is_int(report[1], 1, "libcap reads the child's sets as empty ('=')");
	is_int(report[3], 0, "no ambient capability");
	if (getuid() == 0) {
		is_int(report[2], 0, "root: CAP_SYS_ADMIN gone from the bounding set");
		ok(report[4] & SECBIT_NOROOT_LOCKED && report[4] & SECBIT_NOROOT,
		   "root: SECBIT_NOROOT set and locked (securebits %#x)", report[4]);
	} else {
		ok(report[2] == 1 || report[2] == 0, "unprivileged: the bounding set is read (%d), kept without CAP_SETPCAP",
		   report[2]);
	}
}

int main(void)
{
	test_reads_as_libcap();
	test_effective_round_trip();
	test_drop_all();
	return tap_done();
}
