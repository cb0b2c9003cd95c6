import CLunetCurl

/// A request's header lines as the curl list CURLOPT_HTTPHEADER reads, with what they were made
/// from. Transfers whose requests have the same fields (a session's plain requests: the same
/// User-Agent, Accept-Encoding and session fields each time) share one list instead of each
/// making its own (a node and a copy of each line, and the formatting of "Name: value") and
/// freeing it after: ~2k instructions of a plain GET. curl only reads a list; each transfer holds
/// the one it was given until it has ended, and the list is freed with the last of them.
final class CurlHeaderList {
    let fields: [(name: String, value: String)]
    let removed: [String]
    /// The lines added besides the fields (Transfer.configureHeaderList): 1 Accept-Encoding,
    /// 2 a default Content-Type, 4 an empty Expect.
    let additions: UInt8
    let list: UnsafeMutablePointer<curl_slist>?

    init(fields: [(name: String, value: String)], removed: [String], additions: UInt8, list: UnsafeMutablePointer<curl_slist>?) {
        self.fields = fields
        self.removed = removed
        self.additions = additions
        self.list = list
    }

    deinit { if let list { lunet_curl_slist_free_all(list) } }

    /// Whether this list is the one for these fields, removals and additions (same names and
    /// values, byte for byte, in the same order).
    func matches(_ fields: [(name: String, value: String)], _ removed: [String], _ additions: UInt8) -> Bool {
        guard additions == self.additions, fields.count == self.fields.count, removed == self.removed else { return false }
        for i in 0..<fields.count where fields[i].name != self.fields[i].name || fields[i].value != self.fields[i].value {
            return false
        }
        return true
    }
}
