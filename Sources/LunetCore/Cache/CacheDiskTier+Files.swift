import Glibc

/// The disk tier's system helpers: directories, listings, exact reads and writes.
extension CacheDiskTier {
    static func isBucket(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// mkdir -p with mode 0700; nil on success, else the reason.
    static func makeDirectories(_ path: String) -> String? {
        var st = stat()
        if stat(path, &st) == 0 { return (st.st_mode & S_IFMT) == S_IFDIR ? nil : "not a directory" }
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { return errorText() }
        }
        guard stat(path, &st) == 0 else { return errorText() }
        return (st.st_mode & S_IFMT) == S_IFDIR ? nil : "not a directory"
    }

    /// Names in a directory, without "." and ".."; empty when it cannot be read.
    static func list(_ path: String) -> [String] {
        guard let d = opendir(path) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafePointer(to: &e.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func readExactly(_ fd: Int32, count: Int, offset: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        let ok = out.withUnsafeMutableBytes { buf -> Bool in
            while done < count {
                let n = pread(fd, buf.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        return ok ? out : nil
    }

    /// Reads `count` bytes into `body`, returning their CRC-32, or nil when the file is short.
    static func readBody(_ fd: Int32, into body: ByteBuffer, count: Int, offset: Int) -> UInt32? {
        let chunk = 256 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        var done = 0
        while done < count {
            let n = pread(fd, buffer, Swift.min(chunk, count - done), off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            crc = CacheCRC32.update(crc, UnsafeRawBufferPointer(start: buffer, count: n))
            body.append(buffer, n)
            done += n
        }
        return crc
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    /// Sets the file's modification time to now: it was just used.
    static func touch(_ fd: Int32) {
        futimens(fd, nil)
    }
}
