/* stockade quarantine: what the guard set aside, listed, and one item put
 * back where it was, outside any jail. */
#pragma once


/* args: empty or {"list"}, or {"restore", ID}. Returns the exit status. */
int quarantine_verb(const char *state_dir, char *const *args);
