/* stockade quarantine: what the guard set aside, listed, and one item put
 * back where it was, outside any jail. */
#pragma once


/* args: empty or {"list"}, or {"restore", ID}; as: --as PATH, or NULL.
 * Restoring a git config whose settings the guard dropped, where a config
 * is at its path now, puts those settings back into it (git config's
 * semantics, stockade's own git call); --as PATH puts the whole item at
 * PATH instead, for any item. Returns the exit status. */
int quarantine_verb(const char *state_dir, char *const *args, const char *as);
