import CLunetLua
import LunetLuaStack
import Glibc
import LunetCore

/// Protobuf bytes decoded with a schema, straight onto a Lua stack (docs/protobuf.md, "With a
/// schema"): a table of named fields per message; scalars by their declared type; enums as
/// value names (unknown numbers as numbers); repeated fields as lists, packed or not; maps as
/// tables keyed by the map key; nested messages as tables (a message that occurs twice is
/// merged into the first, as protobuf does); oneofs as their one member that was set last;
/// unknown fields (and fields with an unexpected wire type) under their field number, as
/// `protobuf.decode` gives them, or dropped with `unknown = false`.
///
/// Iterative: the depth limit, not the C stack, stops deep input. Never raises.
struct PBSchemaDecoder: PBDecoding {
    struct Options {
        var maxDepth = PBWire.defaultMaxDepth
        var keepUnknown = true
        var defaults = false
    }

    /// Decodes `bytes` as message `message` and pushes the table (returns 1), or pushes a
    /// `decode` error object (returns LUNET_RAISE): exactly one value more on the stack.
    /// `names` is the absolute index of the schema's names table.
    static func decode(_ L: OpaquePointer, _ schema: PBSchema, names: Int32, message: Int32,
                       _ bytes: UnsafeRawBufferPointer, _ options: Options) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 16) != 0 else {
            pbPushDecodeError(L, .luaStackFull, offset: 0)
            return LUNET_RAISE
        }
        guard bytes.count > 0, let raw = bytes.baseAddress else {
            // No bytes: the empty message (the decoder still runs, for `defaults`).
            var zero: UInt8 = 0
            return withUnsafeMutablePointer(to: &zero) { p in
                run(L, schema, names: names, message: message, start: p, count: 0, options, base: base)
            }
        }
        return run(L, schema, names: names, message: message, start: raw.assumingMemoryBound(to: UInt8.self),
                   count: bytes.count, options, base: base)
    }

    private static func run(_ L: OpaquePointer, _ schema: PBSchema, names: Int32, message: Int32,
                            start: UnsafePointer<UInt8>, count: Int, _ options: Options, base: Int32) -> Int32 {
        var d = PBSchemaDecoder(L: L, schema: schema, names: names, start: start, end: start + count,
                                message: message, options: options)
        let ok = d.run()
        return d.finish(L, ok: ok, base: base, start: start)
    }

    typealias FT = PBSchema.FieldType

    /// An open message. Its table is at `table`; a list element's list, or a map entry's map,
    /// is just below it.
    struct Frame {
        var message: Int32
        var end: UnsafePointer<UInt8>
        var table: Int32
        var kind: UInt8
    }
    static let root: UInt8 = 0, singular: UInt8 = 1, element: UInt8 = 2, mapEntry: UInt8 = 3

    let L: OpaquePointer
    let schema: PBSchema
    let fields: UnsafeMutablePointer<PBSchema.Field>
    let names: Int32
    var cursor: PBCursor
    /// Where the decoder reads next (the cursor's position).
    var p: UnsafePointer<UInt8> {
        @inline(__always) get { cursor.p }
        @inline(__always) set { cursor.p = newValue }
    }
    let maxDepth: Int
    let keepUnknown: Bool
    let defaults: Bool
    var frames: UnsafeMutablePointer<Frame>? = nil
    var frameCapacity = 0
    var depth = 0
    /// The wire states of unknown fields' occurrence lists, by the list (its address), with the
    /// list's length when the state was kept: a message field that comes twice is one table,
    /// merged, and its list carries on in the second part. A list can be collected during the
    /// decode (a map entry's, a oneof member's replaced) and its address given to a new one:
    /// a new list is empty, and a state whose length is not the list's is not its.
    var states: [UInt: (state: UInt8, count: lua_Integer)] = [:]

    init(L: OpaquePointer, schema: PBSchema, names: Int32, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>,
         message: Int32, options: Options) {
        self.L = L
        self.schema = schema
        self.fields = schema.fields.baseAddress ?? UnsafeMutablePointer(bitPattern: MemoryLayout<PBSchema.Field>.alignment)!
        self.names = names
        self.cursor = PBCursor(start)
        self.maxDepth = max(0, options.maxDepth)
        self.keepUnknown = options.keepUnknown
        self.defaults = options.defaults
        growFrames()
        lua_createtable(L, 0, 4)
        frames.unsafelyUnwrapped[0] = Frame(message: message, end: end, table: lua_gettop(L), kind: Self.root)
    }

    mutating func run() -> Bool {
        let schema = self.schema
        while true {
            let f = frames.unsafelyUnwrapped + depth
            let end = f.pointee.end
            if p == end {
                if !close() { return true }
                continue
            }
            let tagAt = p
            guard let (number, wire) = cursor.readTag(end) else { return false }
            let fi = schema.field(f.pointee.message, number)
            guard fi >= 0 else {
                guard unknown(f.pointee.table, number, wire, tagAt, end) else { return false }
                continue
            }
            let fd = fields[Int(fi)]
            let expected = FT.wire(fd.type)
            if wire != expected {
                if wire == PBWire.len && fd.repeated && expected != PBWire.len && expected != PBWire.startGroup {
                    guard packed(f.pointee.table, fi, number, end) else { return false }
                    continue
                }
                if expected == PBWire.startGroup && wire == PBWire.startGroup {
                    return cursor.fail(.group(number), at: tagAt)
                }
                guard unknown(f.pointee.table, number, wire, tagAt, end) else { return false }
                continue
            }
            switch wire {
            case PBWire.startGroup:
                return cursor.fail(.group(number), at: tagAt)
            case PBWire.varint:
                var v: UInt64 = 0
                guard cursor.readVarint(end, "field \(schema.fieldPath(fi))", &v) else { return false }
                pushVarint(fd, v)
            case PBWire.fixed64:
                guard end - p >= 8 else { return cursor.fail(.truncatedFixed(8, "field \(schema.fieldPath(fi))"), at: p) }
                pushFixed64(fd.type, PBWire.loadFixed64(p))
                p += 8
            case PBWire.fixed32:
                guard end - p >= 4 else { return cursor.fail(.truncatedFixed(4, "field \(schema.fieldPath(fi))"), at: p) }
                pushFixed32(fd.type, PBWire.loadFixed32(p))
                p += 4
            default:
                var n = 0
                guard cursor.readLength(end, number, &n) else { return false }
                if fd.type == FT.message {
                    guard open(f.pointee.table, fi, fd, n, tagAt) else { return false }
                    continue
                }
                if fd.type == FT.string {
                    let bad = PBWire.invalidUTF8Offset(p, n)
                    if bad >= 0 { return cursor.fail(.invalidUTF8(schema.fieldPath(fi), p[bad]), at: p + bad) }
                }
                lua_pushlstring(L, UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self), n)
                p += n
            }
            store(f.pointee.table, fi, fd)
        }
    }
}
