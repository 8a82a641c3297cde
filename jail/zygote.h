/* A session's zygote: the process inside the jail that starts each
 * command a session runs (stockade.1, SESSIONS). In the namespace jail it
 * is the jail's init (pid 1); on the landlock backend, the process the
 * keeper forks, confined as a command would be. Either way it is confined
 * already, so what it forks is too: it never holds anything of the
 * user's but the descriptors each exec brings.
 *
 * It reads the holder's messages on its socket (lib/wire.h): "exec"
 * (id, cwd, arg..., env..., and for a terminal tty-fds, ctty, rows, cols
 * and tio; descriptors 0 to 2 the caller's, then a Landlock ruleset that
 * narrows this one command when "ruleset=1"), "signal" (id, sig: to the
 * exec's process group). It answers "started" (id, pid; the pty's master
 * with it), "stopped" (id) and "exit" (id, status: the wait status). What
 * an exec leaves running stays; it reaps it (pid 1) or the keeper does. */
#pragma once

#include "jail/child.h"

_Noreturn void zygote_main(const struct child *c);
