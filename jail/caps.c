#include "jail/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/capability.h>

int caps_drop_all(void)
{
	if (cap_reset_ambient() < 0 && errno != EINVAL)
		return -errno;
	/* The sets read and cleared by libcap's capget and capset, into
	 * memory of this frame's: cap_get_proc and cap_init allocate, and
	 * the jail's init, which drops its own here, allocates nothing on
	 * its way to the command (each heap page it wrote would be a copy
	 * of stockade's, and a fault). */
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	if (capget(&header, data) < 0)
		return -errno;
	if (data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)) {
		/* Root's exec would otherwise fill the permitted set again. */
		unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
				SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
		if (cap_set_secbits(bits) < 0)
			return -errno;
		for (cap_value_t cap = 0; cap < cap_max_bits(); cap++)
			if (cap_drop_bound(cap) < 0)
				return -errno;
	}
	struct __user_cap_data_struct none[2] = { 0 };
	header = (struct __user_cap_header_struct){ .version = _LINUX_CAPABILITY_VERSION_3 };
	return capset(&header, none) < 0 ? -errno : 0;
}
