// A netlink socket that turns readable when routes or links change (sockaddr_nl and the
// RTMGRP_* groups come from Linux headers Swift's Glibc module does not bring in).
#include "CLunetLinux.h"
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int lunet_route_socket(void) {
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0) return -1;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(s, (struct sockaddr *)&address, sizeof address) < 0) {
        close(s);
        return -1;
    }
    return s;
}
