import Glibc

/// Signals for the prompt, turned into bytes on a pipe the loop watches (the self-pipe trick):
/// the handlers only set flags and write a byte, which is all a signal handler may do. SIGINT
/// also asks running Lua code to stop (see lunet_interrupt_request).
enum PromptSignals {
    nonisolated(unsafe) static var pipe: [Int32] = [-1, -1]

    static func install() -> Int32 {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { return -1 }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        pipe = fds
        for sig in [SIGINT, SIGWINCH, SIGTSTP] { handle(sig) }
        return fds[0]
    }

    private static func handle(_ sig: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { sig in
            if sig == SIGINT { lunet_interrupt_request_from_signal() }
            var byte = UInt8(truncatingIfNeeded: sig)
            _ = write(PromptSignals.pipe[1], &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(sig, &action, nil)
    }

    /// The signals that arrived since the last call.
    static func drain() -> [Int32] {
        var out: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let n = read(pipe[0], &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[0..<n].map { Int32($0) }
        }
        return out
    }

    static func restoreDefault(_ sig: Int32) { signal(sig, SIG_DFL) }
}
