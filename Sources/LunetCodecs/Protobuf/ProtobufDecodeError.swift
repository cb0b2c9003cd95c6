import LunetLuaStack

/// What went wrong while decoding, named for the message "protobuf: <problem> at byte B".
enum PBProblem {
    case truncatedVarint(String)
    case varintOverflow(String)
    case truncatedFixed(Int, String)
    case lengthPastEnd(UInt64, Int)
    case invalidWireType(UInt8, UInt64)
    case fieldNumberZero
    case fieldNumberTooLarge(UInt64)
    case group(UInt64)
    case endGroup(UInt64)
    case tooDeep(Int)
    case luaStackFull
    case invalidUTF8(String, UInt8)
    case other(String)

    var text: String {
        switch self {
        case .truncatedVarint(let what): return "truncated varint (\(what))"
        case .varintOverflow(let what): return "varint longer than 64 bits (\(what))"
        case .truncatedFixed(let n, let what): return "truncated \(n * 8)-bit value (\(what): \(n) bytes needed)"
        case .lengthPastEnd(let length, let left):
            return "length \(length) past the end of the message (\(left) byte\(left == 1 ? "" : "s") left)"
        case .invalidWireType(let wire, let field): return "invalid wire type \(wire) (field \(field))"
        case .fieldNumberZero: return "invalid field number 0"
        case .fieldNumberTooLarge(let n): return "field number \(n) out of range (the largest is 536870911)"
        case .group(let field): return "group (wire type 3, field \(field)) not supported: groups are deprecated"
        case .endGroup(let field): return "unexpected end of group (wire type 4, field \(field))"
        case .tooDeep(let n): return "nesting too deep (more than \(n) levels of messages)"
        case .luaStackFull: return "nesting too deep for the Lua stack"
        case .invalidUTF8(let field, let byte): return "invalid UTF-8 (byte \(CodecText.hex(byte))) in string field \(field)"
        case .other(let text): return text
        }
    }
}

/// Pushes the decode error object: "protobuf: <problem> at byte B", with `position` = B
/// (1-based).
func pbPushDecodeError(_ L: OpaquePointer, _ problem: PBProblem, offset: Int) {
    let position = offset + 1
    LuaErrorObject.push(L, .decode, "protobuf: \(problem.text) at byte \(position)")
    LuaStack(L).set(-1, "position", position)
}
