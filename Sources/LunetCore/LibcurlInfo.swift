import CLunetCurl

/// What the loaded libcurl is and gives: its version, its TLS library (the flavour: Debian's
/// libcurl4 is OpenSSL, libcurl3-gnutls GnuTLS), HTTP/2, HTTP/3 and WebSocket, and where it
/// came from (LUNET_LIBCURL names another). `lunet --version` prints it; scripts read it as
/// `http.libcurl()`. Opens libcurl.
public struct LibcurlInfo: Sendable {
    public var version = ""
    /// 0xXXYYZZ (8.14.1 is 0x080E01).
    public var number: UInt32 = 0
    /// "OpenSSL/3.0.17", "GnuTLS/3.7.9".
    public var tls = ""
    /// The TLS library's name alone: "OpenSSL", "GnuTLS".
    public var flavour: String { String(tls.prefix { $0 != "/" }) }
    public var http2 = false
    public var http3 = false
    /// "ngtcp2/1.11.0 nghttp3/1.8.0" when it has HTTP/3.
    public var quic = ""
    public var websocket = false
    public var path = ""
    /// curl's whole version line.
    public var line = ""

    /// The loaded libcurl's, or nil (with why) when it cannot be opened.
    public static func loaded() -> Result<LibcurlInfo, LunetError> {
        if let problem = CurlGlobal.load() { return .failure(problem) }
        guard let info = lunet_curl_info() else { return .failure(LunetError(.io, "libcurl gives no version information")) }
        var i = LibcurlInfo()
        i.version = String(cString: info.pointee.version)
        i.number = info.pointee.version_num
        i.tls = info.pointee.ssl_version.map { String(cString: $0) } ?? ""
        i.http2 = info.pointee.features & lunet_curl_feature_http2() != 0
        i.http3 = info.pointee.features & lunet_curl_feature_http3() != 0
        i.quic = info.pointee.quic_version.map { String(cString: $0) } ?? ""
        var p = info.pointee.protocols
        while let name = p?.pointee {
            if String(cString: name) == "ws" { i.websocket = true }
            p = p?.advanced(by: 1)
        }
        i.path = String(cString: lunet_curl_library_path())
        i.line = String(cString: lunet_curl_version())
        return .success(i)
    }

    /// "libcurl 8.14.1 (OpenSSL/3.0.17) from PATH: HTTP/2, HTTP/3 (ngtcp2/…), WebSocket" and the
    /// codings lunet removes: the lines `lunet --version` adds under its first.
    public var summary: String {
        var features: [String] = []
        if http2 { features.append("HTTP/2") }
        if http3 { features.append(quic.isEmpty ? "HTTP/3" : "HTTP/3 (\(quic))") }
        if websocket { features.append("libcurl WebSocket") }   // lunet's own WebSocket needs none
        let codings = ContentCodings.decodable.isEmpty ? "none" : ContentCodings.decodable.joined(separator: ", ")
        return "libcurl \(version) (\(tls.isEmpty ? "no TLS" : tls)) from \(path.isEmpty ? "?" : path)\n"
            + "features: \(features.isEmpty ? "HTTP/1.1 only" : features.joined(separator: ", "))\n"
            + "content codings (removed by lunet): \(codings)"
    }
}

extension LibcurlInfo {
    /// Whether the loaded libcurl was built with HTTP/3 (read once).
    static let loadedHasHTTP3: Bool = (try? loaded().get())?.http3 ?? false

    /// nil when the loaded libcurl can do HTTP/3; else the error a request for it gets, naming
    /// what to install (libcurl alone would refuse the option with "Unsupported protocol").
    static func http3Missing(for url: String) -> LunetError? {
        if loadedHasHTTP3 { return nil }
        let which = (try? loaded().get()).map { "libcurl \($0.version), \($0.tls)" } ?? "libcurl"
        return LunetError(.argument, "HTTP/3 needs a libcurl built with it, and the loaded one (\(which)) is not: on Debian 12, "
            + "install libcurl3-gnutls from bookworm-backports (apt install -t bookworm-backports libcurl3-gnutls) and run lunet "
            + "with LUNET_LIBCURL=libcurl-gnutls.so.4 (docs/libcurl.md)", url: url)
    }
}

/// libcurl's known faults, by version, that lunet works around only where they are (pure, so
/// that each range is tested without loading that libcurl).
public enum CurlQuirks {
    /// A reused HTTP/2 prior-knowledge (h2c) connection fails every request after the first
    /// (curl issue 10634, fixed in 8.0.0): H2CReuse.
    public static func h2cReuseBroken(_ version: UInt32) -> Bool { version != 0 && version < 0x080000 }
    /// A stopped HTTP/2 stream's RST_STREAM waits for the connection's next write, which never
    /// comes on an idle one (curl issue 17611: from 7.88.0, fixed in 8.15.0): EventLoop.stopEarly
    /// closes a connection no other transfer uses instead.
    public static func streamResetWaits(_ version: UInt32) -> Bool { version >= 0x075800 && version < 0x080F00 }

    static let loadedVersion: UInt32 = lunet_curl_version_num()
}
