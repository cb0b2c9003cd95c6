import Dispatch
import Foundation
import XCTest
import Lunet

/// lunet from Swift: a host on its own thread, tasks awaited with `try await`, completions on a
/// chosen executor, Swift functions called from Lua.
final class SwiftCallersTests: XCTestCase {
    var httpbin: String {
        guard let url = ProcessInfo.processInfo.environment["LUNET_HTTPBIN"] else {
            XCTFail("LUNET_HTTPBIN is not set: run the tests with scripts/test")
            return "http://127.0.0.1:1"
        }
        return url
    }

    func testAwaitingALuaTask() async throws {
        let lunet = try LunetThread()
        defer { lunet.close() }
        let value = try await lunet.run("task.sleep(0.01); return { answer = 6 * 7, list = { 'a', 'b' } }")
        XCTAssertEqual(value, .table(["answer": .integer(42), "list": .array([.string("a"), .string("b")])]))
    }

    func testARequestFromLuaAwaitedInSwift() async throws {
        let lunet = try LunetThread()
        defer { lunet.close() }
        let status = try await lunet.run("return http.get('\(httpbin)/status/204').status")
        XCTAssertEqual(status, .integer(204))
    }

    func testLuaErrorsArriveAsTypedFailures() async throws {
        let lunet = try LunetThread()
        defer { lunet.close() }
        do {
            _ = try await lunet.run("http.get('http://127.0.0.1:1/')")
            XCTFail("no error")
        } catch {
            guard case .lunet(.connect, _, let url) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(url, "http://127.0.0.1:1/")
        }
        do {
            _ = try await lunet.run("error('plain failure')")
            XCTFail("no error")
        } catch {
            guard case .script(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("plain failure"), message)
        }
    }

    func testCoreSessionsWithTryAwait() async throws {
        let lunet = try LunetThread()
        defer { lunet.close() }
        var config = Session.Configuration()
        config.baseURL = httpbin + "/anything/"
        let response = try await lunet.response(for: HTTPRequest(method: "POST", url: "items", body: .bytes(ByteBuffer("hello"))), configuration: config)
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.body.string.contains("\"data\":\"hello\"") || response.body.string.contains("\"data\": \"hello\""), response.body.string)
        XCTAssertEqual(response.url, httpbin + "/anything/items")
    }

    func testCompletionsRunOnTheChosenQueue() throws {
        let lunet = try LunetThread()
        defer { lunet.close() }
        let queue = DispatchQueue(label: "results")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "results")
        let done = expectation(description: "completion")
        let seen = Handoff2()
        lunet.send(HTTPRequest(url: httpbin + "/get"), on: .queue(queue)) { result in
            seen.set(DispatchQueue.getSpecific(key: key), (try? result.get().status) ?? -1)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(seen.queueName, "results")
        XCTAssertEqual(seen.status, 200)

        let taskDone = expectation(description: "task completion")
        lunet.run("return 'from lua'", on: .queue(queue)) { outcome in
            seen.set(DispatchQueue.getSpecific(key: key), 0)
            XCTAssertEqual(try? outcome.get(), .string("from lua"))
            taskDone.fulfill()
        }
        wait(for: [taskDone], timeout: 10)
        XCTAssertEqual(seen.queueName, "results")
    }

    func testSwiftFunctionsCalledFromLuaFailSafely() async throws {
        let lunet = try LunetThread()
        defer { lunet.close() }
        await lunet.perform { host in
            host.register("double") { s in
                guard let n = s.integer(1) else { throw LunetError(.argument, "double: a number, please") }
                s.push(n * 2)
                return 1
            }
        }
        let doubled = try await lunet.run("return double(21)")
        XCTAssertEqual(doubled, .integer(42))
        let caught = try await lunet.run("local ok, e = pcall(double, 'x'); return e.kind .. ': ' .. e.message")
        XCTAssertEqual(caught, .string("argument: double: a number, please"))
    }

    func testHostsComeAndGo() async throws {
        for i in 1...3 {
            let lunet = try LunetThread()
            let sum = try await lunet.run("return \(i) + 1")
            XCTAssertEqual(sum, .integer(i + 1))
            lunet.close()
        }
    }
}

/// Results written on another queue, read after the expectation.
final class Handoff2: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var queueName: String?
    private(set) var status = 0
    func set(_ name: String?, _ status: Int) {
        lock.lock(); defer { lock.unlock() }
        queueName = name
        if status != 0 { self.status = status }
    }
}
