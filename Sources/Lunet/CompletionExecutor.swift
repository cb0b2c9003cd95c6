import Dispatch

/// Where a completion runs: on the loop's own thread (the default: cheapest, and the caller may
/// touch the host there), or on a dispatch queue the caller chooses, as AFNetworking's
/// `completionQueue` lets an app move heavy result handling off its main thread.
public enum CompletionExecutor: Sendable {
    case loop
    case queue(DispatchQueue)

    public func run(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .loop: work()
        case .queue(let q): q.async(execute: work)
        }
    }
}

/// A value handed between threads that the sender will not touch again.
struct Handoff<T>: @unchecked Sendable {
    let value: T
}
