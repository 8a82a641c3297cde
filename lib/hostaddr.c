/* This host's own addresses (hostaddr.h). */
#include "lib/hostaddr.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

#include "lib/netaddr.h"
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

unsigned host_address_ifindex(const struct net_addr *a)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) < 0)
		return 0;
	unsigned index = 0;
	for (struct ifaddrs *i = ifa; i && !index; i = i->ifa_next) {
		struct net_addr x;
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		size_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (net_addr_parse(i->ifa_addr, len, &x) == 0 && net_addr_same_ip(&x, a))
			index = if_nametoindex(i->ifa_name);
	}
	freeifaddrs(ifa);
	return index;
}
