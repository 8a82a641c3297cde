/* Capabilities: dropped for good in both backends, root included. */
#pragma once

/* Locks the securebits that would let exec hand capabilities back, drops
 * the bounding set (both need CAP_SETPCAP, which an unprivileged caller
 * outside a user namespace lacks: no_new_privs then keeps exec from
 * gaining anything), clears the ambient set and empties the effective,
 * permitted and inheritable sets. */
int caps_drop_all(void);
