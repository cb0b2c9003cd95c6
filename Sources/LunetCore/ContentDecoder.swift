import CLunetCodings

/// Removes a response body's content codings as its pieces arrive, in bounded memory: each
/// coding has a decoder (the codings shim) and a buffer of `bufferSize` bytes, and a piece is
/// handed on as soon as it is decoded (so max_body counts decoded bytes and stops a bomb after
/// at most one buffer more). Codings are undone in the reverse of the order the field lists
/// them (RFC 9110 §8.4: the list is the order they were applied).
final class ContentDecoder {
    enum Outcome: Equatable {
        case decoded
        /// `deliver` said stop (it holds the reason).
        case stopped
        /// The bytes are not in the coding the field names.
        case corrupt(String)
        case outOfMemory
    }

    static let bufferSize = 16 * 1024
    /// More codings than this are not removed (the body is handed through as it arrived, as
    /// for an unknown one): no real server stacks more, and each costs a decoder's memory.
    static let maxCodings = 4

    private struct Stage {
        let decoder: OpaquePointer
        let buffer: UnsafeMutablePointer<UInt8>
        let name: String
    }

    private var stages: [Stage] = []

    /// nil when there is nothing to remove (no coding, or only `identity`), or when the list
    /// names a coding lunet does not remove here, or more than `maxCodings`: the body is then
    /// handed through as it arrived, every coding left on.
    init?(codings value: String) {
        let names = ContentCodings.names(value).filter { $0 != "identity" }
        guard !names.isEmpty, names.count <= Self.maxCodings else { return nil }
        for name in names.reversed() {
            guard let coding = ContentCodings.coding(named: name), let decoder = lunet_decoder_new(coding) else {
                release()
                return nil
            }
            stages.append(Stage(decoder: decoder, buffer: .allocate(capacity: Self.bufferSize), name: name))
        }
    }

    deinit { release() }

    private func release() {
        for s in stages {
            lunet_decoder_free(s.decoder)
            s.buffer.deallocate()
        }
        stages.removeAll()
    }

    /// Whether every coding's data ended where it may end: a body that stopped elsewhere was cut.
    var complete: Bool { stages.allSatisfy { lunet_decoder_complete($0.decoder) != 0 } }
    /// The coding whose data did not end (for the message), the outermost first.
    var unfinishedCoding: String? { stages.first { lunet_decoder_complete($0.decoder) == 0 }?.name }

    /// Decodes `n` bytes, handing each decoded piece to `deliver` (which returns false to stop).
    func decode(_ data: UnsafeRawPointer, _ n: Int, _ deliver: (UnsafeRawPointer, Int) -> Bool) -> Outcome {
        feed(0, data.assumingMemoryBound(to: UInt8.self), n, deliver)
    }

    private func feed(_ level: Int, _ data: UnsafePointer<UInt8>, _ n: Int, _ deliver: (UnsafeRawPointer, Int) -> Bool) -> Outcome {
        let stage = stages[level]
        var input: UnsafePointer<UInt8>? = data
        var left = n
        while true {
            let before = left
            var produced = 0
            let rc = lunet_decoder_step(stage.decoder, &input, &left, stage.buffer, Self.bufferSize, &produced)
            if produced > 0 {
                let next = level + 1 < stages.count ? feed(level + 1, stage.buffer, produced, deliver)
                                                    : (deliver(stage.buffer, produced) ? .decoded : .stopped)
                if next != .decoded { return next }
            }
            switch Int(rc) {
            case Int(LUNET_DECODE_END): return .decoded   // bytes after the coded data are ignored
            case Int(LUNET_DECODE_CORRUPT): return .corrupt(stage.name)
            case Int(LUNET_DECODE_NO_MEMORY): return .outOfMemory
            default:
                // Room left and nothing more to read, or no progress at all: wait for more bytes.
                if (left == 0 && produced < Self.bufferSize) || (produced == 0 && left == before) { return .decoded }
            }
        }
    }
}
