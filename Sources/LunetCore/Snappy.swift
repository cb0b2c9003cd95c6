import CLunetCodings

/// Snappy's block format through the system's libsnappy, opened on first use (the codings
/// shim's snappy.c): the body of a Prometheus remote-write request. `body` gets the result's
/// bytes, which live only while it runs.
public enum Snappy {
    static let library = "libsnappy (libsnappy.so.1, Debian's libsnappy1v5)"

    public static func compress<T>(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        WholeBufferCoding.run({ out, length in lunet_snappy_compress(input.baseAddress, input.count, &out, &length) },
                              what: "snappy", library: library, coding: "snappy", body)
    }

    /// Refuses (kind too_large) a block whose header says it is longer than `max` bytes, before
    /// holding anything.
    public static func decompress<T>(_ input: UnsafeRawBufferPointer, max: Int, _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        WholeBufferCoding.run({ out, length in lunet_snappy_uncompress(input.baseAddress, input.count, max, &out, &length) },
                              what: "unsnappy", library: library, coding: "snappy", body)
    }
}
