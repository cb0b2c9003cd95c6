import CLunetCurl
import CLunetLinux
import Glibc

/// HTTP/2 with prior knowledge (h2c: gRPC without TLS) has no handshake libcurl waits for: a
/// server that accepts the connection and never speaks (no SETTINGS) held a call without a
/// deadline for ever. An HTTP/2 server sends its SETTINGS as soon as the connection opens, so
/// a connection that has received nothing by the connect timeout (else 20 s, gRPC's minimum
/// connect timeout) is not one: the transfer fails as a connect timeout would, and the socket is
/// shut down, so that the transfers sharing the connection end too. The kernel counts what a
/// socket received (TCP_INFO); libcurl names the socket it opens for a transfer
/// (CURLOPT_SOCKOPTFUNCTION: CURLINFO_ACTIVESOCKET says nothing until a transfer is done).
extension Transfer {
    static let firstBytesDefault = 20.0

    func armFirstBytesWatch(on loop: EventLoop) {
        guard firstBytesTimer == nil, state != .finished, request.options.httpVersion == .http2PriorKnowledge else { return }
        let limit = request.options.connectTimeout.flatMap { $0 > 0 ? $0 : nil } ?? Self.firstBytesDefault
        firstBytesTimer = loop.addTimer(after: limit) { [weak self, unowned loop] in
            guard let self, self.state != .finished else { return }
            self.firstBytesTimer = nil
            // No socket of its own (one shared, or still connecting: libcurl's connect timeout
            // has that), or bytes came: a server that speaks, however slowly it answers.
            let fd = self.openedSocket
            guard self.machine.silentServer(ownSocket: fd >= 0, received: { Int(lunet_socket_bytes_received(fd)) }) else { return }
            _ = shutdown(fd, Int32(SHUT_RDWR))
            let words = "the server sent nothing in \(Self.seconds(limit)) s: no HTTP/2 SETTINGS (is it an HTTP/2 server without TLS?)"
            loop.abort(self, LunetError(.timeout, words, url: self.currentURL))
        }
    }

    func disarmFirstBytesWatch() {
        guard let id = firstBytesTimer else { return }
        firstBytesTimer = nil
        loop?.cancelTimer(id)
    }

    private static func seconds(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
}

/// CURLOPT_SOCKOPTFUNCTION: a socket libcurl opened for the handle's transfer, before it connects.
let transferSocketCallback: curl_sockopt_callback = { user, fd, _ in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef { handle in
        handle.transfer?._withUnsafeGuaranteedRef { $0.openedSocket = Int32(fd) }
    }
    return 0   // CURL_SOCKOPT_OK
}
