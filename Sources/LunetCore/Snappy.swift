import CLunetCodings
import Glibc

/// Snappy's block format through the system's libsnappy, opened on first use (the codings
/// shim's snappy.c): the body of a Prometheus remote-write request. `body` gets the result's
/// bytes, which live only while it runs.
public enum Snappy {
    public static func compress<T>(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        run({ out, length in lunet_snappy_compress(input.baseAddress, input.count, &out, &length) }, "snappy", body)
    }

    /// Refuses (kind too_large) a block whose header says it is longer than `max` bytes, before
    /// holding anything.
    public static func decompress<T>(_ input: UnsafeRawBufferPointer, max: Int, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        run({ out, length in lunet_snappy_uncompress(input.baseAddress, input.count, max, &out, &length) }, "unsnappy", body)
    }

    private static func run<T>(_ call: (inout UnsafeMutableRawPointer?, inout Int) -> Int32, _ what: String,
                               _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        var out: UnsafeMutableRawPointer?
        var length = 0
        switch Int(call(&out, &length)) {
        case Int(LUNET_SNAPPY_OK):
            defer { free(out) }
            return .success(body(UnsafeRawBufferPointer(start: out, count: length)))
        case Int(LUNET_SNAPPY_NO_LIBRARY):
            return .failure(LunetError(.io, "\(what): the system's libsnappy (libsnappy.so.1, Debian's libsnappy1v5) cannot be opened"))
        case Int(LUNET_SNAPPY_TOO_LARGE): return .failure(LunetError(.tooLarge, "\(what): the data would be larger than the limit"))
        case Int(LUNET_SNAPPY_NO_MEMORY): return .failure(LunetError(.io, "\(what): out of memory"))
        default: return .failure(LunetError(.decode, "\(what): not snappy data, or cut short"))
        }
    }
}
