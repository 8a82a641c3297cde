/* Every message a run says about what failed, made here from what the
 * modules hand back (an errno, the step, the path): "stockade: cannot
 * <action> '<object>': <reason>", lowercase, no full stop, and where the
 * next step is not obvious a second line "hint: ...". */
#pragma once

#include "guard/guard.h"
#include "jail/child.h"
#include "jail/cli.h"
#include "jail/places.h"
#include "jail/say-policy.h"
#include "policy/build.h"
#include "policy/report.h"

void say_places_failure(const struct places_failure *f);
/* ending: at the end of the run (undoing), not at its start. */
/* A rename over a trust hand-off the namespace jail binds read-only,
 * which the kernel refused: named once, with how to allow it. */
void say_handoff_refused(const char *workspace, const char *path, struct report *rep);
/* The housekeeping of run directories left by killed runs, where it
 * failed: notes, never fatal. */
void say_places_notes(const struct places *pl);
void say_guard_failure(const struct guard_failure *f, int err, const char *workspace, bool ending);
void say_child_error(const struct child_error *e, const struct policy *p);

/* Names each change the guard undid, on stderr and in the report, and each
 * hand-off it cannot restore. */
/* What the run wrote in a place that goes with it, as the run ends: in
 * the report, and a note said once for the same places. */
void say_discarded(const struct policy *p, struct report *rep, const char *place, const char *what,
		   const struct written *w, const char *keep);
void say_guard_report(const struct guard_report *gr, const char *area, const struct policy *p, struct report *rep);

/* The paths a command's words name (each word, a shell's -c script's,
 * an option's value, a list's), made absolute: ~/ your home, a relative
 * one from cwd. */
char **say_named_paths(char *const *argv, const char *cwd, const char *home);
/* For a command that failed: what its words name that is there outside
 * the jail and that the jail cannot read (a namespace jail has no such
 * path, Landlock refuses it, and neither is seen), and a file to make in
 * a folder out of its reach that you may write: one line each with the
 * fix, each option after start (NULL: a run's own options). A hidden one
 * is named with its rule, never offered; a socket, and what rep names
 * refused already (with a fix of its own), are left out. The lines,
 * none where nothing is named. */
char **say_unreadable_named(const struct policy *p, const struct report *rep, char *const *argv, const char *cwd,
			    const char *start);
/* For a command that ended in 126 or 127: its program (word, found on
 * path_env from cwd, as the command finds it) where it is there outside
 * and out of the jail's reach, in one line with the fix after start (a
 * session's commands have only what it started with; a run grants its
 * own program); else what is wrong with the file itself, as
 * say_cannot_run says it; or NULL. */
char *say_unreadable_program(const struct policy *p, const char *word, const char *path_env, const char *cwd,
			     const char *start);
/* The program that cannot be found or run, before anything starts, with
 * the status a shell gives (said by the caller): a script that is not
 * executable, or whose first line names an interpreter that is not there,
 * says so. */
void say_cannot_run(const struct policy *p, const struct options *o);
/* For argv whose program is a shell's own command (cd, source, export):
 * the line given to a shell, after run ("stockade --"); or NULL. */
char *say_shell_builtin(char *const *argv, const char *run);
