/// A request's `timeout` is the caller's bound on the whole call. libcurl enforces it once a
/// transfer runs, but libcurl 7.88 never times out a transfer still pending for a connection
/// (the per-host or total cap: CURLMOPT_MAX_HOST_CONNECTIONS), nor can it see one waiting in a
/// session's max_concurrent line. So a transfer with a timeout also has a loop timer, from the
/// moment it is first queued or started, a little after libcurl's own would fire (libcurl's
/// message, which says what stalled, wins whenever libcurl had the transfer running).
extension Transfer {
    /// How long after the timeout the loop's own deadline fires.
    static let deadlineGrace = 0.25

    /// Arms the deadline once, if the request has a timeout. `loop` is the loop it will run on.
    func armDeadline(on loop: EventLoop) {
        guard deadlineTimer == nil, state != .finished, let timeout = request.options.timeout, timeout > 0 else { return }
        if self.loop == nil { self.loop = loop }   // a transfer waiting in a session's line has none yet
        let seconds = timeout + Self.deadlineGrace
        deadlineTimer = loop.addTimer(after: seconds) { [weak self, unowned loop] in
            guard let self, let waiting = self.machine.deadlineFires() else { return }
            self.deadlineTimer = nil
            loop.abort(self, LunetError(.timeout, Self.timedOut(after: timeout, waitingForConnection: waiting), url: self.currentURL))
        }
    }

    /// The message of a request that ran out of time, whether lunet's deadline or libcurl's
    /// fired (libcurl 8 also times out a transfer still pending for a slot; 7.88 never does).
    static func timedOut(after timeout: Double?, waitingForConnection waiting: Bool) -> String {
        let words = timeout.map { "the request did not complete within its timeout (\(seconds($0)) s)" }
            ?? "the request did not complete in time"
        guard waiting else { return words }
        return words + ": it was still waiting for a connection or a slot (http.limits per_host and total, a session's max_concurrent)"
    }

    /// The call is over (or its curl part is): the deadline has nothing left to bound.
    func disarmDeadline() {
        guard let id = deadlineTimer else { return }
        deadlineTimer = nil
        loop?.cancelTimer(id)
    }

    private static func seconds(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(v)
    }
}
