import XCTest
import LunetCore
@testable import LunetLua

/// `lunet load`'s phases of a request (k6's http_req_blocked, _connecting, _tls_handshaking,
/// _waiting, _receiving), from libcurl's times: pure values, no network.
final class LoadPhasesTests: XCTestCase {
    private func timings(dns: Double, connect: Double, tls: Double, ttfb: Double, total: Double) -> HTTPResponse.Timings {
        var t = HTTPResponse.Timings()
        t.dns = dns; t.connect = connect; t.tls = tls; t.ttfb = ttfb; t.total = total
        return t
    }

    private func assertPhases(_ t: HTTPResponse.Timings, _ want: [Double], _ what: String) {
        let p = t.loadPhases
        let got = [p.duration, p.blocked, p.connecting, p.tls, p.waiting, p.receiving]
        XCTAssertEqual(got.count, want.count)
        for (g, w) in zip(got, want) { XCTAssertEqual(g, w, accuracy: 1e-6, "\(what): \(got) against \(want)") }
    }

    func testANewTLSConnectionHasEveryPhase() {
        assertPhases(timings(dns: 0.001, connect: 0.003, tls: 0.010, ttfb: 0.015, total: 0.016),
                     [16_000, 1_000, 2_000, 7_000, 5_000, 1_000], "a new TLS connection")
    }

    func testPlainHTTPWaitsFromTheConnection() {
        // No TLS: libcurl's TLS time is 0, and waiting runs from the connection.
        assertPhases(timings(dns: 0.001, connect: 0.002, tls: 0, ttfb: 0.005, total: 0.006),
                     [6_000, 1_000, 1_000, 0, 3_000, 1_000], "plain HTTP")
    }

    func testAReusedConnectionSpendsItsTimeWaitingAndReceiving() {
        // A reused connection: libcurl reports 0 for the steps it did not take.
        assertPhases(timings(dns: 0, connect: 0, tls: 0, ttfb: 0.0004, total: 0.0005),
                     [500, 0, 0, 0, 400, 100], "a reused connection")
    }

    func testAStepEndingBeforeTheOneBeforeItIsZero() {
        // Out-of-order times (a step libcurl skipped reported as 0 in the middle) are 0, never negative.
        assertPhases(timings(dns: 0.002, connect: 0.001, tls: 0.0005, ttfb: 0.0001, total: 0.00005),
                     [50, 2_000, 0, 0, 0, 0], "times out of order")
    }
}
