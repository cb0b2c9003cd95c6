// fuzz-url: lunet's URL handling on arbitrary strings (a Location header, a link in a page, a
// base_url): URLReference (RFC 3986 split and resolution), Session.resolve and its fast path,
// the cache's URL normalisation (CacheKey), and the Lua `url` module (lua/lunet/url.lua) on a
// LuaHost kept for the run.
//
// Input: a URL; with a newline, the part before it is also a base and the part after a reference.
// Properties:
// - URLReference(parsing: s).string == s (the split loses nothing);
// - removeDotSegments is idempotent;
// - a reference resolved against a base with an authority has an empty path or one that starts
//   with "/" (RFC 3986 §3.3; else its string form glues the path onto the host: F5);
// - Session.isPlainAbsolute(s) only for what the full path accepts unchanged; Session.resolve
//   never crashes and what it returns resolves to itself;
// - CacheKey normalisation is idempotent: the key of a key's URL is the same key (the cache
//   re-normalises stored URLs: purge, invalidation; F2);
// - url.build, url.parse_query, url.query, url.decode never raise on a string; url.parse
//   raises nothing but an `argument` error (an authority without a valid host and port);
//   url.decode(url.encode(s)) == s; build(parse(build(parse(s)))) == build(parse(s)) (F3).
@testable import LunetCore
import CLunetLua
import FuzzSupport
import Lunet

@_cdecl("fuzz_url_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzURL)
}

nonisolated(unsafe) private let loop = EventLoop()

nonisolated(unsafe) private let host: LuaHost = {
    let h: LuaHost
    do { h = try LuaHost(loop: loop) } catch { fuzzFail("cannot make a LuaHost: \(error)") }
    fuzzRunLua(h.L, """
    local url = require "lunet.url"
    local function check(cond, what, s, a, b)
      if not cond then
        error(string.format("%s\\n  input %q\\n  got   %q\\n  then  %q", what, s, tostring(a), tostring(b)), 0)
      end
    end
    function fuzz_url(s)
      check(url.decode(url.encode(s)) == s, "url.decode(url.encode(s)) ~= s", s)
      url.decode(s, true)
      local q = url.parse_query(s)
      url.query(q)
      url.with_query(s, q)
      local ok, u = pcall(url.parse, s)
      if not ok then
        check(type(u) == "table" and u.kind == "argument", "url.parse raised what is no argument error", s, u)
        return
      end
      local b = url.build(u)
      local b2 = url.build(url.parse(b))
      check(b2 == b, "build(parse(s)) is not stable", s, b, b2)
    end
    """, name: "=fuzz-url")
    return h
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = fuzzBytes(data, size)
    let s = fuzzString(bytes)
    reference(s)
    plainAndResolve(s, base: nil)
    cacheKey(s)
    if let newline = s.utf8.firstIndex(of: 0x0A) {
        let base = String(s[..<newline]), ref = String(s[s.utf8.index(after: newline)...])
        let t = URLReference(parsing: base).resolving(ref)
        // RFC 3986 §3.3: with an authority, the path is empty or starts with "/" (else the
        // string form glues the path onto the host: another URL, on another host).
        fuzzCheck(t.authority == nil || t.path.isEmpty || t.path.utf8.first == 0x2F,
                  "a resolved reference has an authority and a relative path\n  base \(debug(base))\n  ref  \(debug(ref))\n  got  \(debug(t.string))")
        plainAndResolve(ref, base: base)
        cacheKey(t.string)
    }
    lua(bytes)
    return 0
}

private func reference(_ s: String) {
    let r = URLReference(parsing: s)
    fuzzCheck(r.string == s, "URLReference(parsing: s).string != s\n  \(debug(s))\n  \(debug(r.string))")
    let once = URLReference.removeDotSegments(s)
    let twice = URLReference.removeDotSegments(once)
    fuzzCheck(once == twice, "removeDotSegments is not idempotent\n  \(debug(s))\n  \(debug(once))\n  \(debug(twice))")
    _ = URLReference(parsing: "http://a/b/c/d;p?q").resolving(s).string
}

private func plainAndResolve(_ s: String, base: String?) {
    if Session.isPlainAbsolute(s) {
        let r = URLReference(parsing: s)
        let scheme = r.scheme?.lowercased()
        fuzzCheck((scheme == "http" || scheme == "https") && r.authority.map { !$0.isEmpty && !$0.hasPrefix(":") } == true
                  && r.fragment == nil && !s.utf8.contains { $0 <= 0x20 || $0 == 0x7F },
                  "isPlainAbsolute accepts what the full check refuses: \(debug(s))")
    }
    var configuration = Session.Configuration()
    configuration.baseURL = base
    let session = Session(loop: loop, configuration: configuration)
    guard let resolved = try? session.resolve(s) else { return }
    if !resolved.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
        let again = try? session.resolve(resolved)
        fuzzCheck(again == resolved, "resolve is not idempotent\n  \(debug(s))\n  \(debug(resolved))\n  \(debug(again ?? "(error)"))")
    }
}

private func cacheKey(_ s: String) {
    guard let key = CacheKey(url: s), isValidHost(key.host) else { return }
    guard let again = CacheKey(url: key.url) else { fuzzFail("a cache key's URL has no key: \(debug(key.url))") }
    fuzzCheck(again.string == key.string, "CacheKey normalisation is not idempotent\n  \(debug(s))\n  \(debug(key.string))\n  \(debug(again.string))")
}

/// RFC 3986 §3.2.2: an IP literal in brackets, or a reg-name (unreserved, sub-delims,
/// percent-encodings). Garbage such as "[::1]:80p" (whose key cannot be keyed again, and which
/// curl refuses anyway) is not what the idempotence property is about.
private func isValidHost(_ host: String) -> Bool {
    let b = Array(host.utf8)
    if b.first == 0x5B {
        return b.count > 2 && b.last == 0x5D && b.dropFirst().dropLast().allSatisfy {
            ($0 >= 0x30 && $0 <= 0x3A) || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x66) || $0 == 0x2E
        }
    }
    let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=%".utf8)
    return !b.isEmpty && b.allSatisfy { allowed.contains($0) }
}

private func lua(_ bytes: UnsafeRawBufferPointer) {
    let L = host.L
    let top = lua_gettop(L)
    defer { lua_settop(L, top) }
    fuzzPushGlobal(L, "fuzz_url")
    fuzzPushBytes(L, bytes)
    if lunet_pcall(L, 1, 0) != LUA_OK { fuzzFail("lua/lunet/url.lua: \(luaMessage(L, -1))") }
}

private func debug(_ s: String) -> String { String(reflecting: String(s.prefix(300))) }
