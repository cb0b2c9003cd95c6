import CLunetLua
import LunetLuaStack
import Glibc
import LunetCore

/// File work downloads need that plain Lua cannot do well: hashing, a durable rename, sizes.
enum FileBinding {
    /// core.sha256_file(path) -> hex digest, or nil and a message.
    static let sha256: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let path = s.string(1)!   // declared: a string (functions, below)
        if let digest = SHA256.file(path) {
            s.push(digest)
            return 1
        }
        s.pushNil()
        s.push("cannot read '\(path)': \(String(cString: strerror(errno)))")
        return 2
    }

    /// core.finalize_file(from, to, durable): rename into place (the final name only ever names
    /// a complete file); with `durable`, fsync the data first and the directory after, so that
    /// holds across a power loss too. true, or nil and a message.
    static let finalize: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let from = s.string(1)!, to = s.string(2)!
        let durable = s.bool(3)
        if durable {
            let fd = open(from, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { fsync(fd); close(fd) }
        }
        guard rename(from, to) == 0 else {
            s.pushNil()
            s.push("cannot rename '\(from)' to '\(to)': \(String(cString: strerror(errno)))")
            return 2
        }
        if durable {
            let dir = to.contains("/") ? String(to[..<to.lastIndex(of: "/")!]) : "."
            let dfd = open(dir.isEmpty ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 { fsync(dfd); close(dfd) }
        }
        s.push(true)
        return 1
    }

    /// core.record_file(part, record_path, text): makes the part file's data durable (fdatasync)
    /// and only then replaces the record beside it (a temporary file, fsync'd, renamed): a
    /// record never names bytes a crash could lose. The directory is not synced: a power loss
    /// may then undo the rename, which leaves the record before it, itself true (it names
    /// fewer bytes, all synced before it was written); so a resume may fetch again what the
    /// lost record added, never trust a byte it should not. (A directory fsync is a journal
    /// commit: one at each record, twice a second, held the loop up.) true, or nil and a message.
    static let record: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let part = s.string(1)!, path = s.string(2)!, text = s.bytes(3)!
        func failed(_ what: String) -> Int32 {
            s.pushNil()
            s.push("cannot \(what): \(String(cString: strerror(errno)))")
            return 2
        }
        let pfd = open(part, O_RDONLY | O_CLOEXEC)
        if pfd >= 0 {
            let synced = fdatasync(pfd) == 0
            close(pfd)
            if !synced { return failed("sync '\(part)'") }
        }
        let temp = path + ".tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return failed("write '\(temp)'") }
        var done = 0
        while done < text.count {
            let n = write(fd, text.baseAddress! + done, text.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                let r = failed("write '\(temp)'")
                close(fd)
                unlink(temp)
                return r
            }
            done += n
        }
        guard fsync(fd) == 0, close(fd) == 0 else { unlink(temp); return failed("sync '\(temp)'") }
        guard rename(temp, path) == 0 else { unlink(temp); return failed("rename '\(temp)' to '\(path)'") }
        s.push(true)
        return 1
    }

    /// core.destination_problem(path) -> nothing when a download may be written at `path` (and
    /// `path`.part beside it), else an error kind and a message: "argument" when `path` is a
    /// directory or its directory does not exist, "io" when that directory cannot be written.
    /// Asked before the first byte is requested.
    static let destinationProblem: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let path = s.string(1)!
        var info = stat()
        if path.isEmpty { s.push("argument"); s.push("the destination is an empty path"); return 2 }
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            s.push("argument"); s.push("'\(path)' is a directory: give a file name"); return 2
        }
        let dir = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let d = dir.isEmpty ? "/" : dir
        guard stat(d, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            s.push("argument"); s.push("the directory '\(d)' does not exist"); return 2
        }
        guard access(d, W_OK | X_OK) == 0 else { s.push("io"); s.push("the directory '\(d)' cannot be written"); return 2 }
        return 0
    }

    /// core.write_private(path, text) -> true, or nil and a message: a file that can hold secrets
    /// (a HAR recording), 0600, replaced atomically (PrivateFile).
    static let writePrivate: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let path = s.string(1)!, text = s.bytes(2)!
        if let problem = PrivateFile.write(path, UnsafeRawBufferPointer(text)) {
            s.pushNil()
            s.push(problem.message)
            return 2
        }
        s.push(true)
        return 1
    }

    /// core.lock_file(path) -> a lock (a number), or nil and a message: an exclusive lock on
    /// `path` (made 0600 if missing; a directory is locked as it is, and leaves no file behind)
    /// that other processes taking it wait for, as two runs saving one named session do. Waits
    /// at most 10 s (a lock is released when its process ends, so only a live process holds one
    /// that long). core.unlock_file(lock) releases it.
    static let lockFile: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let path = s.string(1)!
        var fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        guard fd >= 0 else {
            s.pushNil()
            s.push("cannot open the lock '\(path)': \(String(cString: strerror(errno)))")
            return 2
        }
        for _ in 0..<1000 {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                s.push(Int(fd))
                return 1
            }
            guard errno == EWOULDBLOCK || errno == EINTR else { break }
            usleep(10_000)
        }
        close(fd)
        s.pushNil()
        s.push("'\(path)' stayed locked by another process for 10 s")
        return 2
    }

    static let unlockFile: lunet_SwiftFunction = { L in
        let L = L!
        let fd = LuaStack(L).integer(1)!
        guard fd >= 0 else { return LuaErrorObject.badArgument(L, 1, "unlock_file", "lock: a lock expected, got \(fd)") }
        flock(Int32(fd), LOCK_UN)
        close(Int32(fd))
        return 0
    }

    /// core.file_size(path) -> bytes, or nil when there is no such file.
    static let size: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let path = s.string(1)!
        var info = stat()
        if stat(path, &info) == 0 { s.push(Int(info.st_size)) } else { s.pushNil() }
        return 1
    }
}

extension FileBinding {
    /// lunet.core's file functions (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("sha256_file", sha256, .string("path")),
        CoreFunction("finalize_file", finalize, .string("from"), .string("to"), .flag("durable")),
        CoreFunction("file_size", size, .string("path")),
        CoreFunction("record_file", record, .string("part"), .string("record"), .bytes("text")),
        CoreFunction("lock_file", lockFile, .string("path")),
        CoreFunction("unlock_file", unlockFile, .integer("lock")),
        CoreFunction("destination_problem", destinationProblem, .string("path")),
        CoreFunction("write_private", writePrivate, .string("path"), .bytes("text")),
    ]
}
