import CLunetLua
import XCTest
@testable import LunetLua
@testable import LunetCore

final class HostLifecycleTests: XCTestCase {
    func testNoRegistryReferenceOrBoxIsLeftWhenAStateCloses() throws {
        let boxesBefore = LuaUserdata.live
        let host = try LuaHost()
        let r = runScript(host, """
            local a = task.delay(0.01, "x")          -- a timer that fires
            local s = http.session{ cookies = true } -- Swift objects held by Lua
            local src = task.source()
            a:next(function(v) return v end):await()
            """)
        XCTAssertEqual(r.status, 0, r.errors.joined())
        // A line of input runs until its own task is done; what it started goes on, so a
        // timer is still pending when the host closes.
        guard case .done(ok: true) = host.evaluate("pending = task.delay(60)") else { return XCTFail("evaluate") }
        XCTAssertEqual(host.loop.pendingTimers, 1)
        host.close()
        XCTAssertEqual(host.liveReferences, 0, "registry references left after close")
        XCTAssertEqual(LuaUserdata.live, boxesBefore, "Swift objects held by Lua after close")
    }

    func testThreeHostsInARow() throws {
        for i in 1...3 {
            let host = try LuaHost()
            let r = runScript(host, "answer = tostring(\(i) * 2)")
            XCTAssertEqual(r.status, 0)
            XCTAssertEqual(global(host, "answer"), String(i * 2))
            host.close()
            XCTAssertEqual(host.liveReferences, 0)
        }
    }

    func testEveryFileUnderLuaIsEmbedded() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = root.appendingPathComponent("lua")
        var onDisk: Set<String> = []
        let walker = FileManager.default.enumerator(atPath: dir.path)!
        for case let path as String in walker where path.hasSuffix(".lua") { onDisk.insert("lua/" + path) }
        let embedded = Set(EmbeddedLua.files.map { $0.path.description })
        XCTAssertEqual(embedded, onDisk, "every file under lua/ is compiled into the host")
        for (index, file) in EmbeddedLua.files.enumerated() {
            XCTAssertEqual(EmbeddedLua.bytecode(index).prefix(4), [0x1B, 0x4C, 0x75, 0x61], "\(file.path) is bytecode")
            // The source in the same place is this file's (its bytes on disk).
            let onDisk = try Data(contentsOf: root.appendingPathComponent(file.path.description))
            XCTAssertEqual(EmbeddedLua.source(index), Array(onDisk), "\(file.path)'s source")
        }
        // Each file's bytecode follows the one before it (one literal, in load order).
        for index in EmbeddedLua.files.indices.dropFirst() {
            XCTAssertEqual(EmbeddedLua.files[index].bytecode.lowerBound, EmbeddedLua.files[index - 1].bytecode.upperBound)
        }
        // The modules every start loads lead the bytecode (the order the generator promises).
        XCTAssertEqual(EmbeddedLua.files.prefix(4).map { $0.module.description },
                       ["lunet.prelude", "lunet.runtime", "lunet.errors", "lunet.task"])
    }

    func testAWaitThatNothingCanSettleEndsWithAClearMessage() throws {
        let host = try LuaHost()
        let r = runScript(host, "task.source().task:await()")
        XCTAssertEqual(r.status, 1)
    }

    func testUserCoroutinesStillYieldTheirOwnValues() throws {
        let host = try LuaHost()
        let r = runScript(host, """
            local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
            local co = coroutine.create(function(x) local y = coroutine.yield(x * 2); task.sleep(0.01); return y + 1 end)
            local _, a = coroutine.resume(co, 5)
            local _, b = coroutine.resume(co, 10)
            out = table.concat({ gen(), gen(), gen(), a, b, coroutine.status(co) }, ",")
            """)
        XCTAssertEqual(r.status, 0, r.errors.joined())
        XCTAssertEqual(global(host, "out"), "1,2,3,10,11,dead")
    }
}
