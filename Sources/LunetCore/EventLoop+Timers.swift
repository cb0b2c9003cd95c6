import CLunetCurl

/// The loop's timers: one heap, fired in deadline order on the loop's turns.
extension EventLoop {
    public struct TimerID: Hashable, Sendable { let raw: UInt64 }

    @discardableResult
    public func addTimer(after seconds: Double, _ fire: @escaping () -> Void) -> TimerID {
        TimerID(raw: timers.add(deadline: Self.now() + max(0, seconds)) { fired in if fired { fire() } })
    }

    /// A timer whose owner must hear when the loop drops it unfired (to release what it holds).
    @discardableResult
    public func addTimer(after seconds: Double, firedOrDropped: @escaping (Bool) -> Void) -> TimerID {
        TimerID(raw: timers.add(deadline: Self.now() + max(0, seconds), firedOrDropped))
    }

    /// A timer that fires if the loop is still turning for other reasons, but does not keep it
    /// turning: a script whose other work is done ends with it pending.
    @discardableResult
    public func addBackgroundTimer(after seconds: Double, firedOrDropped: @escaping (Bool) -> Void) -> TimerID {
        var raw: UInt64 = 0
        raw = timers.add(deadline: Self.now() + max(0, seconds)) { [unowned self] fired in
            self.backgroundTimers.remove(raw)
            firedOrDropped(fired)
        }
        backgroundTimers.insert(raw)
        return TimerID(raw: raw)
    }

    public func cancelTimer(_ id: TimerID) {
        timers.cancel(id.raw)
        if !backgroundTimers.isEmpty { backgroundTimers.remove(id.raw) }
    }

    public var pendingTimers: Int { timers.count }

    func fireDueTimers() {
        let now = Self.now()
        while let due = timers.popDue(now: now) { due.payload(true) }
    }
}
