// fuzz-headers: what lunet does with a response's header block, as a hostile server can write
// it. The input is the header block as curl hands it over, split into lines at LF (each with its
// line end); bytes 0-7 are also read as a time for HTTPDate.format.
//
// - Transfer.receiveHeaderLine (curl's header callback) on every line, then the response made
//   from it (status, reason phrase);
// - on the fields it collected: HTTPHeaders lookups, set/remove/merging, the cache's readers
//   (Cache-Control, dates, Age, Vary, validators, invalidation URLs, storability),
//   Charset.parameter;
// Properties: no crash; the callback consumes every byte of a line, or refuses the line whole
// with kind protocol (then the block ends there, as curl stops); a field name has no colon and no
// trailing blank, a value no leading or trailing blank, neither a line feed; HTTPDate.parse of any value
// round-trips through HTTPDate.format; a 304 carrying the stored validators selects the stored
// response; set/remove/merging keep their contracts for token names.
@testable import LunetCore
import CLunetCurl
import FuzzSupport
import Glibc

@_cdecl("fuzz_headers_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzHeaders)
}

nonisolated(unsafe) private let request = HTTPRequest(url: "http://fuzz.invalid/a/b?c")
nonisolated(unsafe) private let easy: UnsafeMutableRawPointer = {
    CurlGlobal.initialize()
    return lunet_curl_easy_init()!
}()
/// A fixed "now" (2025-01-01), so RFC 850 two-digit years read the same on every run.
private let now = 1_735_689_600.0

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)

    // The header callback, line by line.
    let transfer = Transfer(request: request) { _ in }
    var start = 0
    while start < size {
        let end = (input[start...].firstIndex(of: 0x0A).map { $0 + 1 }) ?? size
        let consumed = transfer.receiveHeaderLine(UnsafeRawPointer(data! + start), end - start)
        // A line lunet refuses (a status code that is not three digits, a Transfer-Encoding it
        // never asked for) takes no byte and says why, kind protocol: curl stops there.
        if consumed == 0 && end > start {
            fuzzCheck(transfer.abortReason?.kind == .protocol, "receiveHeaderLine refused a line without a protocol error")
            break
        }
        fuzzCheck(consumed == end - start, "receiveHeaderLine consumed \(consumed) of \(end - start) bytes")
        start = end
    }
    let response = transfer.response(from: easy)
    _ = response.reason
    let headers = transfer.headers
    for f in headers {
        fuzzCheck(!f.name.utf8.contains(0x3A), "a field name holds a colon: \(f.name)")
        fuzzCheck(f.name.utf8.last != 0x20 && f.name.utf8.last != 0x09, "a field name ends in a blank")
        // (A bare CR inside a line is kept: curl splits lines at LF only. docs/reliability.md, F4.)
        for c in [f.value.utf8.first, f.value.utf8.last] {
            fuzzCheck(c != 0x20 && c != 0x09, "a field value starts or ends with a blank")
        }
        fuzzCheck(!f.value.utf8.contains(0x0A) && !f.name.utf8.contains(0x0A), "a field holds a line feed")
        _ = Charset.parameter("charset", in: f.value)
        _ = CacheControl(parsing: f.value)
        dateRoundTrip(f.value)
        _ = CacheKey(url: f.value)
    }
    caches(headers, status: transfer.currentStatus)
    headerOperations(headers)

    // Any time, formatted, parses back as itself (clamped to years 1-9999, fractions dropped).
    if size >= 8 {
        let t = Double(bitPattern: UnsafeRawPointer(data!).loadUnaligned(as: UInt64.self))
        let text = HTTPDate.format(t)
        guard let back = HTTPDate.parse(text) else { fuzzFail("HTTPDate.format(\(t)) = \(text) does not parse") }
        fuzzCheck(HTTPDate.format(back) == text, "HTTPDate.format(\(t)) = \(text) parses as \(back)")
        if t > -6.2e10 && t < 2.5e11 { fuzzCheck(back == t.rounded(.down), "HTTPDate.format(\(t)) = \(text) parses as \(back)") }
    }
    return 0
}

