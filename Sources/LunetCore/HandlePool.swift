import CLunetCurl

/// The loop's easy handles between transfers. An idle handle is reset: no option, no cookie
/// share. A configured one is as a finished transfer of a profile left it (Transfer.Profile),
/// for the next transfer of that profile, which sets only its URL, header list and pointers.
/// At most `limit` of each: the configured handle that waited longest makes room for a new one
/// (sessions come and go, and their profiles must not hold every place for good).
struct HandlePool {
    static let limit = 64
    private var idle: [EasyHandle] = []
    private var configured: [(handle: EasyHandle, profile: Transfer.Profile)] = []
    /// The profile made last (see profile(for:jar:)).
    private var lastProfile: Transfer.Profile?

    /// `t`'s profile with cookie jar `jar` (nil if it has none): the last one made when it
    /// describes `t`, else a new one, kept for the next transfer.
    mutating func profile(for t: Transfer, jar: ObjectIdentifier?) -> Transfer.Profile? {
        guard t.hasProfile else { return nil }
        if let last = lastProfile, last.describes(t.request, jar: jar) { return last }
        let made = Transfer.Profile(method: t.request.method, options: t.request.options, jar: jar)
        lastProfile = made
        return made
    }

    /// A handle for a transfer of `profile`: one configured for it (`reused`), else an idle one,
    /// else a new one.
    mutating func take(for profile: Transfer.Profile?) -> (handle: EasyHandle, reused: Bool) {
        if let profile, let i = configured.lastIndex(where: { $0.profile == profile }) {
            return (configured.remove(at: i).handle, true)
        }
        return (idle.popLast() ?? EasyHandle(lunet_curl_easy_init()!), false)
    }

    /// A finished transfer's handle: kept configured under `profile`, or reset and idle.
    /// Its options stay as they are when kept: what curl reads by pointer (the error buffer,
    /// the URL handle, the header list) is the EasyHandle's, alive while the handle is.
    mutating func give(back handle: EasyHandle, keeping profile: Transfer.Profile?) {
        guard let profile else { return retire(handle) }
        if configured.count >= Self.limit { retire(configured.removeFirst().handle) }
        configured.append((handle, profile))
    }

    /// A handle reset and idle (or closed when the idle list is full).
    mutating func retire(_ handle: EasyHandle) {
        Self.reset(handle)
        if idle.count < Self.limit { idle.append(handle) } else { handle.cleanup() }
    }

    /// A handle with none of its options left, its cookie share detached.
    static func reset(_ handle: EasyHandle) {
        let h = handle.raw
        // Each CookieJar.attach adds a node to the handle's list of cookie files, and libcurl
        // 7.88's curl_easy_reset drops that list without freeing it: one leak per request with
        // cookies (LeakSanitizer). A NULL cookie file frees the list; with the share still
        // attached it leaves the shared cookies alone.
        _ = lunet_easy_setopt_str(h, CURLOPT_COOKIEFILE, nil)
        // curl_easy_reset keeps a handle's share (and so a session's cookies): detach it, or
        // the next request on this handle, from any session, would carry those cookies.
        _ = lunet_easy_setopt_ptr(h, CURLOPT_SHARE, nil)
        lunet_curl_easy_reset(h)
        handle.forgetOptions()
    }

    /// A cookie jar that ends: the handles waiting configured with its share are reset, so that
    /// the share can be freed and no later jar at the same address is taken for it.
    mutating func forgetJar(_ jar: ObjectIdentifier) {
        if lastProfile?.jar == jar { lastProfile = nil }
        var kept: [(handle: EasyHandle, profile: Transfer.Profile)] = []
        for entry in configured {
            if entry.profile.jar == jar { retire(entry.handle) } else { kept.append(entry) }
        }
        configured = kept
    }

    /// Every handle closed (the loop ends).
    mutating func closeAll() {
        for h in idle { h.cleanup() }
        for c in configured { c.handle.cleanup() }
        idle = []
        configured = []
    }
}
