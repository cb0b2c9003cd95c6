import CLunetLua
import LunetLuaStack

/// One function of lunet.core as its concern declares it: its name, its body, and the
/// arguments it takes (luv's schema entries are the model). A function with arguments declared
/// is pushed as `checked`, which reads the stack against them first and raises the one message
/// form for the first that does not fit ("bad argument #2 to 'finalize_file' (to: a string
/// expected, got nil)"); its body then reads them knowing their kinds. A function declared with
/// none checks its own (the request path's: `send`, the response's reads, where the check is
/// the read itself).
struct CoreFunction {
    enum Kind {
        /// A string or a number (what lua_tolstring converts).
        case string
        /// A string only (bytes: a body, a file's text).
        case bytes
        case integer, number, table, function
        /// Anything: its truth is what counts (a flag).
        case flag

        var words: String {
            switch self {
            case .string, .bytes: return "a string"
            case .integer: return "an integer"
            case .number: return "a number"
            case .table: return "a table"
            case .function: return "a function"
            case .flag: return "a value"
            }
        }

        func fits(_ L: OpaquePointer, _ i: Int32) -> Bool {
            let t = lua_type(L, i)
            switch self {
            case .string: return t == LUA_TSTRING || t == LUA_TNUMBER
            case .bytes: return t == LUA_TSTRING
            case .integer:
                var isnum: Int32 = 0
                _ = lunet_tointegerx(L, i, &isnum)
                return t == LUA_TNUMBER && isnum != 0
            case .number: return t == LUA_TNUMBER
            case .table: return t == LUA_TTABLE
            case .function: return t == LUA_TFUNCTION
            case .flag: return true
            }
        }
    }

    struct Argument {
        let name: String
        let kind: Kind
        let nilAllowed: Bool
    }

    let name: String
    let body: lunet_SwiftFunction
    let arguments: [Argument]

    init(_ name: String, _ body: @escaping lunet_SwiftFunction, _ arguments: Argument...) {
        self.name = name
        self.body = body
        self.arguments = arguments
    }

    /// The first argument that does not fit, as the binding raises it; nil when all fit.
    func problem(_ L: OpaquePointer) -> (position: Int, words: String)? {
        for (i, a) in arguments.enumerated() {
            let index = Int32(i + 1)
            if a.nilAllowed && lua_type(L, index) <= LUA_TNIL { continue }
            if !a.kind.fits(L, index) {
                let got = String(cString: lua_typename(L, lua_type(L, index)))
                return (i + 1, "\(a.name): \(a.kind.words) expected, got \(got)")
            }
        }
        return nil
    }

    /// Pushes the function: as is, or through `checked` with its index as the upvalue.
    func push(_ s: LuaStack, index: Int) {
        if arguments.isEmpty {
            s.pushFunction(body)
            return
        }
        s.push(index)
        s.pushFunction(Self.checked, upvalues: 1)
    }

    /// Checks the arguments declared for the function whose index is the upvalue, then runs it.
    static let checked: lunet_SwiftFunction = { L in
        let L = L!
        let index = Int(lua_tointegerx(L, lunet_upvalue(1), nil))
        let f = CoreModule.all[index]
        if let (position, words) = f.problem(L) { return LuaErrorObject.badArgument(L, position, f.name, words) }
        return f.body(L)
    }
}

extension CoreFunction.Argument {
    static func string(_ name: String) -> Self { .init(name: name, kind: .string, nilAllowed: false) }
    static func bytes(_ name: String) -> Self { .init(name: name, kind: .bytes, nilAllowed: false) }
    static func integer(_ name: String) -> Self { .init(name: name, kind: .integer, nilAllowed: false) }
    static func number(_ name: String) -> Self { .init(name: name, kind: .number, nilAllowed: false) }
    static func table(_ name: String) -> Self { .init(name: name, kind: .table, nilAllowed: false) }
    static func function(_ name: String) -> Self { .init(name: name, kind: .function, nilAllowed: false) }
    static func flag(_ name: String) -> Self { .init(name: name, kind: .flag, nilAllowed: true) }
    /// The same argument, which may be nil (or left out).
    var optional: Self { .init(name: name, kind: kind, nilAllowed: true) }
}
