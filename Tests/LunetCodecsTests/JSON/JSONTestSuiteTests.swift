import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The test_parsing files of Tests/Fixtures/JSONTestSuite, against the rules of docs/json.md.
final class JSONTestSuiteTests: JSONCodecTestCase {
    /// Every y_ file is accepted (and survives an encode/decode round trip), every n_ file is
    /// rejected, and every i_ file does what docs/json.md says it does.
    func testJSONTestSuite() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let suite = here.appendingPathComponent("../../Fixtures/JSONTestSuite/test_parsing").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: suite.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThan(files.count, 300)

        let docs = here.appendingPathComponent("../../../docs/json.md").standardized
        let documented = try String(contentsOf: docs, encoding: .utf8)
        var expected: [String: Bool] = [:]
        for line in documented.split(separator: "\n") where line.hasPrefix("| `i_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            expected[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[1] == "accepted"
        }

        var table: [String] = []
        for name in files {
            let bytes = [UInt8](try Data(contentsOf: suite.appendingPathComponent(name)))
            let accepted = decodeBytes(bytes).ok
            switch name.first {
            case "y":
                XCTAssertTrue(accepted, "\(name) must be accepted: \(decodeBytes(bytes).message)")
                if accepted { roundTrip(bytes, name) }
            case "n":
                XCTAssertFalse(accepted, "\(name) must be rejected")
            default:
                table.append("| `\(name)` | \(accepted ? "accepted" : "rejected") |")
                XCTAssertEqual(expected[name], accepted, "docs/json.md is out of date for \(name); its row: | `\(name)` | \(accepted ? "accepted" : "rejected") |")
            }
        }
        if expected.count != table.count {
            XCTFail("docs/json.md lists \(expected.count) i_ files, the suite has \(table.count):\n" + table.joined(separator: "\n"))
        }
    }
}
