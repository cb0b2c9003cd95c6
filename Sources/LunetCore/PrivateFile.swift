import Glibc

/// Writing a file that can hold secrets (a cookie jar, a HAR recording): created 0600 whatever
/// the umask, written to a temporary file beside it, synced and renamed over the old one, so
/// that a failure (a full disk) leaves the old file as it was and reports what went wrong.
public enum PrivateFile {
    public static func write(_ path: String, _ bytes: UnsafeRawBufferPointer) -> LunetError? {
        let temp = path + ".tmp-\(getpid())"
        func failed(_ what: String) -> LunetError {
            let reason = String(cString: strerror(errno))
            unlink(temp)
            return LunetError(.io, "cannot \(what) '\(path)': \(reason)")
        }
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return failed("write") }
        // open's mode is masked by the umask only toward fewer bits, but a stale temp file keeps
        // its own: make sure.
        _ = fchmod(fd, 0o600)
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                let e = failed("write")
                close(fd)
                return e
            }
            done += n
        }
        guard fsync(fd) == 0 else { let e = failed("write"); close(fd); return e }
        guard close(fd) == 0 else { return failed("write") }
        guard rename(temp, path) == 0 else { return failed("replace") }
        return nil
    }

    public static func write(_ path: String, _ text: String) -> LunetError? {
        var t = text
        return t.withUTF8 { write(path, UnsafeRawBufferPointer($0)) }
    }
}
