import CLunetLua
import LunetLuaStack
import LunetCore

/// The fields of the request table http.lua's build makes (core.send's argument 3), read in
/// one pass: a plain GET's table holds four, and looking up each of the ~30 possible names
/// costs more than the pass. `request()` makes the core's request from them.
struct RequestTable {
    var url: String?
    var method = "GET"
    var sessionHeaders: (HTTPHeaders, removed: [String])?
    var requestHeaders: (HTTPHeaders, removed: [String])?
    var bytesBody: ByteBuffer?
    var multipart: [MultipartPart]?
    var uploadFile: String?
    var cachePolicy: String?
    var offlineMissResponse = false
    var longLived = false
    var sendStream = false
    var target: FileTarget?
    var wantsProgress = false
    var stream = false
    var hasEvents = false
    var options = TransferOptions()
    var anyOption = false

    /// Reads the table at `index` (a positive index: the pass pushes keys and values).
    init(_ L: OpaquePointer, at index: Int32) {
        let s = LuaStack(L)
        s.forEach(index) {
            guard s.type(-2) == LUA_TSTRING, let key = s.string(-2) else { return }
            switch key {
            case "url": url = s.string(-1)
            case "method": method = (s.string(-1) ?? "GET").uppercased()
            case "session_headers": if s.type(-1) == LUA_TTABLE { sessionHeaders = TransferBinding.readHeaders(L, -1) }
            case "headers": if s.type(-1) == LUA_TTABLE { requestHeaders = TransferBinding.readHeaders(L, -1) }
            case "body":
                if s.type(-1) == LUA_TSTRING, let bytes = s.bytes(-1) {
                    bytesBody = ByteBuffer(copying: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: bytes.count)
                }
            case "multipart": if s.type(-1) == LUA_TTABLE { multipart = TransferBinding.multipartParts(L, -1) }
            case "upload_file": uploadFile = s.string(-1)
            case "cache_policy": cachePolicy = s.string(-1)
            case "offline_miss_504": offlineMissResponse = s.bool(-1)
            case "long_lived": longLived = s.bool(-1)
            case "send_stream": sendStream = s.bool(-1)
            case "download": if s.type(-1) == LUA_TTABLE { target = Self.downloadTarget(s) }
            case "progress": wantsProgress = s.bool(-1)
            case "stream": stream = s.bool(-1)
            case "on_events": hasEvents = s.type(-1) == LUA_TFUNCTION
            default: if TransferBinding.applyOption(key, s, &options) { anyOption = true }
            }
        }
    }

    /// A download's table at the top of the stack: { path, offset, range_start, on_whole =
    /// "restart" | "fail", meta, etag, last_modified, durable }; nil without a path.
    private static func downloadTarget(_ s: LuaStack) -> FileTarget? {
        guard let path = s.stringField(-1, "path") else { return nil }
        let rangeStart = s.integerField(-1, "range_start").map(Int64.init)
        let t = FileTarget(path: path, offset: Int64(s.integerField(-1, "offset") ?? 0), rangeStart: rangeStart,
                           onWhole: s.stringField(-1, "on_whole") == "fail" ? .fail : .restart)
        t.metaPath = s.stringField(-1, "meta")
        t.expectedETag = s.stringField(-1, "etag")
        t.expectedLastModified = s.stringField(-1, "last_modified")
        t.startsWriteback = s.boolField(-1, "durable") == true
        return t
    }

    /// Only a transfer with something to set up skips the cache (downloads, progress, chunks).
    var needsSetup: Bool { target != nil || wantsProgress || stream || hasEvents }

    /// The core's request, or the message of the field at fault.
    func request() -> Result<HTTPRequest, RequestTableError> {
        guard let url else { return .failure(RequestTableError(message: "a request needs a url")) }
        target?.url = url
        var request = HTTPRequest(method: method, url: url)
        // The request's own fields replace the session's of the same name.
        for case let (fields, removed)? in [sessionHeaders, requestHeaders] {
            request.headers = request.headers.merging(fields)
            request.removedHeaders += removed
        }
        if let bytesBody { request.body = .bytes(bytesBody) }
        if let multipart { request.body = .multipart(multipart) }
        if let uploadFile { request.body = .file(uploadFile) }
        if sendStream { request.body = .stream }
        if let policy = cachePolicy {
            guard let p = CachePolicy(rawValue: policy) else {
                return .failure(RequestTableError(message: "option 'cache' must be \"default\", \"reload\", \"no_store\", \"prefer_cache\" or \"only_if_cached\", got \"\(policy)\""))
            }
            request.cachePolicy = p
        }
        request.offlineMissResponse = offlineMissResponse
        request.longLived = longLived
        if anyOption { request.options = options }
        return .success(request)
    }
}

struct RequestTableError: Error { let message: String }
