import CLunetCodings

/// gzip (RFC 1952) through the system's zlib, opened on first use (the codings shim's
/// gzip.c): gRPC's "gzip" message encoding. `body` gets the result's bytes, which live
/// only while it runs (no copy into a Swift array).
public enum Gzip {
    public static func compress<T>(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        WholeBufferCoding.run({ out, length in lunet_gzip(input.baseAddress, input.count, &out, &length) },
                              what: "gzip", library: "zlib (libz.so.1)", coding: "gzip", body)
    }

    /// Refuses (kind too_large) anything that would come out longer than `max` bytes, before
    /// holding more than that.
    public static func decompress<T>(_ input: UnsafeRawBufferPointer, max: Int, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        WholeBufferCoding.run({ out, length in lunet_gunzip(input.baseAddress, input.count, max, &out, &length) },
                              what: "gunzip", library: "zlib (libz.so.1)", coding: "gzip", body)
    }
}
