import XCTest
@testable import LunetCore

/// The content-coding decoder without the network: pieces of any size, stacked codings undone
/// in reverse order, bytes not in the coding, a coded stream cut short, lists it declines.
final class ContentDecoderTests: XCTestCase {
    private func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        try bytes.withUnsafeBytes { input in try Gzip.compress(input) { Array($0) }.get() }
    }

    /// Feeds `coded` to a decoder for `codings` in pieces of `piece` bytes; the bytes out.
    private func decode(_ codings: String, _ coded: [UInt8], piece: Int) -> (ContentDecoder.Outcome, [UInt8], Bool)? {
        guard let d = ContentDecoder(codings: codings) else { return nil }
        var out: [UInt8] = []
        var at = 0
        var outcome = ContentDecoder.Outcome.decoded
        while at < coded.count && outcome == .decoded {
            let n = min(piece, coded.count - at)
            outcome = coded[at..<at + n].withUnsafeBytes { chunk in
                d.decode(chunk.baseAddress!, n) { p, count in
                    out += UnsafeRawBufferPointer(start: p, count: count)
                    return true
                }
            }
            at += n
        }
        return (outcome, out, d.complete)
    }

    func testGzipDecodesTheSameWhateverThePieceSize() throws {
        let text = Array(String(repeating: "content codings, removed by lunet. ", count: 3000).utf8)
        let coded = try gzip(text)
        for piece in [1, 7, 4096, coded.count] {
            let (outcome, out, complete) = try XCTUnwrap(decode("gzip", coded, piece: piece))
            XCTAssertEqual(outcome, .decoded, "pieces of \(piece)")
            XCTAssertEqual(out, text, "pieces of \(piece)")
            XCTAssertTrue(complete, "pieces of \(piece)")
        }
    }

    func testStackedCodingsAreUndoneLastFirst() throws {
        let text = Array("twice".utf8)
        let (outcome, out, complete) = try XCTUnwrap(decode("x-gzip, GZIP", try gzip(gzip(text)), piece: 5))
        XCTAssertEqual(outcome, .decoded)
        XCTAssertEqual(out, text)
        XCTAssertTrue(complete)
    }

    func testBytesNotInTheCodingAndAStreamCutShort() throws {
        let (outcome, _, _) = try XCTUnwrap(decode("gzip", Array("not gzip at all".utf8), piece: 100))
        XCTAssertEqual(outcome, .corrupt("gzip"))
        let coded = try gzip(Array(repeating: 65, count: 10000))
        let (cutOutcome, _, complete) = try XCTUnwrap(decode("gzip", Array(coded.dropLast(8)), piece: 100))
        XCTAssertEqual(cutOutcome, .decoded)
        XCTAssertFalse(complete, "the gzip trailer never came")
    }

    func testAStopFromTheReceiverEndsDecodingAtOnce() throws {
        let coded = try gzip(Array(repeating: 0, count: 1 << 20))
        let d = try XCTUnwrap(ContentDecoder(codings: "gzip"))
        var pieces = 0
        let outcome = coded.withUnsafeBytes { d.decode($0.baseAddress!, $0.count) { _, _ in pieces += 1; return false } }
        XCTAssertEqual(outcome, .stopped)
        XCTAssertEqual(pieces, 1, "no piece after the receiver said stop")
    }

    func testListsItDeclinesAreHandedThrough() {
        XCTAssertNil(ContentDecoder(codings: ""), "nothing to remove")
        XCTAssertNil(ContentDecoder(codings: "identity"), "identity is no coding")
        XCTAssertNil(ContentDecoder(codings: "x-custom, gzip"), "a coding lunet does not know")
        XCTAssertNil(ContentDecoder(codings: "gzip, gzip, gzip, gzip, gzip"), "more than four")
        XCTAssertNotNil(ContentDecoder(codings: "gzip;q=1, identity, br, zstd, deflate"))
    }
}
