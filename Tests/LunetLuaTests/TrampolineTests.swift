import CLunetLua
import XCTest
@testable import LunetLua

/// Objects that count their lives, to prove a Lua error raised for a Swift function never skips
/// a Swift release.
final class Tracked {
    nonisolated(unsafe) static var created = 0
    nonisolated(unsafe) static var released = 0
    let payload: [String]
    init() { Tracked.created += 1; payload = ["a", "b", String(Tracked.created)] }
    deinit { Tracked.released += 1 }
}

final class TrampolineTests: XCTestCase {
    /// A Swift function that makes Swift objects (a class, an array, strings) and then fails
    /// with an argument error, as every binding does on bad input.
    static let failing: lunet_SwiftFunction = { L in
        let L = L!
        let object = Tracked()
        var cleanedUp = false
        defer { cleanedUp = true; _ = cleanedUp }
        let message = "expected a table, got \(LuaStack(L).typeName(1)) (\(object.payload.count))"
        return LuaErrorObject.badArgument(L, 1, "failing", message)
    }

    func testArgumentErrorsUnderPcallReleaseEverySwiftObject() throws {
        let host = try LuaHost()
        register(host, "failing", Self.failing)
        Tracked.created = 0
        Tracked.released = 0
        let result = runScript(host, """
            local n, last = 0, nil
            for i = 1, 100000 do
              local ok, e = pcall(failing, 42)
              if not ok and e.kind == "argument" then n = n + 1; last = e end
            end
            count = tostring(n)
            message = last.message
            """)
        XCTAssertEqual(result.status, 0, result.errors.joined())
        XCTAssertEqual(global(host, "count"), "100000")
        XCTAssertEqual(global(host, "message"), "bad argument #1 to 'failing' (expected a table, got number (3))")
        XCTAssertEqual(Tracked.created, 100_000)
        XCTAssertEqual(Tracked.released, 100_000, "every Swift object made on the way was released")
    }

    func testAnErrorObjectReadsWell() throws {
        let host = try LuaHost()
        register(host, "failing", Self.failing)
        let r = runScript(host, "local ok, e = pcall(failing, {}); text = tostring(e); kind = e.kind")
        XCTAssertEqual(r.status, 0, r.errors.joined())
        XCTAssertEqual(global(host, "kind"), "argument")
        XCTAssertEqual(global(host, "text"), "argument: bad argument #1 to 'failing' (expected a table, got table (3))")
    }

    func testAnUncaughtErrorEndsTheScriptWithItsTraceback() throws {
        let host = try LuaHost()
        register(host, "failing", Self.failing)
        let r = runScript(host, "local function inner() failing(1) end\ninner()")
        XCTAssertEqual(r.status, 1)
        let report = r.errors.joined()
        XCTAssertTrue(report.contains("bad argument #1 to 'failing'"), report)
        XCTAssertTrue(report.contains("stack traceback"), report)
        XCTAssertTrue(report.contains("in local 'inner'") || report.contains("inner"), report)
    }
}
