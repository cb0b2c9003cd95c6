import CLunetCurl

/// A transfer's side of its events' flow (BodyFlow.swift): it performs what the flow decides.
/// Runs on the loop thread; `queueChunk` inside libcurl's write callback, the rest outside.
extension Transfer {
    func reportProgress(_ dltotal: Int64, _ dlnow: Int64, _ ultotal: Int64, _ ulnow: Int64) {
        let now = (download: dlnow, downloadTotal: dltotal, upload: ulnow, uploadTotal: ultotal)
        if now != progress {
            progress = now
            markEventful()
        }
    }

    /// Something waits for the consumer: the loop hands it over on its turn.
    func markEventful() {
        guard onEvents != nil else { return }
        if machine.flow.noteNews() { loop?.noteEventful(self) }
    }

    /// A chunk of a streamed 2xx body (libcurl's write callback).
    func queueChunk(_ data: UnsafeRawPointer, _ n: Int) {
        guard onEvents != nil else { return }
        if machine.flow.take(ByteBuffer(copying: data, count: n)) { loop?.noteEventful(self) }
    }

    /// Hands waiting progress and chunks to `onEvents` (on the loop, outside curl's callbacks),
    /// unless the consumer is still busy with the batch before.
    func deliverEvents() {
        guard let onEvents, let batch = machine.flow.handOver() else { return }
        onEvents(self, batch)
    }

    /// The consumer is through with the batch it was handed: let the body flow again, hand over
    /// what arrived meanwhile, or, once the transfer has ended and nothing is left, complete.
    /// Runs on the loop thread, outside curl's callbacks.
    public func consumerFinished() {
        guard let (resume, next) = machine.consumerFinished() else { return }
        // May call the write callback at once with the data curl held back. The mask keeps a
        // sending side that waits for its next piece paused.
        if let mask = resume, let h = easy { _ = lunet_curl_easy_pause(h, mask) }
        switch next {
        case .nothing: break
        case .notifyLoop: loop?.noteEventful(self)
        case .completeLater:
            // On a later turn: the consumer's own code is still on the stack.
            loop?.addTimer(after: 0) { [self] in
                deliverEvents()
                if let result = machine.flow.completionDue() { complete(result) }
            }
        }
    }
}
