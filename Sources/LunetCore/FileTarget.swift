import CLunetLinux
import Glibc

/// Where a download's body goes: a file (the `.part`), written at an offset with pwrite, so
/// memory stays flat whatever the size and several ranges can fill one file.
public final class FileTarget {
    /// What a `200` answer to a request that asked for a range means.
    public enum WholeResponse: Sendable {
        case restart   // the server ignored the range (or the file changed): start over at 0
        case fail      // a segment of a parallel download: stop, the caller falls back
    }

    public let path: String
    public let rangeStart: Int64?
    public let onWhole: WholeResponse
    /// Where to save the validators (URL, ETag, Last-Modified, length) when the body starts, so
    /// a later process can resume; nil for none.
    public var metaPath: String?
    /// The validator the bytes already in the file were sent with (a resume, a segment): a
    /// 206 must carry the same one, or it is part of another version of the resource and the
    /// two must not be combined (RFC 9110 §15.3.7.3). nil: the file holds nothing yet.
    public var expectedETag: String?
    public var expectedLastModified: String?
    public var url = ""
    public private(set) var offset: Int64
    public private(set) var written: Int64 = 0
    /// True when a 200 made the file start over.
    public private(set) var restarted = false
    private var fd: Int32 = -1
    private var decided = false

    /// `offset`: where the first byte goes (the size of a partial file when resuming).
    public init(path: String, offset: Int64 = 0, rangeStart: Int64? = nil, onWhole: WholeResponse = .restart) {
        self.path = path
        self.offset = offset
        self.rangeStart = rangeStart
        self.onWhole = onWhole
    }

    deinit { close() }

    func open() -> LunetError? {
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { return LunetError(.io, "cannot write '\(path)': \(String(cString: strerror(errno)))") }
        return nil
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    /// Checks, before the first byte, that the response fits the range that was asked for.
    func begin(status: Int, headers: HTTPHeaders) -> LunetError? {
        decided = true
        let contentRange = headers["Content-Range"]
        if let problem = check(status: status, contentRange: contentRange, headers: headers) { return problem }
        if let metaPath { saveMeta(metaPath, headers: headers, status: status) }
        return nil
    }

    private func check(status: Int, contentRange: String?, headers: HTTPHeaders) -> LunetError? {
        guard let start = rangeStart else {
            // The whole resource was asked for: part of it is not the file (a server that answers
            // a plain GET with "206 bytes 0-4/100" must not end as a 5-byte download).
            if status == 206 {
                return LunetError(.protocol, "the server answered a request for the whole resource with part of it (206, \(contentRange ?? "no Content-Range")): nothing was saved", url: url)
            }
            if status == 200 && offset > 0 { return truncateToZero() }
            return nil
        }
        if status == 206 {
            if let problem = versionProblem(headers) { return problem }
            // "bytes 1000-1999/5000": the first number must be where we asked to start.
            let spec = contentRange?.split(separator: " ").last?.split(separator: "-").first
            guard let first = spec.flatMap({ Int64($0) }), first == start else {
                return LunetError(.protocol, "the server sent a range that starts elsewhere (\(contentRange ?? "no Content-Range")) than asked (\(start))")
            }
            return nil
        }
        if status == 200 {
            switch onWhole {
            case .restart: return truncateToZero()
            case .fail: return LunetError(.protocol, "the server answered a range request with the whole body")
            }
        }
        return nil
    }

    /// Why a 206's bytes cannot join those in the file: another (or no) validator than the one
    /// they were sent with. A server that ignores If-Range sends the new version's bytes.
    private func versionProblem(_ headers: HTTPHeaders) -> LunetError? {
        if let etag = expectedETag, headers["ETag"] != etag {
            return LunetError(.protocol, "the server sent part of another version of the resource (ETag \(headers["ETag"] ?? "none"), not \(etag)): it is not combined with the bytes already saved", url: url)
        }
        if expectedETag == nil, let modified = expectedLastModified, headers["Last-Modified"] != modified {
            return LunetError(.protocol, "the server sent part of another version of the resource (Last-Modified \(headers["Last-Modified"] ?? "none"), not \(modified)): it is not combined with the bytes already saved", url: url)
        }
        return nil
    }

    private func truncateToZero() -> LunetError? {
        restarted = true
        offset = 0
        if ftruncate(fd, 0) != 0 { return LunetError(.io, "cannot truncate '\(path)': \(String(cString: strerror(errno)))") }
        return nil
    }

    func write(_ data: UnsafeRawPointer, _ n: Int) -> LunetError? {
        var done = 0
        while done < n {
            let r = pwrite(fd, data + done, n - done, off_t(offset))
            if r < 0 {
                if errno == EINTR { continue }
                return LunetError(.io, "cannot write '\(path)': \(String(cString: strerror(errno)))")
            }
            done += r
            offset += Int64(r)
            written += Int64(r)
        }
        // Start writing back every 32 MB while the transfer goes on, so the fsync before the
        // final rename has little left to do (it is what makes the final name durable).
        if startsWriteback && written - writebackMark >= 32 << 20 {
            _ = lunet_start_writeback(fd, writebackMark, written - writebackMark)
            writebackMark = written
        }
        return nil
    }

    private var writebackMark: Int64 = 0
    /// For durable downloads (fsync before the rename): write back during the transfer.
    public var startsWriteback = false

    var hasBegun: Bool { decided }

    /// The whole file's length from the headers: Content-Range's total for a 206, else
    /// Content-Length plus where the body starts.
    static func totalLength(status: Int, headers: HTTPHeaders, start: Int64) -> Int64? {
        if status == 206, let total = headers["Content-Range"]?.split(separator: "/").last.flatMap({ Int64($0) }) { return total }
        if let length = headers["Content-Length"].flatMap({ Int64($0) }) { return start + length }
        return nil
    }

    /// Writes the validators as JSON, atomically (temp file and rename).
    private func saveMeta(_ path: String, headers: HTTPHeaders, status: Int) {
        func quoted(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                default: out += u.value < 0x20 ? "\\u" + String(u.value, radix: 16).leftPadded(4) : String(u)
                }
            }
            return out + "\""
        }
        var fields = ["\"url\":" + quoted(url)]
        if let etag = headers["ETag"] { fields.append("\"etag\":" + quoted(etag)) }
        if let lm = headers["Last-Modified"] { fields.append("\"last_modified\":" + quoted(lm)) }
        if let total = Self.totalLength(status: status, headers: headers, start: status == 206 ? (rangeStart ?? 0) : 0) {
            fields.append("\"length\":\(total)")
        }
        let text = "{" + fields.joined(separator: ",") + "}\n"
        let temp = path + ".tmp"
        let fd = Glibc.open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        var bytes = Array(text.utf8)
        _ = Glibc.write(fd, &bytes, bytes.count)
        fsync(fd)
        Glibc.close(fd)
        rename(temp, path)
    }

    /// Flushes the data to disk (before a rename makes the file final).
    public func sync() { if fd >= 0 { fsync(fd) } }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
