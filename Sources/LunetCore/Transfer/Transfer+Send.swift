import CLunetCurl
import Glibc

/// A request body given piece by piece while the transfer runs (HTTPRequest.Body.stream):
/// gRPC's client-streaming and bidirectional calls send each message as the script makes it.
/// curl reads the pieces through the read callback; with none waiting and the sender not done,
/// the callback pauses the sending side (CURL_READFUNC_PAUSE), and the next piece (or the end)
/// resumes it. The length is not known: HTTP/1.1 sends it chunked, HTTP/2 as DATA frames.
/// Everything here runs on the loop thread.
extension Transfer {
    func configureStreamedBody(_ h: UnsafeMutableRawPointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = lunet_easy_setopt_read(h, CURLOPT_READFUNCTION, transferReadCallback)
        _ = lunet_easy_setopt_ptr(h, CURLOPT_READDATA, me)
        _ = lunet_easy_setopt_long(h, CURLOPT_POST, 1)
        _ = lunet_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, -1)
    }

    /// The next piece of the body; sent when curl can.
    public func sendPiece(_ piece: ByteBuffer) {
        guard !machine.sendClosed, piece.count > 0 else { return }
        sendQueue.append(piece)
        queuedToSend += piece.count
        resume(machine.pieceGiven())
    }

    /// No more pieces: the body ends once curl has sent what is queued.
    public func closeSending() {
        resume(machine.sendingEnds())
    }

    /// Only the sending side resumes: the machine's mask keeps a receiving side paused for a
    /// slow consumer paused.
    private func resume(_ mask: Int32?) {
        guard let mask, let h = easy else { return }
        _ = lunet_curl_easy_pause(h, mask)
    }

    /// curl's read callback for a streamed body: queued bytes, the end, or a pause.
    func readStream(_ buffer: UnsafeMutablePointer<CChar>, _ n: Int) -> Int {
        var written = 0
        while written < n, let first = sendQueue.first {
            let k = Swift.min(n - written, first.count - sendOffset)
            if k > 0, let base = first.base { memcpy(buffer + written, base + sendOffset, k) }
            written += k
            sendOffset += k
            queuedToSend -= k
            if sendOffset == first.count { sendQueue.removeFirst(); sendOffset = 0 }
        }
        switch machine.sendRead(copied: written) {
        case .give(let count): return count
        case .pause: return Int(CURL_READFUNC_PAUSE)
        }
    }
}
