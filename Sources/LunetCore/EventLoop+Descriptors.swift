import CLunetCurl

/// Descriptors the loop waits on besides curl's sockets: stdin for the REPL, a signalfd, a
/// WebSocket's socket, the stream pool's sockets.
extension EventLoop {
    public func watch(_ fd: Int32, onReadable: @escaping () -> Void) { watchers[fd] = onReadable; waitList = nil }
    public func unwatch(_ fd: Int32) {
        watchers.removeValue(forKey: fd)
        writeWatchers.removeValue(forKey: fd)
        waitList = nil
    }
    /// Calls `fn` once, when `fd` can be written.
    public func whenWritable(_ fd: Int32, _ fn: @escaping () -> Void) { writeWatchers[fd] = fn; waitList = nil }

    func currentWaitList() -> [curl_waitfd] {
        if let waitList { return waitList }
        var list = [curl_waitfd(fd: wakeFD, events: Int16(CURL_WAIT_POLLIN), revents: 0)]
        for fd in Set(watchers.keys).union(writeWatchers.keys) {
            let events = (watchers[fd] != nil ? CURL_WAIT_POLLIN : 0) | (writeWatchers[fd] != nil ? CURL_WAIT_POLLOUT : 0)
            list.append(curl_waitfd(fd: fd, events: Int16(events), revents: 0))
        }
        // The stream pool's sockets come last: poll's answers for them go to libcurl.
        streamEntriesStart = list.count
        appendStreamSockets(to: &list)
        waitList = list
        return list
    }
}
