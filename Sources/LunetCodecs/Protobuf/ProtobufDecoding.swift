import Glibc

/// What the two decoders (without and with a schema) share: an explicit stack of open
/// messages on the C heap, so nesting costs heap and never C stack, and the first failure,
/// where it happened.
protocol PBDecoding {
    associatedtype Frame
    var frames: UnsafeMutablePointer<Frame>? { get set }
    var frameCapacity: Int { get set }
    var failure: PBProblem? { get set }
    var failureAt: UnsafePointer<UInt8> { get set }
}

extension PBDecoding {
    mutating func release() {
        free(frames)
        frames = nil
    }

    @inline(__always)
    mutating func growFrames() {
        // Through locals: the two are properties of one value, which two inout arguments
        // cannot both hold.
        var storage = frames
        var capacity = frameCapacity
        growStorage(&storage, &capacity, minimum: 16, "the protobuf codec")
        frames = storage
        frameCapacity = capacity
    }

    @inline(never)
    mutating func fail(_ problem: PBProblem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureAt = q
        return false
    }
}
