#include "jail/caps.h"

#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "jail/util.h"

int caps_drop_all(void)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;

	cap_t caps = cap_get_proc();
	if (!caps)
		return -errno;
	cap_flag_value_t setpcap = CAP_CLEAR;
	cap_get_flag(caps, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);

	int r = 0;
	if (setpcap == CAP_SET) {
		/* Root's exec would otherwise fill the permitted set again. */
		unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
		if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
			r = -errno;
		for (cap_value_t c = 0; r == 0 && c <= CAP_LAST_CAP + 8; c++) {
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break;	/* past the kernel's last capability */
				r = -errno;
			}
		}
	}
	if (r == 0 && (cap_clear(caps) < 0 || cap_set_proc(caps) < 0))
		r = -errno;
	cap_free(caps);
	return r;
}
