import CLunetLua
import LunetLuaStack
import Glibc

/// What the one-shot command line asks of the terminal: what a descriptor is (a body is read
/// from standard input only when it is a pipe or a file) and a password typed without echo.
enum TerminalBinding {
    /// core.fd_kind(fd) -> "terminal" | "pipe" | "file" | "socket" | "device" | "closed"
    static let fdKind: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        let fd = Int32(s.integer(1) ?? 0)
        var st = stat()
        if fstat(fd, &st) != 0 {
            s.push("closed")
        } else if Glibc.isatty(fd) != 0 {
            s.push("terminal")
        } else {
            switch st.st_mode & S_IFMT {
            case S_IFIFO: s.push("pipe")
            case S_IFREG: s.push("file")
            case S_IFSOCK: s.push("socket")
            default: s.push("device")   // /dev/null and other character or block devices
            }
        }
        return 1
    }

    /// core.read_secret(prompt) -> the line typed (without its newline), or nil and why. Reads
    /// from /dev/tty with echo off, so a password piped nowhere is never shown or logged.
    static let readSecret: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        let prompt = s.string(1) ?? "password: "
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            s.pushNil()
            s.push("no terminal to ask for it on")
            return 2
        }
        defer { close(fd) }
        var saved = termios()
        let hasTermios = tcgetattr(fd, &saved) == 0
        if hasTermios {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer { if hasTermios { tcsetattr(fd, TCSAFLUSH, &saved) } }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR {
                s.pushNil()
                s.push("interrupted")
                return 2
            }
            if n <= 0 || byte == 0x0A { break }
            if byte != 0x0D { line.append(byte) }
        }
        line.withUnsafeBytes { s.push(bytes: $0) }
        return 1
    }
}

extension TerminalBinding {
    /// lunet.core's functions for terminals: descriptor kinds, a secret read without echo (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("fd_kind", fdKind),
        CoreFunction("read_secret", readSecret),
    ]
}
