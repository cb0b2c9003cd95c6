import CLunetCurl

/// Handles that only connect (CURLOPT_CONNECT_ONLY): a WebSocket's connection, made by libcurl
/// on the stream pool and then spoken over by lunet.
extension EventLoop {
    /// Adds `handle`, configured with CURLOPT_CONNECT_ONLY, to the multi handle; `done` gets
    /// curl's result once connected (TCP, TLS, proxy). The handle then stays in the multi handle
    /// until `disconnect`. Fails at once (on a later turn) when libcurl cannot be loaded.
    public func connect(_ handle: UnsafeMutableRawPointer, done: @escaping (CURLcode) -> Void) {
        assertOwner()
        guard case .success = connectionPool() else {
            addTimer(after: 0) { done(CURLE_FAILED_INIT) }
            return
        }
        // A websocket lives long: on the stream pool, which no per-host cap limits (StreamPool).
        connecting[UInt(bitPattern: Int(bitPattern: handle))] = done
        lunet_curl_multi_add_handle(streamPool().multi, handle)
    }

    /// Takes a connect-only handle out of the multi handle and frees it (closing its connection).
    public func disconnect(_ handle: UnsafeMutableRawPointer) {
        assertOwner()
        connecting.removeValue(forKey: UInt(bitPattern: Int(bitPattern: handle)))
        if let streams { lunet_curl_multi_remove_handle(streams.multi, handle) }
        lunet_curl_easy_cleanup(handle)
    }

    /// Opens libcurl (if it is not yet) and gives a new easy handle, or the error.
    public func newHandle() -> Result<UnsafeMutableRawPointer, LunetError> {
        connectionPool().map { _ in lunet_curl_easy_init()! }
    }
}
