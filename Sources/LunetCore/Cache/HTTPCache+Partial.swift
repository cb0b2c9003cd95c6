/// Partial content (RFC 9111 §3.3, §3.4; RFC 9110 §14, §15.3.7): 206 responses are stored, pieces
/// of one representation are put together, and a `Range` request is answered from a complete
/// response or from a piece that holds the whole range.
///
/// A key's variant holds one response, complete or one contiguous piece. A new piece is put
/// together with the stored one only when both carry the same strong `ETag` and they overlap or
/// touch; otherwise the newer replaces it (two validators never make one body). A piece that
/// comes to cover the whole representation becomes a complete 200 response. Bodies stored
/// decoded from a content coding are never sliced: their byte positions are not the
/// representation's.
extension HTTPCache {
    /// The bytes of `entry` a `Range` request may be answered with, or nil: one range, within
    /// what is stored, of a body whose positions are the representation's.
    static func servableRange(_ value: String, from entry: CacheEntry, for request: HTTPRequest) -> (bytes: ClosedRange<Int>, length: Int?)? {
        guard let spec = CacheRanges.single(value), positionsAreTheRepresentations(entry.headers, request) else { return nil }
        if entry.status == 206 {
            guard let held = entry.headers["Content-Range"].flatMap(CacheRanges.contentRange), held.range.count == entry.body.count else { return nil }
            let wanted: ClosedRange<Int>?
            if let length = held.length {
                wanted = CacheRanges.resolve(spec, length: length)
            } else if case .from(let a, let b?) = spec {
                wanted = a...b
            } else {
                wanted = nil
            }
            guard let wanted, held.range.contains(wanted.lowerBound), held.range.contains(wanted.upperBound) else { return nil }
            return (wanted, held.length)
        }
        guard entry.status == 200, let wanted = CacheRanges.resolve(spec, length: entry.body.count) else { return nil }
        return (wanted, entry.body.count)
    }

    /// A body's byte positions are the representation's when no content coding was taken off
    /// it: it had none, or it was stored still coded (`decompress = false`).
    static func positionsAreTheRepresentations(_ headers: HTTPHeaders, _ request: HTTPRequest) -> Bool {
        wantsEncodedBody(request) || !headers.all("Content-Encoding").contains { !CacheText.trimmed($0).isEmpty }
    }

    /// A 206 served from storage: the stored fields with `Content-Range` and `Content-Length`
    /// for the bytes served (RFC 9110 §15.3.7).
    static func partialResponse(_ entry: CacheEntry, range: (bytes: ClosedRange<Int>, length: Int?), headers: HTTPHeaders,
                                request: HTTPRequest) -> HTTPResponse {
        let offset = entry.status == 206 ? (entry.headers["Content-Range"].flatMap(CacheRanges.contentRange)?.range.lowerBound ?? 0) : 0
        var h = headers
        h.set("Content-Range", "bytes \(range.bytes.lowerBound)-\(range.bytes.upperBound)/\(range.length.map(String.init) ?? "*")")
        h.set("Content-Length", String(range.bytes.count))
        let start = range.bytes.lowerBound - offset
        let body = entry.body.base.map { ByteBuffer(copying: $0 + start, count: range.bytes.count) } ?? ByteBuffer()
        return HTTPResponse(status: 206, reason: HTTPResponse.standardReason(206), headers: h, body: body, url: entry.url,
                            httpVersion: entry.httpVersion, timings: HTTPResponse.Timings(), request: request,
                            connectionsOpened: 0, redirects: 0)
    }

    /// Stores a 206 (RFC 9111 §3.3), put together with the stored piece of the same
    /// representation when they overlap or touch (§3.4: "the new response and stored response
    /// have the same strong validator"); a piece covering everything becomes a 200.
    func storePartial(_ response: HTTPResponse, for request: HTTPRequest, under key: CacheKey, requestTime: Double,
                      responseTime: Double) -> CacheStoreResult {
        guard let piece = response.headers["Content-Range"].flatMap(CacheRanges.contentRange),
              piece.range.count == response.body.count else {
            return .notStored("a 206 is stored only with one Content-Range that matches its body")
        }
        guard Self.positionsAreTheRepresentations(response.headers, request) else {
            return .notStored("a 206 whose content coding was decoded: its bytes are not the representation's")
        }
        let validator = CacheRanges.strongValidator(response.headers)
        var range = piece.range
        var bytes = [UInt8](response.body.bytes)
        if let stored = candidate(for: request, key: key).entry, let validator, CacheRanges.strongValidator(stored.headers) == validator {
            if stored.status == 200 { return .notStored("the complete response with this validator is stored") }
            if stored.status == 206, let held = stored.headers["Content-Range"].flatMap(CacheRanges.contentRange),
               held.length == piece.length, held.range.count == stored.body.count,
               let merged = CacheRanges.combined(older: (held.range, stored.body.bytes),
                                                 newer: (piece.range, response.body.bytes)) {
                range = merged.range
                bytes = merged.bytes
            }
        }
        var headers = response.headers
        let whole = piece.length.map { range == 0...($0 - 1) } ?? false
        headers.set("Content-Length", String(bytes.count))
        if whole { headers.remove("Content-Range") } else { headers.set("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/\(piece.length.map(String.init) ?? "*")") }
        let body = bytes.withUnsafeBytes { ByteBuffer(copying: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: $0.count) }
        let kept = HTTPResponse(status: whole ? 200 : 206, reason: HTTPResponse.standardReason(whole ? 200 : 206), headers: headers,
                                body: body, url: response.url, httpVersion: response.httpVersion, timings: response.timings,
                                request: response.request, connectionsOpened: response.connectionsOpened, redirects: response.redirects)
        return keep(kept, for: request, under: key, requestTime: requestTime, responseTime: responseTime)
    }
}
