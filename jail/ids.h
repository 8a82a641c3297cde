/* The user namespace's ids. */
#pragma once

#include <sys/types.h>

/* Maps the caller's own ids, and nothing else, in the user namespace of
 * pid (0: the caller's own), setgroups denied so that no supplementary
 * group can be dropped to get past a group-deny ACL (CVE-2014-8989). The
 * jail's maps, and doctor's trial of them. 0 or -errno. */
int ids_map(pid_t pid, uid_t uid, gid_t gid);
