#include "jail/caps.h"

#include <errno.h>
#include <linux/securebits.h>
#include <sys/capability.h>

static void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}

int caps_drop_all(void)
{
	if (cap_reset_ambient() < 0 && errno != EINVAL)
		return -errno;
	__attribute__((cleanup(cap_freep))) cap_t own = cap_get_proc();
	if (!own)
		return -errno;
	cap_flag_value_t setpcap = CAP_CLEAR;
	if (cap_get_flag(own, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap) < 0)
		return -errno;
	if (setpcap == CAP_SET) {
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
	__attribute__((cleanup(cap_freep))) cap_t none = cap_init();
	if (!none)
		return -errno;
	return cap_set_proc(none) < 0 ? -errno : 0;
}
