/// Frames into messages (RFC 6455 §5.4-5.5): fragments reassembled, control frames allowed
/// between them, text validated as UTF-8 (§8.1), the message size limited, and the closing
/// frame's code and reason checked (§7.4). A state machine over values: no I/O.
public struct WebSocketMessageAssembler: Sendable {
    public enum Event: Equatable, Sendable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// The server's closing frame: its code (nil when it sent none) and reason.
        case close(code: UInt16?, reason: String)
    }

    public let maxMessage: Int
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketOpcode?
    /// The server's close frame has arrived: nothing may follow it.
    public private(set) var receivedClose = false

    public init(maxMessage: Int) { self.maxMessage = maxMessage }

    public mutating func receive(_ frame: WebSocketFrame) -> Result<Event?, WebSocketProtocolError> {
        if receivedClose { return .failure(.protocolError("a frame after the server's close frame")) }
        switch frame.opcode {
        case .ping: return .success(.ping(frame.payload))
        case .pong: return .success(.pong(frame.payload))
        case .close:
            receivedClose = true
            return Self.closing(frame.payload).map { .close(code: $0.code, reason: $0.reason) }
        case .text, .binary:
            if fragmentOpcode != nil { return .failure(.protocolError("a new message began before the last one's final fragment")) }
            if frame.fin { return message(frame.opcode, frame.payload) }
            fragmentOpcode = frame.opcode
            fragments = frame.payload
            return .success(nil)
        case .continuation:
            guard let opcode = fragmentOpcode else { return .failure(.protocolError("a continuation frame without a message to continue")) }
            if fragments.count + frame.payload.count > maxMessage {
                return .failure(.tooBig("a message of more than \(maxMessage) bytes"))
            }
            fragments += frame.payload
            guard frame.fin else { return .success(nil) }
            let whole = fragments
            fragments = []
            fragmentOpcode = nil
            return message(opcode, whole)
        }
    }

    private func message(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> Result<Event?, WebSocketProtocolError> {
        if payload.count > maxMessage { return .failure(.tooBig("a message of more than \(maxMessage) bytes")) }
        guard opcode == .text else { return .success(.binary(payload)) }
        guard let text = String(validating: payload, as: UTF8.self) else {
            return .failure(.invalidData("a text message that is not valid UTF-8"))
        }
        return .success(.text(text))
    }

    /// A close frame's payload: empty, or a 2-byte code and a UTF-8 reason.
    static func closing(_ payload: [UInt8]) -> Result<(code: UInt16?, reason: String), WebSocketProtocolError> {
        if payload.isEmpty { return .success((nil, "")) }
        if payload.count == 1 { return .failure(.protocolError("a close frame with a one-byte payload")) }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard isValidCloseCode(code) else { return .failure(.protocolError("close code \(code) may not be sent")) }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            return .failure(.invalidData("a close reason that is not valid UTF-8"))
        }
        return .success((code, reason))
    }

    /// Codes an endpoint may send (§7.4.1-7.4.2 and the IANA registry): 1000-1003, 1007-1014,
    /// and 3000-4999 for libraries and applications. 1004-1006 and 1015 are reserved for
    /// reporting, never for the wire.
    public static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The payload of a close frame the client sends: its code and reason (at most 123 bytes
    /// of UTF-8, so that the frame fits a control frame's 125).
    public static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var bytes = [UInt8(code >> 8), UInt8(code & 0xFF)]
        var r = Array(reason.utf8)
        if r.count > 123 {
            r = Array(r.prefix(123))
            // Cut at a character boundary: never send a reason that is not UTF-8.
            while !r.isEmpty && String(validating: r, as: UTF8.self) == nil { r.removeLast() }
        }
        bytes += r
        return bytes
    }
}
