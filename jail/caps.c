#include "jail/caps.h"

#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "lib/util.h"

int caps_get(struct caps *c)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	*c = (struct caps){ 0 };
	if (syscall(SYS_capget, &h, c->d) < 0)
		return -errno;
	return 0;
}

int caps_set(const struct caps *c)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	if (syscall(SYS_capset, &h, c->d) < 0)
		return -errno;
	return 0;
}

bool caps_effective(const struct caps *c, int cap)
{
	return cap >= 0 && cap < 32 * _LINUX_CAPABILITY_U32S_3 &&
	       (c->d[cap / 32].effective & (1u << (cap % 32)));
}

int caps_drop_all(void)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;

	struct caps c;
	int r = caps_get(&c);
	if (r < 0)
		return r;
	if (caps_effective(&c, CAP_SETPCAP)) {
		/* Root's exec would otherwise fill the permitted set again. */
		unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
		if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
			return -errno;
		for (unsigned long cap = 0; cap < 32 * _LINUX_CAPABILITY_U32S_3; cap++) {
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break;	/* past the kernel's last capability */
				return -errno;
			}
		}
	}
	return caps_set(&(struct caps){ 0 });
}
