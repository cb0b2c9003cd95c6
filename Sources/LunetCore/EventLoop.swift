import CLunetCurl
import CLunetLinux
import Glibc

/// The one loop. It owns the curl multi handle, the timers and every transfer in flight, and it
/// belongs to the thread that made it: nothing else may touch it (checked in debug builds).
///
/// libcurl is opened on first network use (CLunetCurl's curl_loader.c): until a transfer starts the
/// loop has no multi handle and waits with poll(2) on its own descriptors (timers, stdin, a
/// wakeup eventfd), so a program that never sends a request never loads libcurl.
///
/// One turn: run the host's due work (continuations, coroutine resumes) -> wait in
/// curl_multi_poll (for sockets, timers, extra descriptors such as stdin, or a wakeup) ->
/// let curl perform -> finish the transfers that completed -> fire due timers -> run what other
/// threads handed in.
public final class EventLoop {
    /// Made with the first transfer (see `connectionPool`).
    var multi: UnsafeMutableRawPointer?
    /// Long-lived connections (websockets, event streams), on a multi handle of their own with
    /// no connection caps; made with the first one (EventLoop+Streams.swift).
    var streams: StreamPool?
    /// Written by `submit` from other threads; the loop waits on it beside its sockets.
    let wakeFD: Int32
    private let owner = pthread_self()
    private var running = SlotTable<Transfer>()           // each under its Transfer.runningKey
    /// A timer's payload runs with `true` when it fires, `false` when the loop drops it unfired.
    var timers = TimerHeap<(Bool) -> Void>()
    /// Timers that do not keep the loop running by themselves (a poll of something no one is
    /// waiting for: net.on_change's): while only these are left, the loop is idle.
    var backgroundTimers: Set<UInt64> = []
    /// Easy handles between transfers, idle or configured for a profile (HandlePool.swift).
    private var handles = HandlePool()
    /// Transfers started on a configured handle (for tests and diagnostics).
    private(set) var configuredHandleReuses = 0
    /// Of those, the ones whose handle already had their URL and header list (no option set;
    /// for tests and diagnostics).
    var handlesReusedAsTheyWere = 0
    /// The URL the last transfer was started with, parsed by libcurl (ParsedURL.swift): the next
    /// transfer to the same URL hands libcurl this instead of parsing the text again.
    private var lastParsedURL: ParsedURL?
    /// The header list the last transfer was started with: the next one with the same lines
    /// shares it (CurlHeaderList.swift).
    var lastHeaderList: CurlHeaderList?
    /// The descriptors poll waits on besides curl's: the wakeup descriptor first, then the
    /// watched ones. Made again only when the watched descriptors change, not every turn.
    var waitList: [curl_waitfd]?
    /// Where the stream pool's sockets start in the wait list (EventLoop+Streams.swift).
    var streamEntriesStart = 1

    var watchers: [Int32: () -> Void] = [:]
    /// One-shot: called once when the descriptor can be written (a send that would block).
    var writeWatchers: [Int32: () -> Void] = [:]
    /// Handles that only connected (CURLOPT_CONNECT_ONLY, a WebSocket's connection): they stay
    /// in the multi handle while their owner uses them, as libcurl requires for
    /// curl_easy_send/recv, and are not transfers.
    var connecting: [UInt: (CURLcode) -> Void] = [:]
    /// Things that will produce events later (open WebSockets): the loop is not idle while any is.
    public var holds = 0
    private let inbox = Inbox()
    private var addedSinceLastPerform = false
    /// Transfers with progress or chunks waiting for delivery this turn.
    private var eventful: [Transfer] = []

    func noteEventful(_ t: Transfer) { eventful.append(t) }

    /// Transfers that ended while their events consumer was busy: their completion waits for
    /// it (Transfer.finish). Listed so that a host that closes can cancel them too.
    private var waitingForConsumer: [ObjectIdentifier: Transfer] = [:]
    func noteWaitingForConsumer(_ t: Transfer) { waitingForConsumer[ObjectIdentifier(t)] = t }
    func noteConsumerDone(_ t: Transfer) { waitingForConsumer.removeValue(forKey: ObjectIdentifier(t)) }

