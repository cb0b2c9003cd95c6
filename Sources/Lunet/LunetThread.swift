import Dispatch
import Glibc
import LunetCore
import LunetLua

/// A lunet host on a thread of its own, for Swift programs that live on other threads (or in
/// Swift concurrency). Everything of the host happens on that thread; `perform` hands work to
/// it and `async` methods await the answer.
public final class LunetThread: @unchecked Sendable {
    private var host: LuaHost!
    private var thread = pthread_t()
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var setupError: LunetError?
    private var stopping = false     // written and read on the loop thread only
    private var closed = false

    public init() throws(LunetError) {
        let box = Unmanaged.passRetained(self)
        let status = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<LunetThread>.fromOpaque(raw!).takeRetainedValue()
            me.main()
            return nil
        }, box.toOpaque())
        guard status == 0 else {
            box.release()
            throw LunetError(.argument, "could not start a thread for the host (error \(status))")
        }
        ready.wait()
        if let setupError { throw setupError }
    }

    private func main() {
        do {
            host = try LuaHost()
        } catch {
            setupError = error
            ready.signal()
            finished.signal()
            return
        }
        ready.signal()
        while !stopping { host.loop.runOnce() }
        host.close()
        host = nil
        finished.signal()
    }

    /// Runs `body` on the host's thread and returns its result.
    public func perform<T>(_ body: @escaping (LuaHost) -> T) async -> T {
        await withCheckedContinuation { (c: CheckedContinuation<Handoff<T>, Never>) in
            let work = Handoff(value: body)
            submit { host in c.resume(returning: Handoff(value: work.value(host))) }
        }.value
    }

    /// Runs `body` on the host's thread without waiting.
    public func submit(_ body: @escaping (LuaHost) -> Void) {
        precondition(!closed, "LunetThread: submit after close")
        let work = Handoff(value: body)
        let me = Handoff(value: self)
        host.loop.submit { work.value(me.value.host) }
    }

    /// Runs Lua code as a task in the host (it may make requests) and returns its first result.
    public func run(_ code: String) async throws(LuaFailure) -> LuaValue {
        let outcome: LuaTask.Outcome = await withCheckedContinuation { c in
            submit { host in
                switch host.spawn(code) {
                case .failure(let f): c.resume(returning: .failure(f))
                case .success(let task): task.onSettled { c.resume(returning: $0) }
                }
            }
        }
        return try outcome.get()
    }

    /// Runs Lua code as a task; `completion` gets its outcome on `executor`.
    public func run(_ code: String, on executor: CompletionExecutor = .loop, completion: @escaping @Sendable (LuaTask.Outcome) -> Void) {
        submit { host in
            switch host.spawn(code) {
            case .failure(let f): executor.run { completion(.failure(f)) }
            case .success(let task):
                task.onSettled { outcome in
                    let o = Handoff(value: outcome)
                    executor.run { completion(o.value) }
                }
            }
        }
    }

    /// Sends a request through a core session made on the host's thread; `completion` runs on
    /// `executor`.
    public func send(_ request: HTTPRequest, configuration: Session.Configuration = Session.Configuration(),
                     on executor: CompletionExecutor = .loop,
                     completion: @escaping @Sendable (Result<HTTPResponse, LunetError>) -> Void) {
        let r = Handoff(value: (request, configuration))
        submit { host in
            Session(loop: host.loop, configuration: r.value.1).send(r.value.0) { result in
                // Header lines are parsed on first read; read them here, on the loop thread,
                // so that the response leaves it with nothing left to fill in.
                if case .success(let response) = result { _ = response.headers }
                let handoff = Handoff(value: result)
                executor.run { completion(handoff.value) }
            }
        }
    }

    /// The response to `request`, awaited.
    public func response(for request: HTTPRequest, configuration: Session.Configuration = Session.Configuration()) async throws(LunetError) -> HTTPResponse {
        let result: Handoff<Result<HTTPResponse, LunetError>> = await withCheckedContinuation { c in
            send(request, configuration: configuration) { c.resume(returning: Handoff(value: $0)) }
        }
        return try result.value.get()
    }

    /// Stops the loop (cancelling what is in flight), closes the host and ends the thread.
    public func close() {
        guard !closed, setupError == nil else { return }
        closed = true
        let me = Handoff(value: self)
        host.loop.submit { me.value.stopping = true }
        finished.wait()
        pthread_join(thread, nil)
    }

    deinit { close() }
}
