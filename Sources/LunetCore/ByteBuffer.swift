import Glibc

/// A growable block of bytes on the C heap, with a stable address. Request bodies are handed to
/// libcurl by pointer and response bodies are appended to from curl's write callback, so the
/// storage must not move under them (a Swift Array's storage may) and must not be copied twice.
public final class ByteBuffer {
    public private(set) var base: UnsafeMutablePointer<UInt8>?
    public private(set) var count: Int = 0
    public private(set) var capacity: Int = 0

    public init(capacity: Int = 0) {
        if capacity > 0 { reserve(capacity) }
    }

    public convenience init(copying pointer: UnsafeRawPointer, count: Int) {
        self.init(capacity: count)
        append(pointer, count)
    }

    public convenience init(_ string: String) {
        var s = string
        let n = s.utf8.count
        self.init(capacity: n)
        s.withUTF8 { append($0.baseAddress!, n) }
    }

    deinit { free(base) }

    public func reserve(_ needed: Int) {
        guard needed > capacity else { return }
        let newCapacity = Swift.max(needed, capacity * 2, 256)
        guard let grown = realloc(base, newCapacity) else {
            print("lunet: out of memory (a body of \(newCapacity) bytes)")
            abort()
        }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    public func append(_ pointer: UnsafeRawPointer, _ n: Int) {
        guard n > 0 else { return }
        reserve(count + n)
        (base! + count).update(from: pointer.assumingMemoryBound(to: UInt8.self), count: n)
        count += n
    }

    /// `n` bytes and a line feed after them: a header line as kept (one growth check, not two).
    public func appendLine(_ pointer: UnsafeRawPointer, _ n: Int) {
        reserve(count + n + 1)
        if n > 0 { (base! + count).update(from: pointer.assumingMemoryBound(to: UInt8.self), count: n) }
        base![count + n] = 0x0A
        count += n + 1
    }

    public func removeAll() { count = 0 }

    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    public var string: String { String(decoding: bytes, as: UTF8.self) }
}
