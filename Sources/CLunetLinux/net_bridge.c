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

// The bytes a TCP socket has received (TCP_INFO's tcpi_bytes_received, Linux 4.1), or -1 when
// the kernel cannot say (not a TCP socket, an older kernel). linux/tcp.h has the field; the C
// library's netinet/tcp.h, which Swift's Glibc module brings in, does not.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>

long long lunet_socket_bytes_received(int fd) {
    struct tcp_info info;
    memset(&info, 0, sizeof info);
    socklen_t size = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return -1;
    if (size < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) return -1;
    return (long long)info.tcpi_bytes_received;
}
