import CLunetLua
import Glibc

/// XML 1.0 (UTF-8) decoded straight onto a Lua stack: no Swift tree, no Swift strings. Names
/// and plain text are pushed with `lua_pushlstring` from the input itself; only text or values
/// with references, CR line ends or interleaved comments go through one scratch buffer reused
/// for the whole document.
///
/// The result is the root element as an element table (docs/xml.md has the full rules):
/// `{ tag = "soap:Envelope", ns = "http://…", attrs = { name = value, … }, children = { … } }`
/// - `tag` is the qualified name as written; `ns` is the URI its prefix (or the default
///   `xmlns`) is bound to, absent when there is none; `xmlns` attributes stay in `attrs`;
/// - `attrs` and `children` are always tables; children are element tables and strings, in
///   document order. Text, CDATA sections and references between two tags are one string
///   (comments and processing instructions in between are dropped and do not split it);
///   a string that is only whitespace written as such is dropped unless `keepWhitespace`;
/// - line ends are normalized (CR LF and CR → LF), and attribute values get XML's
///   normalization (literal tab, LF and CR → space);
/// - entities: the five predefined and character references; a DOCTYPE is skipped whole, its
///   declarations never read, so an entity it declares is an unknown entity (an error);
/// - the XML declaration, comments, processing instructions are skipped; a declared encoding
///   other than UTF-8 is an error unless `ignoreEncoding` (the bytes were converted already);
/// - every well-formedness error is a `decode` error naming the place. The parser is
///   iterative: depth is limited by `maxDepth` (default 1000), never by the C stack.
///
/// Never raises: every Lua call it makes is a push, a raw table access or lua_checkstack.
public enum LuaXMLDecoder {
    public static let defaultMaxDepth = 1000

    public struct Options: Sendable {
        /// Keep text that is only whitespace (indentation between elements).
        public var keepWhitespace = false
        /// Elements nested deeper than this are an error.
        public var maxDepth = LuaXMLDecoder.defaultMaxDepth
        /// Read the bytes as UTF-8 whatever the XML declaration says (they were converted).
        public var ignoreEncoding = false
        public init() {}
    }

    /// Decodes `bytes` and pushes the root element (returns 1), or pushes a `decode` error
    /// object with `message`, `position` (1-based byte offset), `line` and `column` (returns
    /// LUNET_RAISE). Either way the stack ends exactly one value above where it was.
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, options: Options = Options()) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 16) != 0 else {
            pushError(L, bytes, offset: 0, .luaStackExhausted)
            return LUNET_RAISE
        }
        guard bytes.count > 0, let raw = bytes.baseAddress else {
            pushError(L, bytes, offset: 0, .emptyInput)
            return LUNET_RAISE
        }
        // Fixed slots while parsing: the field names, the empty string (the default namespace's
        // key), the prefix → URI table in scope, the undo list of namespace declarations, and
        // the last namespace looked up.
        lua_pushlstring(L, "tag", 3)
        lua_pushlstring(L, "attrs", 5)
        lua_pushlstring(L, "children", 8)
        lua_pushlstring(L, "ns", 2)
        lua_pushlstring(L, "", 0)
        lua_createtable(L, 0, 4)
        lua_pushlstring(L, "xml", 3)
        lua_pushlstring(L, xmlNamespace, strlen(xmlNamespace))
        lua_rawset(L, -3)
        lua_createtable(L, 8, 0)
        lua_pushnil(L)

        let start = raw.assumingMemoryBound(to: UInt8.self)
        var parser = XMLParser(L: L, start: start, end: start + bytes.count, slots: base, options: options)
        let ok = parser.parseDocument()
        let failure = parser.scanner.failure
        let offset = parser.scanner.failureOffset
        parser.release()
        return TextDecodeError.finish(L, base: base, ok: ok, codec: "XML", { failure.text(bytes, offset) }, bytes, offset: offset)
    }

    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// Pushes the decode error object: "XML: <problem> at line L, column C (byte B)".
    static func pushError(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, offset: Int, _ problem: Problem) {
        TextDecodeError.push(L, codec: "XML", problem.text(bytes, offset), bytes, offset: offset)
    }
}
