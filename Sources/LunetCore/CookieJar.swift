import CLunetCurl
import Glibc

/// A session's cookies: a curl share handle holding cookies for every transfer of the session
/// (and of the sessions derived from it), optionally loaded from and saved to a Netscape cookie
/// file that curl itself can read (`curl -b FILE`).
public final class CookieJar {
    let share: UnsafeMutableRawPointer
    public let file: String?
    private let loop: EventLoop

    public init(loop: EventLoop, file: String? = nil) {
        self.loop = loop
        self.file = file
        CurlGlobal.initialize()
        share = lunet_curl_share_init()
        _ = lunet_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        if let file { withHandle { h in
            _ = lunet_easy_setopt_str(h, CURLOPT_COOKIEFILE, file)
            _ = lunet_easy_setopt_str(h, CURLOPT_COOKIELIST, "RELOAD")
        } }
    }

    deinit {
        // The last chance to save: nobody can be told but standard error.
        if let problem = save() {
            var line = "lunet: \(problem.message)\n"
            line.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
        }
        // Handles the loop keeps configured with this share let go of it first: the share is
        // freed only when no handle uses it.
        loop.forgetJar(ObjectIdentifier(self))
        lunet_curl_share_cleanup(share)
    }

    /// Attaches the jar to a transfer's handle and turns curl's cookie engine on.
    func attach(_ h: UnsafeMutableRawPointer) {
        _ = lunet_easy_setopt_ptr(h, CURLOPT_SHARE, share)
        _ = lunet_easy_setopt_str(h, CURLOPT_COOKIEFILE, "")
    }

    /// Writes the jar to its file, in the Netscape format curl reads (`curl -b FILE`): lunet
    /// writes it itself rather than with curl's FLUSH, which creates the file with the umask's
    /// mode and reports no failure. The file is 0600 (cookies are credentials), replaced
    /// atomically; on failure (a full disk) the old file stays and the error says why.
    @discardableResult
    public func save() -> LunetError? {
        guard let file else { return nil }
        var text = "# Netscape HTTP Cookie File\n# Written by lunet. Cookies are credentials: this file is private (0600).\n\n"
        for line in all() { text += line + "\n" }
        if let problem = PrivateFile.write(file, text) {
            return LunetError(.io, "cannot save the cookies: \(problem.message)")
        }
        return nil
    }

    /// Every cookie in Netscape format, one line each.
    public func all() -> [String] {
        var result: [String] = []
        withHandle { h in
            var list: UnsafeMutableRawPointer? = nil
            _ = lunet_easy_getinfo_ptr(h, CURLINFO_COOKIELIST, &list)
            var node = list?.assumingMemoryBound(to: curl_slist.self)
            while let n = node {
                if let data = n.pointee.data { result.append(String(cString: data)) }
                node = n.pointee.next
            }
            if let list { lunet_curl_slist_free_all(list.assumingMemoryBound(to: curl_slist.self)) }
        }
        return result
    }

    /// Adds a cookie line (Netscape format or a Set-Cookie header line).
    public func add(_ line: String) {
        withHandle { h in _ = lunet_easy_setopt_str(h, CURLOPT_COOKIELIST, line) }
    }

    public func clear() {
        withHandle { h in _ = lunet_easy_setopt_str(h, CURLOPT_COOKIELIST, "ALL") }
    }

    private func withHandle(_ body: (UnsafeMutableRawPointer) -> Void) {
        let h = lunet_curl_easy_init()!
        attach(h)
        body(h)
        // Detach before cleanup so curl does not write the jar a second time.
        _ = lunet_easy_setopt_ptr(h, CURLOPT_COOKIEJAR, nil)
        lunet_curl_easy_cleanup(h)
    }
}
