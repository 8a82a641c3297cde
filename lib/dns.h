/* The one part of DNS stockade reads: the name a query asks about, for
 * the report (the namespace jail's responder, the landlock backend's
 * refused datagrams to a name server). */
#pragma once

#include <stddef.h>

#define DNS_HEADER 12

/* The name of a standard query's one question, as text ("example.com";
 * bytes outside printable ASCII and a dot inside a label as \DDD, as dig
 * prints them). The offset just past the name, or 0 when msg is no
 * standard query of one question whose name can be read (compression is
 * not allowed in a question); name is then empty. Pure. */
size_t dns_question_name(const void *msg, size_t len, char *name, size_t size);
