import CLunetLinux
import Glibc

/// Whether a route to the outside exists, from the kernel's routing tables as /proc shows them.
/// Parsing is pure (tested on sample tables); reading and watching are at the edges.
public enum RouteTable {
    /// True when an IPv4 or IPv6 default route is up (and not a reject route).
    public static func hasDefaultRoute(ipv4: String, ipv6: String) -> Bool {
        hasIPv4Default(ipv4) || hasIPv6Default(ipv6)
    }

    /// /proc/net/route: Iface Destination Gateway Flags RefCnt Use Metric Mask ... (hex)
    public static func hasIPv4Default(_ table: String) -> Bool {
        for line in table.split(separator: "\n").dropFirst() {
            let f = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard f.count >= 8, f[1] == "00000000", f[7] == "00000000",
                  let flags = UInt32(f[3], radix: 16) else { continue }
            if flags & 0x1 != 0 && flags & 0x200 == 0 { return true }      // RTF_UP, not RTF_REJECT
        }
        return false
    }

    /// /proc/net/ipv6_route: dest plen src splen nexthop metric refcnt use flags iface (hex)
    public static func hasIPv6Default(_ table: String) -> Bool {
        for line in table.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 10, f[0] == "00000000000000000000000000000000", f[1] == "00",
                  let flags = UInt32(f[8], radix: 16) else { continue }
            if flags & 0x1 != 0 && flags & 0x200 == 0 && f[9] != "lo" { return true }
        }
        return false
    }

    /// Reads the tables now.
    public static func online() -> Bool {
        hasDefaultRoute(ipv4: read("/proc/net/route"), ipv6: read("/proc/net/ipv6_route"))
    }

    static func read(_ path: String) -> String {
        guard let f = fopen(path, "r") else { return "" }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A netlink socket that becomes readable when routes or links change, for the loop to watch.
/// Where netlink is not available it reports so and callers poll instead.
public final class RouteChangeSocket {
    public let fd: Int32

    public init?() {
        let s = lunet_route_socket()
        guard s >= 0 else { return nil }
        fd = s
    }

    /// Reads and drops what arrived (the message says only that something changed).
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while recv(fd, &buffer, buffer.count, 0) > 0 {}
    }

    deinit { close(fd) }
}
