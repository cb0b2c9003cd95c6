import LunetCore

extension HTTPResponse.Timings {
    /// What `lunet load` records of a request's timings, as k6 names its phases, in
    /// microseconds: the whole duration; blocked (the name lookup); connecting (after the
    /// lookup, to the connection); TLS (after the connection, to the handshake's end); waiting
    /// (from the request being ready to go, after TLS or else the connection, to the first byte
    /// back: sending and the server's time); receiving (from the first byte to the last). A
    /// phase whose end is before its start (libcurl reports 0 for a step it did not take, such
    /// as TLS on plain HTTP or everything before the request on a reused connection) is 0.
    public var loadPhases: (duration: Double, blocked: Double, connecting: Double, tls: Double, waiting: Double, receiving: Double) {
        let ready = tls > 0 ? tls : connect
        return (total * 1e6, dns * 1e6, connect > dns ? (connect - dns) * 1e6 : 0, tls > connect ? (tls - connect) * 1e6 : 0,
                ttfb > ready ? (ttfb - ready) * 1e6 : 0, total > ttfb ? (total - ttfb) * 1e6 : 0)
    }
}
