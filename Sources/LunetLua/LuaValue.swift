import CLunetLua
import LunetLuaStack
import LunetCore

/// Plain Lua data as a Swift value, for passing results in and out of a host. Tables become
/// arrays (keys 1...n) or string-keyed dictionaries; what cannot be copied (functions,
/// userdata, threads) is described by its type name.
public enum LuaValue: Equatable, Sendable, CustomStringConvertible {
    case `nil`
    case boolean(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([LuaValue])
    case table([String: LuaValue])
    case other(String)

    public var description: String {
        switch self {
        case .nil: "nil"
        case .boolean(let b): String(b)
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .string(let s): s
        case .array(let a): "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .table(let t): "{" + t.keys.sorted().map { "\($0) = \(t[$0]!)" }.joined(separator: ", ") + "}"
        case .other(let name): "(\(name))"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var intValue: Int? { if case .integer(let i) = self { return i }; return nil }

    /// Copies the value at `index` (tables to `depth` levels).
    public init(_ L: OpaquePointer, at index: Int32, depth: Int = 16) {
        let s = LuaStack(L)
        let i = s.absolute(index)
        switch s.type(i) {
        case LUA_TNIL, LUA_TNONE: self = .nil
        case LUA_TBOOLEAN: self = .boolean(s.bool(i))
        case LUA_TNUMBER:
            if lua_isinteger(L, i) != 0 { self = .integer(s.integer(i)!) } else { self = .number(s.number(i)!) }
        case LUA_TSTRING: self = .string(s.string(i)!)
        case LUA_TTABLE where depth > 0 && s.ensure(4):
            let n = s.rawLength(i)
            var count = 0
            s.forEach(i) { count += 1 }
            if n > 0 && count == n {
                var items: [LuaValue] = []
                for k in 1...n { s.rawIndex(i, k); items.append(LuaValue(L, at: -1, depth: depth - 1)); s.pop() }
                self = .array(items)
            } else {
                var dict: [String: LuaValue] = [:]
                s.forEach(i) {
                    if s.type(-2) == LUA_TSTRING, let k = s.string(-2) { dict[k] = LuaValue(L, at: -1, depth: depth - 1) }
                    else if s.type(-2) == LUA_TNUMBER {
                        // A copy, so that lua_tolstring does not change the key lua_next walks.
                        s.pushValue(-2); dict[s.string(-1)!] = LuaValue(L, at: -2, depth: depth - 1); s.pop()
                    }
                }
                self = .table(dict)
            }
        default: self = .other(s.typeName(i))
        }
    }

    /// Pushes a copy of the value.
    public func push(_ L: OpaquePointer) {
        let s = LuaStack(L)
        switch self {
        case .nil, .other: s.pushNil()
        case .boolean(let b): s.push(b)
        case .integer(let i): s.push(i)
        case .number(let d): s.push(d)
        case .string(let str): s.push(str)
        case .array(let items):
            s.newTable(array: Int32(items.count))
            for (k, v) in items.enumerated() { v.push(L); s.setRawIndex(-2, k + 1) }
        case .table(let dict):
            s.newTable(hash: Int32(dict.count))
            for (k, v) in dict { v.push(L); s.setRawField(-2, k) }
        }
    }
}

/// What a Lua error became in Swift: a lunet error object keeps its kind; anything else is a
/// script error with its message.
public enum LuaFailure: Error, Equatable, CustomStringConvertible {
    case lunet(LunetError.Kind, message: String, url: String?)
    case script(String)
    case cancelled(String)

    public var description: String {
        switch self {
        case .lunet(let k, let m, let u): u.map { "\(k.rawValue): \(m) (\($0))" } ?? "\(k.rawValue): \(m)"
        case .script(let m): m
        case .cancelled(let m): "cancelled: \(m)"
        }
    }

    /// The error value at `index`.
    init(_ L: OpaquePointer, at index: Int32) {
        let s = LuaStack(L)
        let i = s.absolute(index)
        if s.type(i) == LUA_TTABLE, let kindName = s.stringField(i, "kind"), let kind = LunetError.Kind(rawValue: kindName) {
            let message = s.stringField(i, "message") ?? ""
            self = kind == .cancelled ? .cancelled(message) : .lunet(kind, message: message, url: s.stringField(i, "url"))
        } else {
            self = .script(LuaHost.from(L).describeError(at: i))
        }
    }
}
