/* This host's own addresses (hostaddr.h). */
#include "lib/hostaddr.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

#include "lib/util.h"

size_t host_addresses(struct sockaddr_storage **out)
{
	*out = NULL;
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) < 0)
		return 0;
	size_t n = 0;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		*out = xgrow(*out, n, sizeof(**out));
		memset(&(*out)[n], 0, sizeof((*out)[n]));
		memcpy(&(*out)[n++], i->ifa_addr,
		       i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	}
	freeifaddrs(ifa);
	return n;
}

static bool same_address(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return a->sa_family == AF_INET6 &&
	       memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
		      sizeof(struct in6_addr)) == 0;
}

unsigned host_address_ifindex(const struct sockaddr *sa)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) < 0)
		return 0;
	unsigned index = 0;
	for (struct ifaddrs *i = ifa; i && !index; i = i->ifa_next)
		if (i->ifa_addr && same_address(i->ifa_addr, sa))
			index = if_nametoindex(i->ifa_name);
	freeifaddrs(ifa);
	return index;
}