    private func deliverEvents() {
        guard !eventful.isEmpty else { return }
        let list = eventful
        eventful.removeAll(keepingCapacity: true)
        for t in list { t.deliverEvents() }
    }

    /// The host's work for the start of each turn (it drains the Lua run queue).
    public var runDueWorkHandler: (() -> Void)?
    /// Set by the host when it queues work, so that the loop does not block before running it.
    public var hasDueWork = false

    public init() {
        wakeFD = lunet_wakeup_fd()
    }

    deinit {
        if let streams {
            for t in running.all where t.longLived {
                if let h = t.handle { lunet_curl_multi_remove_handle(streams.multi, h.raw); h.cleanup(); t.handle = nil }
            }
            self.streams = nil
        }
        if let multi {
            for t in running.all {
                if let h = t.handle {
                    lunet_curl_multi_remove_handle(multi, h.raw)
                    h.cleanup()
                }
            }
            handles.closeAll()
            lunet_curl_multi_cleanup(multi)
        }
        if wakeFD >= 0 { close(wakeFD) }
    }

    /// The multi handle, made (and libcurl opened) on first use; the error naming what is
    /// missing when libcurl cannot be loaded.
    func connectionPool() -> Result<UnsafeMutableRawPointer, LunetError> {
        if let multi { return .success(multi) }
        if let problem = CurlGlobal.load() { return .failure(problem) }
        let m = lunet_curl_multi_init()!
        // Keep enough idle connections for a busy script to reuse them all.
        _ = lunet_multi_setopt_long(m, CURLMOPT_MAXCONNECTS, 256)
        multi = m
        applyConnectionLimits()
        return .success(m)
    }

    /// Connections open at once to one host, and in all: transfers past them wait inside libcurl
    /// for a connection to free up instead of opening more (10,000 requests at once used to open
    /// 10,000 connections, and the server dropped most of them). Every session on this loop
    /// shares the connections, so the limits are the loop's. 64 per host: curl's --parallel runs
    /// 50 at a time and wrk-style load tests 64; browsers keep 6 per host, but they pipeline
    /// pages, not a script's loop. 256 in all, as many as are kept for reuse.
    public var maxHostConnections = 64 { didSet { applyConnectionLimits() } }
    public var maxConnections = 256 { didSet { applyConnectionLimits() } }

