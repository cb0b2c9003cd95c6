import XCTest
@testable import LunetLua

/// The host's decoder of the text lunet-luac stores lua/ files as: seven bytes of a file in eight
/// bytes below 0x80, seven bits each, low bits first. (HostLifecycleTests decodes every embedded
/// file, as lunet-luac encoded it, and compares it with lua/ on disk.)
final class EmbeddedTextTests: XCTestCase {
    /// Seven-in-eight, written out bit by bit (the specification, not lunet-luac's loop).
    private func text(_ bytes: [UInt8]) -> [UInt8] {
        var bits: [UInt8] = []
        for b in bytes { for k in 0..<8 { bits.append(b >> k & 1) } }
        while bits.count % 56 != 0 { bits.append(0) }
        return stride(from: 0, to: bits.count, by: 7).map { at in
            (0..<7).reduce(UInt8(0)) { $0 | bits[at + $1] << $1 }
        }
    }

    private func decode(_ text: [UInt8], count: Int) -> [UInt8] {
        text.withUnsafeBufferPointer { EmbeddedText.decode($0, count: count) }
    }

    func testEveryByteValueComesBack() {
        let bytes = (0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) }
        let t = text(bytes)
        XCTAssertEqual(t.count, (512 + 6) / 7 * 8, "eight bytes of text for every seven")
        XCTAssertTrue(t.allSatisfy { $0 < 0x80 }, "one UTF-8 byte each in a string literal")
        XCTAssertEqual(decode(t, count: bytes.count), bytes)
    }

    func testEverySizeAroundAGroupComesBackWithoutThePadding() {
        for n in 0...23 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: 0xF1 &* ($0 + 3)) }
            XCTAssertEqual(decode(text(bytes), count: n), bytes, "\(n) bytes")
        }
    }

    func testAllOnesAndAllZerosKeepTheirBits() {
        XCTAssertEqual(text([UInt8](repeating: 0xFF, count: 7)), [UInt8](repeating: 0x7F, count: 8))
        XCTAssertEqual(decode([UInt8](repeating: 0x7F, count: 8), count: 7), [UInt8](repeating: 0xFF, count: 7))
        XCTAssertEqual(decode([UInt8](repeating: 0, count: 16), count: 14), [UInt8](repeating: 0, count: 14))
    }
}

/// EmbeddedText.release: the pages wholly inside a text leave the process's resident set and
/// read back the same; the pages it shares with other data stay.
final class EmbeddedTextReleaseTests: XCTestCase {
    private func resident(_ p: UnsafeRawPointer) -> Bool {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let fd = open("/proc/self/pagemap", O_RDONLY)
        defer { close(fd) }
        var entry: UInt64 = 0
        let read = pread(fd, &entry, 8, off_t(Int(bitPattern: p) / page * 8))
        XCTAssertEqual(read, 8, "pagemap entry")
        return entry >> 63 == 1
    }

    func testPagesWhollyInsideGoAndReadBackTheSameTheEdgesStay() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let path = NSTemporaryDirectory() + "embedded-release-\(getpid())"
        let bytes = (0..<(8 * page)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "the file to map")
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        // Mapped as the executable's data is: private and writable, read only.
        let base = try XCTUnwrap(mmap(nil, bytes.count, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0))
        XCTAssertNotEqual(base, MAP_FAILED)
        defer { munmap(base, bytes.count) }
        var sum = 0
        for i in stride(from: 0, to: bytes.count, by: page) { sum &+= Int(base.load(fromByteOffset: i, as: UInt8.self)) }
        XCTAssertTrue((0..<8).allSatisfy { resident(base + $0 * page) }, "every page read in")
        // A text that starts inside page 1 and ends inside page 6: pages 2-5 lie wholly inside.
        EmbeddedText.release(UnsafeRawBufferPointer(start: base + page + 100, count: 5 * page))
        XCTAssertEqual((0..<8).map { resident(base + $0 * page) }, [true, true, false, false, false, false, true, true])
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: base, count: bytes.count)), bytes, "read back from the file")
        withExtendedLifetime(sum) {}
    }
}
