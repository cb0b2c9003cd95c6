import CLunetCodings
import Glibc

/// gzip (RFC 1952) through the system's zlib, opened on first use (the codings shim's
/// gzip.c): gRPC's "gzip" message encoding. `body` gets the result's bytes, which live
/// only while it runs (no copy into a Swift array).
public enum Gzip {
    public static func compress<T>(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        run({ out, length in lunet_gzip(input.baseAddress, input.count, &out, &length) }, "gzip", body)
    }

    /// Refuses (kind too_large) anything that would come out longer than `max` bytes, before
    /// holding more than that.
    public static func decompress<T>(_ input: UnsafeRawBufferPointer, max: Int, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        run({ out, length in lunet_gunzip(input.baseAddress, input.count, max, &out, &length) }, "gunzip", body)
    }

    private static func run<T>(_ call: (inout UnsafeMutableRawPointer?, inout Int) -> Int32, _ what: String,
                               _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        var out: UnsafeMutableRawPointer?
        var length = 0
        let code = call(&out, &length)
        switch Int(code) {
        case Int(LUNET_GZIP_OK):
            defer { free(out) }
            return .success(body(UnsafeRawBufferPointer(start: out, count: length)))
        case Int(LUNET_GZIP_NO_ZLIB): return .failure(LunetError(.io, "\(what): the system's zlib (libz.so.1) cannot be opened"))
        case Int(LUNET_GZIP_TOO_LARGE): return .failure(LunetError(.tooLarge, "\(what): the data would be larger than the limit"))
        case Int(LUNET_GZIP_NO_MEMORY): return .failure(LunetError(.io, "\(what): out of memory"))
        default: return .failure(LunetError(.decode, "\(what): not gzip data, or cut short"))
        }
    }
}
