import Foundation
import XCTest
@testable import LunetCore

/// 2023-11-14 22:13:20 UTC: a round time that every cache test starts from.
let cacheT0: Double = 1_700_000_000

func cacheHeaders(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

func cacheRequest(_ url: String = "https://example.com/a", method: String = "GET", _ headers: [(String, String)] = []) -> HTTPRequest {
    HTTPRequest(method: method, url: url, headers: HTTPHeaders(headers))
}

/// A response as a transfer would produce it; `date` adds a Date field at that time.
func cacheResponse(_ status: Int = 200, _ headers: [(String, String)] = [], body: String = "hello",
                   request: HTTPRequest = cacheRequest(), url: String? = nil, date: Double? = cacheT0, redirects: Int = 0) -> HTTPResponse {
    var h = HTTPHeaders(headers)
    if let date, !h.contains("Date") { h.add("Date", HTTPDate.format(date)) }
    return HTTPResponse(status: status, reason: HTTPResponse.standardReason(status), headers: h, body: ByteBuffer(body),
                        url: url ?? request.url, httpVersion: "1.1", timings: HTTPResponse.Timings(), request: request,
                        connectionsOpened: 1, redirects: redirects)
}

/// A fresh empty directory under the system temporary directory.
func cacheTemporaryDirectory(_ name: String = #function) -> String {
    let base = NSTemporaryDirectory() + "lunet-cache-tests-\(getpid())-" + name.filter { $0.isLetter || $0.isNumber }
    try? FileManager.default.removeItem(atPath: base)
    try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    return base
}

/// Every regular file under `dir`, recursively (paths relative to dir).
func cacheFiles(_ dir: String) -> [String] {
    guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
    var out: [String] = []
    while let p = e.nextObject() as? String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir + "/" + p, isDirectory: &isDir), !isDir.boolValue { out.append(p) }
    }
    return out.sorted()
}

/// The entry files (not the index, not temporaries).
func cacheEntryFiles(_ dir: String) -> [String] {
    cacheFiles(dir).filter { $0.hasPrefix("v1/") && $0 != "v1/index" && !($0.split(separator: "/").last!.hasPrefix(".")) }
}

extension CacheDecision {
    var kind: String {
        switch self {
        case .hit(let c): c.isFresh ? "hit" : "hit-stale"
        case .stale: "stale"
        case .miss: "miss"
        case .offlineMiss: "offline"
        }
    }

    var stored: CachedResponse? {
        switch self {
        case .hit(let c), .stale(let c, _): c
        default: nil
        }
    }

    var revalidationFields: [(String, String)] {
        if case .stale(_, let f) = self { return f }
        return []
    }
}
