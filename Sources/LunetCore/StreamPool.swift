import CLunetCurl
import Glibc

/// Long-lived connections on a multi handle of their own: WebSockets (libcurl connects, lunet
/// speaks the protocol over the socket) and event streams. The loop's main multi handle caps
/// connections per host and in all (http.limits), and a stream holds its connection for as long
/// as it lives: on the main pool 64 open websockets to one host took every slot, every request
/// to that host then waited for ever, and the 65th websocket failed. This pool has no cap:
/// streams are not requests, and how many to keep open is the script's choice.
///
/// The main pool is driven with curl_multi_perform and waited on in curl_multi_poll; this one
/// with curl_multi_socket_action: libcurl says which sockets to watch (the socket callback) and
/// when to call it back (the timer callback), and the loop puts those sockets in its one poll
/// (EventLoop+Streams.swift). Nothing here runs off the loop thread.
final class StreamPool {
    let multi: UnsafeMutableRawPointer
    /// The sockets libcurl wants watched, with what for (CURL_POLL_IN, _OUT or _INOUT).
    private(set) var sockets: [Int32: Int32] = [:]
    /// When libcurl wants to be called for its timeouts (nil: it has no timer set).
    private(set) var deadline: Double?
    /// Runs when `sockets` changes: the loop's cached wait list is stale then.
    var onSocketsChanged: (() -> Void)?

    init() {
        multi = lunet_curl_multi_init()!
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = lunet_multi_setopt_socketfunction(multi, streamSocketCallback)
        _ = lunet_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = lunet_multi_setopt_timerfunction(multi, streamTimerCallback)
        _ = lunet_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
    }

    /// The loop has taken every handle out first.
    deinit { lunet_curl_multi_cleanup(multi) }

    fileprivate func socketChanged(_ fd: Int32, _ what: Int32) {
        if what == lunet_poll_remove() { sockets.removeValue(forKey: fd) } else { sockets[fd] = what }
        onSocketsChanged?()
    }

    fileprivate func timerChanged(_ milliseconds: Int) {
        // 0 means "as soon as you can", never from inside this callback: the next turn does it.
        deadline = milliseconds < 0 ? nil : EventLoop.now() + Double(milliseconds) / 1000
    }

    /// Tells libcurl that `fd` is ready for what `mask` says (CURL_CSELECT_IN, _OUT, _ERR).
    func act(_ fd: Int32, _ mask: Int32) {
        var running: Int32 = 0
        _ = lunet_curl_multi_socket_action(multi, fd, mask, &running)
    }

    /// Runs libcurl's timeouts when they are due.
    func runTimeoutsIfDue(now: Double) {
        guard let d = deadline, d <= now else { return }
        deadline = nil
        act(-1, 0)   // CURL_SOCKET_TIMEOUT
    }

    /// How long the loop may wait before `runTimeoutsIfDue` has something to do (ms, or nil).
    func milliseconds(untilDeadlineFrom now: Double) -> Int32? {
        deadline.map { Int32(max(0, min(Double(Int32.max), (($0 - now) * 1000).rounded(.up)))) }
    }
}

private let streamSocketCallback: curl_socket_callback = { _, socket, what, user, _ in
    Unmanaged<StreamPool>.fromOpaque(user!).takeUnretainedValue().socketChanged(Int32(socket), what)
    return 0
}

private let streamTimerCallback: curl_multi_timer_callback = { _, milliseconds, user in
    Unmanaged<StreamPool>.fromOpaque(user!).takeUnretainedValue().timerChanged(milliseconds)
    return 0
}
