/// The xorshift64 generator the randomised codec tests draw from: the same inputs on every run,
/// so a failure can be replayed.
struct Xorshift {
    var seed: UInt64

    init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { self.seed = seed }

    /// The next number below `n`.
    mutating func next(_ n: UInt64) -> UInt64 {
        seed ^= seed << 13
        seed ^= seed >> 7
        seed ^= seed << 17
        return seed % n
    }

    mutating func next(_ n: Int) -> Int { Int(next(UInt64(n))) }
}
