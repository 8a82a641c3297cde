/* What a run enforced, left out and refused: said on stderr and written
 * as one JSON object by --report. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct gap {
	char *what;
	char *why;
};

struct denial {
	char *kind;		/* "syscall", "connect", "bind", "handoff" */
	char *what;		/* the call, the address, the path */
	char *error;		/* the errno answered, or what was done */
	/* what refused it, where that comes from, and the smallest change
	 * that would allow it (NULL: not known, or nothing allows it) */
	char *rule;
	char *source;
	char *fix;
	unsigned count;
};

/* Network allow: a name the run looked up, with what it was answered;
 * a connection out, with the name it carried, where it went, its bytes
 * and the verdict. Alike ones are counted in one record. */
struct name_record {
	char *name;
	char *type;		/* "A", "AAAA", "TXT"... */
	char *verdict;		/* "answered", "refused: NXDOMAIN", ... */
	char *answer;		/* the addresses and their TTL, or NULL */
	unsigned count;
};

struct conn_record {
	char *name;		/* the name it carried (or its address was looked up for), or NULL */
	char *address;		/* where the command asked to go: "10.0.0.1:443" */
	char *verdict;		/* "allowed", "refused" */
	char *why;		/* how it was named, or why refused */
	unsigned long long up, down;	/* bytes out and back, summed */
	unsigned count;
};

struct report {
	const char *backend;	/* "namespaces", "landlock", "seatbelt", "none" */
	const char *network;
	char *fallback;		/* why auto left the namespaces backend, or NULL */
	char **enforced;
	struct gap *gaps;
	size_t n_gaps;
	struct denial *denials;
	size_t n_denials;
	bool supervisor;	/* the listener served the whole run */
	char **supervises;	/* what the listener decides */
	bool exited;		/* the command ran and ended */
	int exit_code;
	int signal;		/* 0 unless a signal ended the command */
	unsigned long long setup_us;
	unsigned long long run_us;
	char **said;		/* stockade's own error and hint lines */
	/* The notes that come of the host or the settings, the same on
	 * every run (a hide target that does not exist, a part of the
	 * policy this host leaves out): each is said once while it stays
	 * the same, and listed here every time. */
	char **notes;
	/* What the run wrote where it is discarded with the run (its fresh
	 * home, its /tmp), counted when it ended. */
	struct discard *discards;
	size_t n_discards;
	bool allowlist;		/* network allow: the names and connections below are written */
	struct name_record *names;
	size_t n_names;
	struct conn_record *conns;
	size_t n_conns;
	int status;		/* what stockade exits with */
	/* Why stockade's keeper ended the run (stockade died during it), or
	 * NULL: stockade ended it. */
	const char *ended;
	int out_fd;		/* where --report goes (not written in it); -1: nowhere */
};

void report_init(struct report *r);
void report_free(struct report *r);
void report_enforced(struct report *r, const char *what);
/* Forgets what one backend enforced and left out, for a fallback to
 * another; denials and the fallback's reason stay. */
void report_reset_plan(struct report *r);
void report_gap(struct report *r, const char *what, const char *why);
/* Counts one more of the same denial. */
void report_denial(struct report *r, const char *kind, const char *what, const char *error);
/* The same with the rule that refused, its source and the fix (each may
 * be NULL); the first record of a denial keeps them. */
void report_denial_ruled(struct report *r, const char *kind, const char *what, const char *error, const char *rule,
			 const char *source, const char *fix);
/* Whether a denial of kind for what would be one too many: names and
 * addresses a command tries are recorded one by one up to REPORT_RECORDS
 * of a kind, then one entry counts the rest, so a command asking a
 * million cannot grow the report without end (false for one already
 * recorded). */
#define REPORT_RECORDS 256
bool report_records_full(const struct report *r, const char *kind, const char *what);
/* Network allow's records (struct name_record, struct conn_record):
 * alike ones counted in one, REPORT_RECORDS of each at most and then one
 * that counts the rest. */
void report_name(struct report *r, const char *name, const char *type, const char *verdict, const char *answer);
void report_connection(struct report *r, const char *name, const char *address, const char *verdict, const char *why,
		       unsigned long long up, unsigned long long down);
/* The denials on one line, for stderr when the command failed. */
char *report_denials_line(const struct report *r);
/* The denials' counts now, and the same line for what was refused since
 * (a count grown, a denial new): "" when nothing was. For a command of a
 * session, whose report is the session's. */
unsigned *report_denial_counts(const struct report *r, size_t *ret_n);
char *report_denials_line_since(const struct report *r, const unsigned *counts, size_t n);
/* One more line stockade said (an error or a hint). */
void report_said_line(struct report *r, const char *line);
/* Files the run wrote in a place of its own that goes with it. */
struct discard {
	char *place;		/* "home", "/tmp", "TMPDIR" */
	unsigned long files;	/* regular files */
	unsigned long long bytes;
	char **paths;		/* a few of them, as the command saw them */
	char *keep;		/* the option that keeps them */
};
void report_discarded(struct report *r, const char *place, unsigned long files, unsigned long long bytes,
		      char *const *paths, const char *keep);

/* One more note of the run's, said or not (jail/say-policy.h). */
void report_note(struct report *r, const char *line);
int report_write_json(const struct report *r, FILE *f);
/* The report's file, opened for writing (created 0644) before anything
 * runs: a FIFO with no reader is refused rather than waited on. Returns
 * the descriptor or -errno. */
int report_open(const char *path);
/* Writes it through fd, from the start, cutting what was there. */
int report_write_fd(const struct report *r, int fd);
int report_write(const struct report *r, const char *path);  /* report_open + report_write_fd */
/* A JSON string, escaped. */
void json_string(FILE *f, const char *s);
