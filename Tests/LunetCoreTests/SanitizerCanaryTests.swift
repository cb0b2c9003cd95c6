import Foundation
import Glibc
import XCTest
@testable import LunetCore

/// Deliberate sanitizer findings, run only by scripts/sanitize (which sets
/// LUNET_SANITIZER_CANARY) and expected to be reported there: they show that a run which reports
/// nothing could have reported something, i.e. that the build is instrumented and that no
/// suppression hides what a test's own code does. (A `leak:XCTest` suppression once hid every
/// leak made in a synchronous test, and the runs still said "0 reports".)
final class SanitizerCanaryTests: XCTestCase {
    private func requireCanary(_ kind: String) throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["LUNET_SANITIZER_CANARY"] == kind,
                          "a deliberate \(kind) that only scripts/sanitize runs, expecting the sanitizer to report it")
    }

    func testLeakCanary() throws {
        try requireCanary("leak")
        // An event loop (with its curl multi handle) that nothing will ever release.
        _ = Unmanaged.passRetained(EventLoop())
    }

    func testRaceCanary() throws {
        try requireCanary("race")
        // Two threads write one variable, and nothing orders the writes: a data race whichever
        // thread runs first.
        final class Shared: @unchecked Sendable { var value = 0 }
        let shared = Unmanaged.passRetained(Shared())
        defer { shared.release() }
        var threads: [pthread_t] = []
        for _ in 0..<2 {
            var t = pthread_t()
            XCTAssertEqual(pthread_create(&t, nil, { raw in
                Unmanaged<Shared>.fromOpaque(raw!).takeUnretainedValue().value += 1
                return nil
            }, shared.toOpaque()), 0)
            threads.append(t)
        }
        for t in threads { pthread_join(t, nil) }
    }
}
