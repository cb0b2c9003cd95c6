/// What a request that carries credentials does with a redirect. libcurl follows redirects
/// itself and drops Authorization and Cookie when the origin changes, but sends every other
/// field as it was: an API key, a session token, a SigV4 security token would reach the other
/// host. Such requests follow their redirects in lunet instead (Transfer+Redirects.swift), and
/// this type decides each step: pure values in, a decision out, tested without the network.
public enum RedirectPolicy {
    /// One step to take.
    public struct Step: Equatable, Sendable {
        /// The absolute URL to ask next (the Location resolved against the URL asked).
        public var url: String
        public var method: String
        /// 307 and 308 send the same body again; the others change to GET without one.
        public var keepsBody: Bool
        /// Scheme, host or port differ from the URL asked: credentials stay behind.
        public var crossOrigin: Bool
    }

    public enum Decision: Sendable {
        /// Not a redirect to follow: the response is the answer.
        case deliver
        case follow(Step)
        case fail(LunetError)
    }

    /// Fields that describe a body, gone with it.
    static let bodyFields = ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"]

    /// The statuses followed, as libcurl follows them (300, 304, 305 and 306 are answers).
    static let followed: Set<Int> = [301, 302, 303, 307, 308]

    /// The decision for a response of `status` with `location` to `method url`, after `hops`
    /// redirects already followed, at most `maxRedirects` (-1: no limit, as CURLOPT_MAXREDIRS).
    public static func decide(status: Int, location: String?, url: String, method: String, hops: Int, maxRedirects: Int) -> Decision {
        guard followed.contains(status), let location = location?.trimmed, !location.isEmpty else { return .deliver }
        if maxRedirects >= 0 && hops >= maxRedirects {
            return .fail(LunetError(.redirects, "Maximum (\(maxRedirects)) redirects followed", url: url))
        }
        var target = URLReference(parsing: url).resolving(location)
        target.fragment = nil
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .fail(LunetError(.redirects, "refused to follow a redirect to \(location): only http and https are followed", url: url))
        }
        target.scheme = scheme
        if target.path.isEmpty { target.path = "/" }
        let next = target.string
        guard let from = CacheKey(url: url), let to = CacheKey(url: next) else {
            return .fail(LunetError(.redirects, "refused to follow a redirect to \(location): it names no host", url: url))
        }
        // RFC 9110 §15.4: 301 and 302 turn a POST into a GET (as browsers and libcurl do);
        // 303 turns every method but HEAD into a GET; 307 and 308 keep the method and body.
        var nextMethod = method
        var keepsBody = true
        switch status {
        case 301 where method == "POST", 302 where method == "POST": nextMethod = "GET"; keepsBody = false
        case 303 where method != "HEAD": nextMethod = "GET"; keepsBody = false
        default: break
        }
        return .follow(Step(url: next, method: nextMethod, keepsBody: keepsBody, crossOrigin: from.origin != to.origin))
    }

    /// The request for `step`, made from the one just sent: without a body (and the fields
    /// that described it) when the method changed, and without every credential when the
    /// origin changed: credential fields (CredentialFields: Authorization, Cookie, API keys,
    /// tokens, the field the auth declared), and the credentials libcurl would send or sign
    /// with. Proxy-Authorization stays: the proxy is the same.
    public static func request(after r: HTTPRequest, _ step: Step) -> HTTPRequest {
        var next = r
        next.url = step.url
        next.method = step.method
        if step.crossOrigin {
            let declared = r.options.secretHeader
            var kept = HTTPHeaders()
            for (name, value) in r.headers.fields {
                let credential = CredentialFields.isCredential(name) || (declared.map(name.caseInsensitiveEquals) ?? false)
                if !credential || CredentialFields.staysWithProxy(name) { kept.add(name, value) }
            }
            next.headers = kept
            next.options.curlAuth = nil
            next.options.awsCredentials = nil
            next.options.secretHeader = nil
            next.options.netrcFile = ""   // a .netrc entry is the first host's
        }
        if !step.keepsBody {
            next.body = .none
            for name in bodyFields { next.headers.remove(name) }
        }
        return next
    }
}
