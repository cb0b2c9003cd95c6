/// WebSocket frames (RFC 6455 §5): the client's encoder (always masked, §5.3) and an incremental
/// decoder of the server's frames that refuses what the RFC forbids, with the close code to
/// send. No I/O: bytes in, frames or a protocol error out.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA

    var isControl: Bool { rawValue & 0x8 != 0 }
}

public struct WebSocketFrame: Equatable, Sendable {
    public var fin: Bool
    public var opcode: WebSocketOpcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The frame as a client sends it: masked with `mask` (4 random bytes, §5.3).
    public func encoded(mask: [UInt8]) -> [UInt8] {
        precondition(mask.count == 4, "a masking key is 4 bytes")
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode.rawValue]
        out.reserveCapacity(payload.count + 14)
        let n = payload.count
        if n < 126 {
            out.append(0x80 | UInt8(n))
        } else if n <= 0xFFFF {
            out += [0x80 | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            out.append(0x80 | 127)
            for i in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: UInt64(n) >> (UInt64(i) * 8))) }
        }
        out += mask
        let start = out.count
        out += payload
        out.withUnsafeMutableBufferPointer { b in
            for i in 0..<n { b[start + i] ^= mask[i & 3] }
        }
        return out
    }
}

/// Why the connection must fail, and the close code that says so (§7.4.1).
public struct WebSocketProtocolError: Error, Equatable, CustomStringConvertible, Sendable {
    public let closeCode: UInt16
    public let message: String

    static func protocolError(_ m: String) -> Self { Self(closeCode: 1002, message: m) }
    static func invalidData(_ m: String) -> Self { Self(closeCode: 1007, message: m) }
    static func tooBig(_ m: String) -> Self { Self(closeCode: 1009, message: m) }

    public var description: String { "\(message) (close code \(closeCode))" }
}

/// Reads server frames from bytes as they arrive.
public struct WebSocketFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// The largest payload accepted in one frame (a message's limit applies to each frame too).
    public let maxPayload: Int

    public init(maxPayload: Int) { self.maxPayload = maxPayload }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 && start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    /// The next whole frame, nil when more bytes are needed, or the violation.
    public mutating func next() -> Result<WebSocketFrame?, WebSocketProtocolError> {
        let available = buffer.count - start
        guard available >= 2 else { return .success(nil) }
        let b0 = buffer[start], b1 = buffer[start + 1]
        if b0 & 0x70 != 0 { return .failure(.protocolError("a reserved bit is set, and no extension was agreed")) }
        guard let opcode = WebSocketOpcode(rawValue: b0 & 0x0F) else {
            return .failure(.protocolError("reserved opcode \(b0 & 0x0F)"))
        }
        let fin = b0 & 0x80 != 0
        if b1 & 0x80 != 0 { return .failure(.protocolError("the server masked a frame (servers must not, RFC 6455 §5.1)")) }
        var length = UInt64(b1 & 0x7F)
        var header = 2
        if length == 126 {
            guard available >= 4 else { return .success(nil) }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            header = 4
        } else if length == 127 {
            guard available >= 10 else { return .success(nil) }
            length = 0
            for i in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + i]) }
            if length >> 63 != 0 { return .failure(.protocolError("a frame length of 2^63 or more")) }
            header = 10
        }
        if opcode.isControl {
            if !fin { return .failure(.protocolError("a fragmented control frame")) }
            if length > 125 { return .failure(.protocolError("a control frame of more than 125 bytes")) }
        }
        if length > UInt64(maxPayload) {
            return .failure(.tooBig("a frame of \(length) bytes, more than the \(maxPayload) allowed"))
        }
        let total = header + Int(length)
        guard available >= total else { return .success(nil) }
        let payload = Array(buffer[(start + header)..<(start + total)])
        start += total
        if start > 65536 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return .success(WebSocketFrame(fin: fin, opcode: opcode, payload: payload))
    }
}
