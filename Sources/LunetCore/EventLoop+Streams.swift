import CLunetCurl

/// The loop's side of the stream pool (StreamPool.swift): its sockets join the one poll, what
/// poll says of them goes to libcurl, and its completed transfers are finished with the rest.
extension EventLoop {
    /// The stream pool, made on first use (libcurl is loaded by then: connectionPool ran).
    func streamPool() -> StreamPool {
        if let streams { return streams }
        let made = StreamPool()
        made.onSocketsChanged = { [unowned self] in self.waitList = nil }
        streams = made
        return made
    }

    func appendStreamSockets(to list: inout [curl_waitfd]) {
        guard let streams else { return }
        let pollIn = lunet_poll_in(), pollOut = lunet_poll_out()
        for (fd, what) in streams.sockets {
            let events = (what & pollIn != 0 ? CURL_WAIT_POLLIN : 0) | (what & pollOut != 0 ? CURL_WAIT_POLLOUT : 0)
            list.append(curl_waitfd(fd: fd, events: Int16(events), revents: 0))
        }
    }

    /// Hands libcurl what poll found on the stream pool's sockets.
    func dispatchStreamSockets(_ entries: ArraySlice<curl_waitfd>) {
        guard let streams, !entries.isEmpty else { return }
        for e in entries where e.revents != 0 {
            var mask: Int32 = 0
            if e.revents & Int16(CURL_WAIT_POLLIN) != 0 { mask |= lunet_cselect_in() }
            if e.revents & Int16(CURL_WAIT_POLLOUT) != 0 { mask |= lunet_cselect_out() }
            if e.revents & Int16(CURL_WAIT_POLLPRI) != 0 { mask |= lunet_cselect_in() }
            streams.act(e.fd, mask)
        }
    }
}
