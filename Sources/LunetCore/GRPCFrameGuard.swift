/// Reads gRPC's length-prefixed messages (a flag byte, a 4-byte big-endian length, the bytes) as
/// a body arrives, and says as soon as one announces more than `max` bytes: a unary answer is
/// otherwise read whole before its prefix is looked at, and a server that announces 2^31 bytes
/// and stalls held the call until its deadline (or for ever without one). Pure: the transfer
/// feeds it each piece of the body (Transfer.store).
public struct GRPCFrameGuard: Sendable, Equatable {
    public let max: Int
    /// Bytes of the current prefix read so far (0-5), its length being built, and the bytes of
    /// the current message still to skip.
    private var prefixRead = 0
    private var length = 0
    private var skip = 0
    /// The length the first message over `max` announced (nil while none has).
    public private(set) var announced: Int?

    public init(max: Int) { self.max = max }

    /// Feeds `bytes`; false once a message announces more than `max` (then `announced` says
    /// how much), true otherwise.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if announced != nil { return false }
        var i = 0
        let n = bytes.count
        while i < n {
            if skip > 0 {
                let take = Swift.min(skip, n - i)
                skip -= take
                i += take
                continue
            }
            // A prefix byte: the flag first, then four bytes of length.
            if prefixRead > 0 { length = length << 8 | Int(bytes[i]) }
            prefixRead += 1
            i += 1
            if prefixRead == 5 {
                if length > max {
                    announced = length
                    return false
                }
                (skip, prefixRead, length) = (length, 0, 0)
            }
        }
        return true
    }
}