private func dateRoundTrip(_ value: String) {
    guard let t = HTTPDate.parse(value, now: now) else { return }
    fuzzCheck(t.isFinite && t == t.rounded(.down), "HTTPDate.parse(\(value)) = \(t)")
    // 9999-12-31 23:59:60 is past what format writes (it clamps to 9999-12-31 23:59:59).
    guard t <= 253_402_300_799 else { return }
    let text = HTTPDate.format(t)
    fuzzCheck(HTTPDate.parse(text, now: now) == t, "HTTPDate.parse(\(value)) = \(t), formatted \(text), parses as \(String(describing: HTTPDate.parse(text, now: now)))")
}

private func caches(_ headers: HTTPHeaders, status: Int) {
    let responseTime = now, requestTime = now - 1
    let cc = CacheControl(headers)
    let request = CacheRules.requestCacheControl(headers)
    let (lifetime, _) = CacheRules.freshnessLifetime(status: status, headers: headers, responseTime: responseTime)
    let age = CacheRules.currentAge(headers: headers, requestTime: requestTime, responseTime: responseTime, now: now + 10)
    fuzzCheck(lifetime >= 0 && !lifetime.isNaN, "freshness lifetime \(lifetime)")
    fuzzCheck(age >= 0 && !age.isNaN, "current age \(age)")
    _ = CacheRules.usableWithoutValidation(response: cc, request: request, lifetime: lifetime, age: age)
    _ = CacheRules.mayServeStale(cc)
    _ = CacheRules.storability(method: "GET", requestHeaders: headers, status: status, responseHeaders: headers)
    _ = CacheRules.storedHeaders(headers)
    if let names = CacheRules.varyNames(headers) {
        for name in names { _ = CacheRules.varyValue(name, in: headers) }
    }
    let conditional = CacheRules.conditionalHeaders(for: headers)
    // A 304 that carries the stored response's own validators selects it.
    fuzzCheck(CacheRules.notModifiedSelects(stored: headers, notModified: HTTPHeaders(conditional.map {
        ($0.0 == "If-None-Match" ? "ETag" : "Last-Modified", $0.1)
    })), "a 304 with the stored validators does not select the stored response")
    _ = CacheRules.updatedHeaders(stored: headers, with: headers)
    _ = CacheRules.invalidatedURLs(method: "POST", requestURL: "http://fuzz.invalid/a/b?c", status: 201, responseHeaders: headers)
}

/// HTTP token characters (RFC 9110 §5.6.2): names lunet's case-insensitive matching is for.
private func isToken(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.allSatisfy { CacheText.isTokenByte($0) }
}

private func asciiLower(_ s: String) -> [UInt8] {
    s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
}

private func headerOperations(_ headers: HTTPHeaders) {
    let names = headers.fields.map(\.name)
    for name in names.prefix(8) {
        for other in names.prefix(8) {
            fuzzCheck(name.caseInsensitiveEquals(other) == (asciiLower(name) == asciiLower(other)),
                      "caseInsensitiveEquals(\(name), \(other)) is wrong")
        }
        fuzzCheck(headers[name] != nil, "a field collected is not found by its name")
        var h = headers
        h.set(name, "x")
        fuzzCheck(h[name] == "x" && h.all(name) == ["x"], "set(\(name)) did not replace every field of that name")
        h.remove(name)
        fuzzCheck(!h.contains(name), "remove(\(name)) left a field")
    }
    // merging: the other's fields replace ours by name (token names; see docs/reliability.md).
    let tokens = HTTPHeaders(headers.fields.filter { isToken($0.name) }.map { ($0.name, $0.value) })
    let half = HTTPHeaders(tokens.fields.enumerated().filter { $0.offset % 2 == 0 }.map { ($0.element.name, $0.element.value) })
    let merged = tokens.merging(half)
    for f in half { fuzzCheck(merged.all(f.name) == half.all(f.name), "merging kept an old \(f.name)") }
}
