/* caps: caps_drop_all() in a child: nothing effective, permitted,
 * inheritable or ambient is left, and as root the bounding set is empty
 * and the securebits that would refill it at exec are locked; and the
 * supervisor's round trip (nothing effective while it acts for the
 * command, its own set back after). */
#include "jail/caps.h"

#include <linux/securebits.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "tests/tap.h"

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
static int effective(cap_t c, cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;
	return cap_get_flag(c, cap, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

static void round_trip(int *report)
{
	report[0] = getuid() != 0 && unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
	cap_t own = cap_get_proc();
	report[1] = own && effective(own, CAP_DAC_OVERRIDE);
	cap_t acting = cap_dup(own);
	cap_clear_flag(acting, CAP_EFFECTIVE);
	report[2] = cap_set_proc(acting);
	cap_t now = cap_get_proc();
	cap_flag_value_t permitted = CAP_CLEAR;
	cap_get_flag(now, CAP_DAC_OVERRIDE, CAP_PERMITTED, &permitted);
	report[3] = !effective(now, CAP_DAC_OVERRIDE) && permitted == CAP_SET;
	cap_free(now);
	report[4] = cap_set_proc(own);
	now = cap_get_proc();
	report[5] = effective(now, CAP_DAC_OVERRIDE);
	cap_free(now);
	cap_free(acting);
	cap_free(own);
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
	test_effective_round_trip();
	test_drop_all();
	return tap_done();
}
