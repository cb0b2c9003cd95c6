import CLunet
import Glibc
import LunetCore

/// File work downloads need that plain Lua cannot do well: hashing, a durable rename, sizes.
enum FileBinding {
    /// core.sha256_file(path) -> hex digest, or nil and a message.
    static let sha256: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let path = s.string(1) else { return LuaErrorObject.badArgument(L, 1, "sha256_file", "path expected") }
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
        guard let from = s.string(1), let to = s.string(2) else { return LuaErrorObject.badArgument(L, 1, "finalize_file", "two paths expected") }
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

    /// core.file_size(path) -> bytes, or nil when there is no such file.
    static let size: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let path = s.string(1) else { return LuaErrorObject.badArgument(L, 1, "file_size", "path expected") }
        var info = stat()
        if stat(path, &info) == 0 { s.push(Int(info.st_size)) } else { s.pushNil() }
        return 1
    }
}
