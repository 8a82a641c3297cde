/* Capabilities: dropped for good in both backends, root included. Through
 * capget and capset themselves: the three calls stockade makes do not
 * need a library loaded at every start. */
#pragma once

#include <stdbool.h>
#include <linux/capability.h>

/* A process's effective, permitted and inheritable sets. */
struct caps {
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
};

int caps_get(struct caps *c);
int caps_set(const struct caps *c);
bool caps_effective(const struct caps *c, int cap);

/* Locks the securebits that would let exec hand capabilities back, drops
 * the bounding set (both need CAP_SETPCAP, which an unprivileged caller
 * outside a user namespace lacks: no_new_privs then keeps exec from
 * gaining anything), clears the ambient set and empties the effective,
 * permitted and inheritable sets. */
int caps_drop_all(void);