    private func applyConnectionLimits() {
        guard let multi else { return }
        _ = lunet_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxHostConnections)
        _ = lunet_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxConnections)
    }

    @inline(__always)
    public func assertOwner() {
        assert(pthread_equal(pthread_self(), owner) != 0, "lunet: the event loop was touched from a thread that does not own it")
    }

    // MARK: time

    /// Monotonic seconds.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: transfers

    public var liveTransfers: Int { running.count }

    /// Starts `request`; `completion` runs on this loop's thread, exactly once.
    @discardableResult
    public func start(_ request: HTTPRequest, cookies: CookieJar? = nil, completion: @escaping Transfer.Completion) -> Transfer {
        start(Transfer(request: request, completion: completion), cookies: cookies)
    }

    /// Starts a transfer made earlier (one a session held back in its line).
    @discardableResult
    func start(_ t: Transfer, cookies: CookieJar?) -> Transfer {
        assertOwner()
        guard t.state == .created else { return t }
        return startConfigured(t, cookies: cookies)
    }

    /// Starts a transfer the caller made and set up (a file target, progress, chunks).
    @discardableResult
    public func startConfigured(_ t: Transfer, cookies: CookieJar? = nil) -> Transfer {
        assertOwner()
        guard t.state == .created else { return t }
        t.loop = self
        var multi: UnsafeMutableRawPointer
        switch connectionPool() {
        case .success(let m): multi = m
        case .failure(let problem): return fail(t, LunetError(problem.kind, problem.message, url: t.request.url))
        }
        if t.longLived { multi = streamPool().multi }
        // A transfer with a cookie jar has a profile that names the jar: its handle waits
        // configured, the jar's share attached, for the jar's next transfer (a load test's VU:
        // ~1 µs a request less than setting every option again). A jar that ends takes its
        // handles back first (forgetJar).
        let profile = handles.profile(for: t, jar: cookies.map(ObjectIdentifier.init))
        let (h, reusing) = handles.take(for: profile)
        if reusing { configuredHandleReuses += 1 }
        if let problem = t.configure(h, reusing: reusing, on: self) {
            h.transfer = nil
            handles.retire(h)   // a reused one still has its jar's share: detached, not left for the next
            t.handle = nil
            return fail(t, problem)
        }
        t.handleProfile = profile
        t.cookieJar = cookies
        // Only a timeout needs the start (a redirect hop's share of it): no clock read otherwise.
        if t.startedAt == 0, t.request.options.timeout != nil { t.startedAt = Self.now() }
        t.armDeadline(on: self)
        t.armFirstBytesWatch(on: self)
        if !reusing { cookies?.attach(h.raw) }   // a reused handle is attached to this very jar
        t.runningKey = running.insert(t)
        t.markRunning()
        lunet_curl_multi_add_handle(multi, h.raw)
        if !t.longLived { addedSinceLastPerform = true }   // the stream pool's timer says when (StreamPool)
        return t
    }

    /// A transfer that never starts: `completion` gets `error` on a later turn, as every other
    /// failure does, so callers see one order of events.
    public func fail(_ request: HTTPRequest, _ error: LunetError, completion: @escaping Transfer.Completion) -> Transfer {
        fail(Transfer(request: request, completion: completion), error)
    }

    /// A transfer answered without the network (a cache hit): `completion` gets `response` on a
    /// later turn.
    public func succeed(_ request: HTTPRequest, _ response: HTTPResponse, completion: @escaping Transfer.Completion) -> Transfer {
        let t = Transfer(request: request, completion: completion)
        t.markRunning()
        addTimer(after: 0) { t.finish(.success(response)) }
        return t
    }

    private func fail(_ t: Transfer, _ error: LunetError) -> Transfer {
        t.markRunning()
        addTimer(after: 0) { t.finish(.failure(error)) }
        return t
    }

    /// Stops `t` at once: its handle leaves curl now (its connection is closed or returned), and
    /// its completion gets kind `cancelled`.
    public func cancel(_ t: Transfer, reason: String = "the request was cancelled") {
        assertOwner()
        guard t.state != .finished else { return }
        if let h = t.handle { stopEarly(t, h) }
        t.finish(.failure(LunetError(.cancelled, reason, url: t.request.url)), force: true)
    }

    /// Stops `t` at once with `error` (its deadline passed): as `cancel`, with another outcome.
    func abort(_ t: Transfer, _ error: LunetError) {
        assertOwner()
        guard t.state != .finished else { return }
        if let h = t.handle { stopEarly(t, h) }
        t.finish(.failure(error), force: true)
    }

    /// Takes a transfer that has not ended out of curl, and its connection with it when no
    /// other transfer shares it and the loaded libcurl would not tell the server. The server
    /// must learn that no one waits for the answer: on HTTP/1.1 libcurl closes such a
    /// connection itself, but from 7.88 to 8.14 an HTTP/2 stream it stops is reset only in a
    /// frame that waits for the connection's next write (curl issue 17611,
    /// CurlQuirks.streamResetWaits), which never comes on a connection left idle: a gRPC server
    /// went on with a cancelled call. A connection other transfers still use stays open
    /// (libcurl closes it only when its last transfer leaves), and their frames carry the reset.
    /// From 8.15 libcurl sends the reset at once and the connection is kept for the next call.
    private func stopEarly(_ t: Transfer, _ h: EasyHandle) {
        if Self.streamResetWaits { _ = lunet_easy_setopt_long(h.raw, CURLOPT_FORBID_REUSE, 1) }
        release(t, h, keeping: nil)
    }
    private static let streamResetWaits = CurlQuirks.streamResetWaits(CurlQuirks.loadedVersion)

    /// Cancels every transfer in flight (a host that closes) and drops pending timers.
    public func cancelAll() {
        for t in running.all + Array(waitingForConsumer.values) { cancel(t, reason: "the host closed") }
        for entry in timers.removeAll() { entry.payload(false) }
    }

    /// `url` parsed by libcurl: the last transfer's when it is the same text, else parsed now
    /// (and kept for the next one). nil when libcurl does not parse it.
    func parsedURL(_ url: String) -> ParsedURL? {
        if let last = lastParsedURL, last.text == url { return last }
        let parsed = ParsedURL(url)
        if parsed != nil { lastParsedURL = parsed }
        return parsed
    }

    /// Takes `h` out of curl. With a profile (a transfer that completed and had one), the
    /// handle stays configured for the next transfer of that profile; otherwise it is reset.
    private func release(_ t: Transfer, _ handle: EasyHandle, keeping profile: Transfer.Profile?) {
        running.remove(t.runningKey)
        t.runningKey = -1
        t.handle = nil
        handle.transfer = nil
        let h = handle.raw
        if t.longLived, let streams { lunet_curl_multi_remove_handle(streams.multi, h) } else if let multi { lunet_curl_multi_remove_handle(multi, h) }
        handles.give(back: handle, keeping: profile)
    }

    /// A cookie jar that ends (CookieJar's deinit): the handles waiting configured with its
    /// share are reset, so that the share can be freed and no later jar at the same address
    /// is taken for it.
    func forgetJar(_ jar: ObjectIdentifier) { handles.forgetJar(jar) }

    private func finishCompleted() {
        if let multi { finishCompleted(on: multi) }
        if let streams { finishCompleted(on: streams.multi) }
    }

    private func finishCompleted(on multi: UnsafeMutableRawPointer) {
        var left: Int32 = 0
        while let msg = lunet_curl_multi_info_read(multi, &left) {
            guard lunet_msg_is_done(msg) != 0, let h = lunet_msg_handle(msg) else { continue }
            let code = lunet_msg_result(msg)
            if !connecting.isEmpty, let done = connecting.removeValue(forKey: UInt(bitPattern: Int(bitPattern: h))) {
                done(code)
                continue
            }
            // Every other handle in the multi handle is a running transfer's, whose CURLOPT_PRIVATE
            // is its EasyHandle (Transfer.configure), and that one's transfer is kept alive by
            // `running` until it is released.
            var owner: UnsafeMutableRawPointer?
            _ = lunet_easy_getinfo_ptr(h, CURLINFO_PRIVATE, &owner)
            guard let owner, let onHandle = Unmanaged<EasyHandle>.fromOpaque(owner).takeUnretainedValue().transfer,
                  let t = running[onHandle.takeUnretainedValue().runningKey], let handle = t.handle, handle.raw == h else { continue }
            let result: Result<HTTPResponse, LunetError>
            let verdict = t.verdict(for: code)
            if case .failed = verdict {
                result = .failure(t.error(for: code))
            } else if case .cut(let e) = verdict {
                result = .failure(e)
            } else if let hop = t.nextHop(on: h) {
                // A redirect the transfer follows itself (Transfer+Redirects.swift).
                release(t, handle, keeping: nil)
                switch hop {
                case .follow(let next, let elapsed):
                    t.rearm(for: next, elapsed: elapsed)
                    startConfigured(t, cookies: t.cookieJar)
                case .fail(let e):
                    t.finish(.failure(e))
                }
                continue
            } else {
                result = .success(t.response(from: h))
            }
            release(t, handle, keeping: code == CURLE_OK ? t.handleProfile : nil)
            t.finish(result)
        }
    }

    // MARK: other threads

    /// Hands `work` to the loop from any thread; it runs on the loop's thread on its next turn.
    public nonisolated func submit(_ work: @escaping @Sendable () -> Void) {
        inbox.push(work)
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: running

    /// Nothing can happen any more without new work from outside: no transfers, no timers, no
    /// due work, nothing handed in.
    public var isIdle: Bool {
        running.isEmpty && timers.count == backgroundTimers.count && inbox.isEmpty && !hasDueWork && holds == 0
            && connecting.isEmpty
    }

    /// Runs the host's queued work, if any.
    public func runDueWork() {
        while hasDueWork {
            hasDueWork = false
            runDueWorkHandler?()
        }
    }

    /// One turn: due work, then wait (unless `wait` is false or work is due) and dispatch what
    /// happened: sockets, completed transfers, timers, work from other threads.
    public func runOnce(wait: Bool = true) {
        assertOwner()
        runDueWork()
        // A transfer added since the last turn is started before waiting: curl only learns of
        // its socket in perform, so waiting first would cost a turn (and a poll) per request.
        if addedSinceLastPerform, let multi {
            addedSinceLastPerform = false
            var running: Int32 = 0
            lunet_curl_multi_perform(multi, &running)
            deliverEvents()
            finishCompleted()
        }
        var timeout: Int32 = 0
        if wait && !hasDueWork {
            timeout = 1000
            if let next = timers.nextDeadline() {
                timeout = Int32(max(0, min(1000, ((next - Self.now()) * 1000).rounded(.up))))
            }
            if let ms = streams?.milliseconds(untilDeadlineFrom: Self.now()) { timeout = min(timeout, ms) }
            if running.isEmpty && watchers.isEmpty && timers.isEmpty && inbox.isEmpty && connecting.isEmpty { timeout = 0 }
        }
        poll(timeout: timeout)
        streams?.runTimeoutsIfDue(now: Self.now())
        var still: Int32 = 0
        if let multi { lunet_curl_multi_perform(multi, &still) }
        deliverEvents()
        finishCompleted()
        fireDueTimers()
        for work in inbox.takeAll() { work() }
    }

    /// Waits for sockets (curl's), the watched descriptors and the wakeup descriptor, at most
    /// `timeout` ms: in curl_multi_poll once there is a multi handle, else in poll(2).
    private func poll(timeout: Int32) {
        // A copy of the cached list (its storage is shared until poll writes revents in it).
        var fds = currentWaitList()
        if let multi {
            var ready: Int32 = 0
            lunet_curl_multi_poll(multi, &fds, UInt32(fds.count), timeout, &ready)
        } else {
            var pfds = fds.map { pollfd(fd: $0.fd, events: ($0.events & Int16(CURL_WAIT_POLLIN) != 0 ? Int16(POLLIN) : 0)
                                            | ($0.events & Int16(CURL_WAIT_POLLOUT) != 0 ? Int16(POLLOUT) : 0), revents: 0) }
            while Glibc.poll(&pfds, nfds_t(pfds.count), timeout) < 0 && errno == EINTR {}
            for i in pfds.indices {
                let r = pfds[i].revents
                // An error or hang-up wakes whoever waits on the descriptor, to find out by reading.
                let readable = r & Int16(POLLIN | POLLHUP | POLLERR) != 0
                let writable = r & Int16(POLLOUT | POLLHUP | POLLERR) != 0
                fds[i].revents = (readable ? Int16(CURL_WAIT_POLLIN) : 0) | (writable ? Int16(CURL_WAIT_POLLOUT) : 0)
            }
        }
        if fds[0].revents != 0 {
            var count: UInt64 = 0
            _ = read(wakeFD, &count, 8)   // reset: the inbox is drained after the poll
        }
        dispatchStreamSockets(fds[streamEntriesStart...])
        for fd in fds[1..<streamEntriesStart] where fd.revents != 0 {
            if fd.revents & Int16(CURL_WAIT_POLLOUT) != 0, let fn = writeWatchers.removeValue(forKey: fd.fd) {
                waitList = nil
                fn()
            }
            if fd.revents & Int16(CURL_WAIT_POLLIN) != 0 { watchers[fd.fd]?() }
        }
    }

    /// Turns until `done()` says so or nothing more can happen.
    public func run(until done: () -> Bool) {
        while true {
            runDueWork()
            if done() || isIdle { return }
            runOnce()
        }
    }
}

