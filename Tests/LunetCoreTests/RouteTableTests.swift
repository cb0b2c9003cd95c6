import XCTest
@testable import LunetCore

/// Whether the kernel's routing tables (as /proc prints them) have a default route up.
final class RouteTableTests: XCTestCase {
    let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"

    func testIPv4DefaultRoute() {
        let up = header + "\neth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
        let onlyLAN = header + "\neth0\t0000A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
        let down = header + "\neth0\t00000000\t0100A8C0\t0002\t0\t0\t100\t00000000\t0\t0\t0\n"
        let reject = header + "\neth0\t00000000\t00000000\t0201\t0\t0\t100\t00000000\t0\t0\t0\n"
        XCTAssertTrue(RouteTable.hasIPv4Default(up))
        XCTAssertFalse(RouteTable.hasIPv4Default(onlyLAN), "a LAN route is not a way out")
        XCTAssertFalse(RouteTable.hasIPv4Default(down), "a route that is not up")
        XCTAssertFalse(RouteTable.hasIPv4Default(reject), "a reject route")
        XCTAssertFalse(RouteTable.hasIPv4Default(header + "\n"), "an empty table")
        XCTAssertFalse(RouteTable.hasIPv4Default(""), "no table at all")
    }

    func testIPv6DefaultRoute() {
        let zero = String(repeating: "0", count: 32)
        let up = "\(zero) 00 \(zero) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n"
        let loopbackReject = "\(zero) 00 \(zero) 00 \(zero) ffffffff 00000001 00000000 00200200 lo\n"
        XCTAssertTrue(RouteTable.hasIPv6Default(up))
        XCTAssertFalse(RouteTable.hasIPv6Default(loopbackReject), "the kernel's unreachable default on lo")
        XCTAssertTrue(RouteTable.hasDefaultRoute(ipv4: header, ipv6: up), "either family will do")
    }
}
