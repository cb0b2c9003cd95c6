import CLunetLua
import Glibc
import LunetLuaStack

/// The encoder's first error message.
final class PBEncodeFailure {
    var message: String? = nil
}

/// Where the encoder is, for error messages: `$.items[2].id`.
struct PBPathEntry {
    static let field: UInt8 = 0      // value: a schema field index → ".name"
    static let number: UInt8 = 1     // value: a field number → "[n]"
    static let index: UInt8 = 2      // value: a 1-based list index → "[i]"
    static let key: UInt8 = 3        // value: the stack index of a map key or unknown name → `["k"]`, `[5]`
    static let name: UInt8 = 4       // value: the stack index of a string key → ".k" or `["k"]`
    var kind: UInt8
    var value: Int64
}

/// Lua tables encoded straight into protobuf bytes: the schemaless shape (tables keyed by
/// field number, each value a list of occurrences) and, with a schema, named fields. The
/// encoder recurses per nested message, so `maxDepth` is capped (`PBEncoder.depthCap`).
/// Never raises: raw table access, lua_next, pushes and lua_checkstack only.
struct PBEncoder {
    /// The deepest nesting encode accepts, whatever max_depth asks: it recurses on the C stack
    /// (and stops earlier, with an error, when the thread's stack runs low: `PBStack`).
    static let depthCap = 1000

    typealias FT = PBSchema.FieldType

    let L: OpaquePointer
    var out = PBWriter()
    let maxDepth: Int
    var depth = 0
    var tables: UnsafeMutablePointer<UnsafeRawPointer?>? = nil
    var tablesCapacity = 0
    var path: UnsafeMutablePointer<PBPathEntry>? = nil
    var pathCount = 0
    var pathCapacity = 0
    var scratch: UnsafeMutablePointer<Int64>? = nil
    var scratchCount = 0
    var scratchCapacity = 0
    let failure = PBEncodeFailure()
    /// This thread's stack (found on first use). Each level checks there is room left, so
    /// that a thread with a small stack gets an error rather than a crash.
    var stackBounds = PBStack.Bounds(floor: 0, high: 0)
    var haveStackBounds = false
    let schema: PBSchema?
    let names: Int32

    init(L: OpaquePointer, maxDepth: Int, schema: PBSchema? = nil, names: Int32 = 0) {
        self.L = L
        self.maxDepth = min(max(0, maxDepth), Self.depthCap)
        self.schema = schema
        self.names = names
    }

    mutating func release() {
        out.release()
        free(tables)
        free(path)
        free(scratch)
        tables = nil
        path = nil
        scratch = nil
    }

    // MARK: bookkeeping

    /// Before the fields of the message table at `t`: the depth and cycle checks.
    mutating func enter(_ t: Int32) -> Bool {
        let pointer = lua_topointer(L, t)
        for d in 0..<depth where tables.unsafelyUnwrapped[d] == pointer {
            return fail { "cannot encode a table that contains itself (a reference cycle)" }
        }
        guard depth <= maxDepth else { return fail { "cannot encode: messages nested deeper than \(maxDepth) levels" } }
        if !stackLeft() {
            return fail { "cannot encode: messages nested too deep for the C stack" }
        }
        guard lua_checkstack(L, 12) != 0 else { return fail { "cannot encode: the Lua stack is full" } }
        if depth == tablesCapacity { growStorage(&tables, &tablesCapacity, minimum: 16, "the protobuf codec") }
        tables.unsafelyUnwrapped[depth] = pointer
        depth += 1
        return true
    }

    @inline(__always)
    mutating func leave() { depth -= 1 }

    /// Whether at least 64 KB of this thread's stack are left below here.
    @inline(__always)
    mutating func stackLeft() -> Bool {
        if !haveStackBounds {
            stackBounds = PBStack.bounds()
            haveStackBounds = true
        }
        return PBStack.hasRoom(stackBounds)
    }

    @inline(__always)
    mutating func pushPath(_ kind: UInt8, _ value: Int64) {
        if pathCount == pathCapacity { growStorage(&path, &pathCapacity, minimum: 16, "the protobuf codec") }
        path.unsafelyUnwrapped[pathCount] = PBPathEntry(kind: kind, value: value)
        pathCount += 1
    }

    @inline(__always)
    mutating func popPath() { pathCount -= 1 }

    @inline(__always)
    mutating func addScratch(_ v: Int64) {
        if scratchCount == scratchCapacity { growStorage(&scratch, &scratchCapacity, minimum: 64, "the protobuf codec") }
        scratch.unsafelyUnwrapped[scratchCount] = v
        scratchCount += 1
    }

    mutating func sortScratch(from mark: Int) {
        let buffer = UnsafeMutableBufferPointer(start: scratch.map { $0 + mark }, count: scratchCount - mark)
        var b = buffer
        b.sort()
    }

    var error: String? { failure.message }

    /// The integer value of a number (a float only when it is integral), or nil.
    @inline(__always)
    func integer(_ i: Int32) -> Int64? {
        var isnum: Int32 = 0
        let v = lua_tointegerx(L, i, &isnum)
        return isnum != 0 && lua_type(L, i) == LUA_TNUMBER ? Int64(v) : nil
    }

    /// Counts the keys of the table at `t` and checks they are exactly 1..n (skipping the
    /// string key `allow` when given). Returns n, or nil after failing with `what`.
    mutating func listLength(_ t: Int32, allowing allow: String? = nil, _ what: @autoclosure () -> String) -> Int? {
        let n = Int(lua_rawlen(L, t))
        var count = 0
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            lua_settop(L, -2)
            if lua_type(L, -1) == LUA_TNUMBER && lua_isinteger(L, -1) != 0 {
                let k = lua_tointegerx(L, -1, nil)
                if k >= 1 && k <= n {
                    count += 1
                    continue
                }
                if k > n {
                    lua_settop(L, -2)
                    _ = fail { "cannot encode a table with holes as \(what()) (a list with keys 1..n expected)" }
                    return nil
                }
            } else if let allow, lua_type(L, -1) == LUA_TSTRING, LuaStack(L).string(-1) == allow {
                continue
            }
            let key = describeKey(-1)
            lua_settop(L, -2)
            _ = fail { "cannot encode a table with the key \(key) as \(what()) (a list with keys 1..n expected)" }
            return nil
        }
        guard count == n else {
            _ = fail { "cannot encode a table with holes as \(what()) (a list with keys 1..n expected)" }
            return nil
        }
        return n
    }
}
