/* Capabilities, dropped for good in both backends, root included. Through
 * libcap, linked statically (Debian ships libcap.a): a run pays no dynamic
 * loading for the calls it makes. */
#pragma once

/* Clears the ambient set; where CAP_SETPCAP is effective (root, or the
 * namespace jail's init in its own user namespace) locks the securebits
 * that would let exec hand capabilities back and empties the bounding
 * set (without it no_new_privs keeps exec from gaining anything); then
 * empties the effective, permitted and inheritable sets. 0 or -errno. */
int caps_drop_all(void);
