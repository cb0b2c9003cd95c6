import Glibc

/// Under scripts/sanitize, each lunet process writes its command line to DIR/PID.argv
/// (LUNET_SANITIZER_ARGV_DIR=DIR): a sanitizer's report file is named by the process's pid, and
/// tests start many lunet processes, so this is how a report names the command that raised it.
/// Nothing happens without the variable (one getenv a start).
enum SanitizerArgv {
    static func record(_ arguments: [String]) {
        guard let dir = getenv("LUNET_SANITIZER_ARGV_DIR") else { return }
        let path = String(cString: dir) + "/\(getpid()).argv"
        let text = arguments.joined(separator: " ") + "\n"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }
}
