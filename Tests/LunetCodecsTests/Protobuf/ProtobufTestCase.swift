import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The protobuf codec through the `protobuf` module, on a bare Lua state (no host, no prelude),
/// checked against Debian's protoc: the descriptor set and the reference encodings are made at
/// test time from Tests/Fixtures/protobuf (test.proto, legacy.proto and text-format inputs).
/// The state, protoc, and the helpers the protobuf tests share.
class ProtobufCodecTestCase: LuaSnippetTestCase {
    override func setUp() {
        super.setUp()
        makeState(module: "protobuf", ProtobufModule.pushModule)
        lua("""
        function deq(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) == "number" then return math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b)) end
          if type(a) ~= "table" then return a == b end
          for k, v in pairs(a) do if not deq(v, b[k]) then return false end end
          for k in pairs(b) do if a[k] == nil then return false end end
          return true
        end
        function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
        function unhex(h) return (h:gsub("%s", ""):gsub("..", function(x) return string.char(tonumber(x, 16)) end)) end
        """)
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fixtures/protobuf").standardized

    struct ProtocMissing: Error, CustomStringConvertible {
        var description: String {
            "protoc is not installed: these tests need Debian's protobuf-compiler (apt-get install -y protobuf-compiler)"
        }
    }

    static func findProtoc() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(dir)/protoc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs protoc in the fixtures directory with `input` on stdin; its stdout.
    @discardableResult

    func protoc(_ arguments: [String], input: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        guard let protoc = Self.findProtoc() else {
            XCTFail(ProtocMissing().description, file: file, line: line)
            throw ProtocMissing()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: protoc)
        process.arguments = ["-I", Self.fixtures.path] + arguments
        process.currentDirectoryURL = Self.fixtures
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            let text = String(decoding: errors, as: UTF8.self)
            XCTFail("protoc \(arguments.joined(separator: " ")) failed: \(text)", file: file, line: line)
            throw ProtocMissing()
        }
        return [UInt8](output)
    }

    func descriptorSet() throws -> [UInt8] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lunet-protobuf-\(getpid())-\(UUID().uuidString).pb")
        defer { try? FileManager.default.removeItem(at: out) }
        try protoc(["--descriptor_set_out=\(out.path)", "--include_imports", "test.proto"])
        return [UInt8](try Data(contentsOf: out))
    }

    func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    /// protoc --encode of a text-format fixture.
    func encodeWithProtoc(_ text: String, as message: String = "lunet.test.Everything") throws -> [UInt8] {
        try protoc(["--encode=\(message)", "test.proto"], input: try fixture(text))
    }

    func decodeWithProtoc(_ bytes: [UInt8], as message: String = "lunet.test.Everything") throws -> String {
        String(decoding: try protoc(["--decode=\(message)", "test.proto"], input: bytes), as: UTF8.self)
    }

    /// Loads the schema into the global `schema` (and its bytes into `DESC`).
    func loadSchema() throws {
        setGlobal("DESC", try descriptorSet())
        lua("schema = protobuf.load(DESC)")
    }

    func setGlobal(_ name: String, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { lunet_pushbytes(L, $0.baseAddress, $0.count) }
        lua_setglobal(L, name)
    }

    func global(_ name: String) -> [UInt8]? {
        defer { lua_settop(L, -2) }
        guard lua_getglobal(L, name) == LUA_TSTRING, let b = LuaStack(L).bytes(-1) else { return nil }
        return [UInt8](b)
    }

    /// Decodes with the Swift entry point (no schema); checks the stack discipline.
    func rawDecode(_ bytes: [UInt8]) -> (ok: Bool, message: String, position: Int?) {
        let top = lua_gettop(L)
        let status = bytes.withUnsafeBytes { ProtobufModule.decode(L, $0) }
        XCTAssertEqual(lua_gettop(L), top + 1, "decode must leave exactly one value")
        defer { lua_settop(L, top) }
        if status == 1 {
            XCTAssertEqual(lua_type(L, -1), LUA_TTABLE)
            return (true, "", nil)
        }
        XCTAssertEqual(status, LUNET_RAISE)
        return (false, describeError(-1), LuaStack(L).integerField(-1, "position"))
    }
}
