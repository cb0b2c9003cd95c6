/// The client's side of the WebSocket opening handshake (RFC 6455 §4.1), as values: the request
/// to send and the check of the server's answer. No I/O.
public struct WebSocketHandshake: Sendable {
    /// The GUID every server appends to the key (RFC 6455 §1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    public let key: String
    public let protocols: [String]

    /// `nonce`: 16 random bytes (the caller's randomness: tests pass fixed ones).
    public init(nonce: [UInt8], protocols: [String] = []) {
        precondition(nonce.count == 16, "a WebSocket key is 16 random bytes")
        key = Base64.encode(nonce)
        self.protocols = protocols
    }

    /// What the server must answer in Sec-WebSocket-Accept for `key`.
    public static func accept(for key: String) -> String {
        Base64.encode(SHA1.digest(Array((key + guid).utf8)))
    }

    /// The request head: `target` is the path and query, `host` the Host field's value
    /// (host[:port]); `extra` are the caller's own header lines (session headers, auth, cookies).
    public func request(target: String, host: String, extra: [(String, String)] = []) -> String {
        var lines = ["GET \(target) HTTP/1.1", "Host: \(host)", "Upgrade: websocket", "Connection: Upgrade",
                     "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13"]
        if !protocols.isEmpty { lines.append("Sec-WebSocket-Protocol: " + protocols.joined(separator: ", ")) }
        for (name, value) in extra { lines.append("\(name): \(value)") }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// The answer's verdict: the subprotocol the server chose (nil for none), or why the
    /// connection must fail (§4.1, the client's checks of the server's handshake).
    public func check(status: Int, headers: HTTPHeaders) -> Result<String?, WebSocketHandshakeError> {
        guard status == 101 else { return .failure(.status(status)) }
        guard headers["Upgrade"]?.lowercased().trimmed == "websocket" else {
            return .failure(.field("Upgrade", headers["Upgrade"]))
        }
        let connection = (headers["Connection"] ?? "").lowercased().split(separator: ",").map { String($0).trimmed }
        guard connection.contains("upgrade") else { return .failure(.field("Connection", headers["Connection"])) }
        guard headers["Sec-WebSocket-Accept"]?.trimmed == Self.accept(for: key) else {
            return .failure(.field("Sec-WebSocket-Accept", headers["Sec-WebSocket-Accept"]))
        }
        // No extension was offered, so none may be in use.
        if let ext = headers["Sec-WebSocket-Extensions"], !ext.trimmed.isEmpty { return .failure(.field("Sec-WebSocket-Extensions", ext)) }
        guard let chosen = headers["Sec-WebSocket-Protocol"]?.trimmed, !chosen.isEmpty else { return .success(nil) }
        guard protocols.contains(chosen) else { return .failure(.field("Sec-WebSocket-Protocol", chosen)) }
        return .success(chosen)
    }
}

public enum WebSocketHandshakeError: Error, Equatable, CustomStringConvertible, Sendable {
    case status(Int)
    case field(String, String?)

    public var description: String {
        switch self {
        case .status(let s): "the server answered \(s), not 101 Switching Protocols"
        case .field(let name, let value?): "the server's \(name) is not acceptable: \(value)"
        case .field(let name, nil): "the server sent no \(name)"
        }
    }
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }
}
