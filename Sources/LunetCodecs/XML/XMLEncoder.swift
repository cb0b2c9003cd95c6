import CLunetLua
import LunetCore

/// Element tables encoded straight into XML text: no Swift tree, no Swift string per node.
///
/// The rules (docs/xml.md has them with examples):
/// - an element is a table `{ tag = name, attrs = { name = value, … }, children = { … }, ns = uri }`;
///   `attrs`, `children` and `ns` may be absent. Other fields are ignored.
/// - `tag` and attribute names must be XML names; attribute values are strings or numbers;
///   children are strings (text) and element tables, `children[1..#children]`;
/// - attributes are written sorted by name (byte order), in double quotes; text escapes
///   `&` `<` `>` (and CR as `&#13;`), attribute values also `"`, tab, LF, CR, so that they read
///   back as they were; strings must be valid UTF-8 of XML characters;
/// - `ns`: when the tag's prefix (or the default namespace) is not bound to `ns` where the
///   element is written, an `xmlns`/`xmlns:prefix` attribute declaring it is added; an element
///   whose own `xmlns` attribute says otherwise is an error;
/// - an element without children is written `<tag/>`;
/// - options: `pretty` (one element per line, two spaces per level; an element with text
///   children is written on one line, since added whitespace would change its text) and
///   `declaration` (`<?xml version="1.0" encoding="UTF-8"?>` first).
/// Errors (kind `argument`) name the path of the offending value: `$.children[2].attrs.id`.
///
/// Iterative (the element tables being written wait on the Lua stack); never raises.
public enum LuaXMLEncoder {
    public struct Options: Sendable {
        public var pretty = false
        public var declaration = false
        public init() {}
    }

    public static let maxDepth = 1000

    /// Appends the XML text of the element at `index` to `out`, or returns an `argument` error
    /// (and leaves `out` as it was). The Lua stack is left as it was.
    public static func encode(_ L: OpaquePointer, index: Int32, options: Options, into out: ByteBuffer) -> LunetError? {
        ByteWriter.encode(into: out) { encode(L, index: index, options: options, writer: &$0) }
    }

    static func encode(_ L: OpaquePointer, index: Int32, options: Options, writer: inout XMLWriter) -> LunetError? {
        let top = lua_gettop(L)
        let element = lua_absindex(L, index)
        guard lua_checkstack(L, 16) != 0 else { return LunetError(.argument, "cannot encode: the Lua stack is full") }
        var encoder = XMLEncoderState(L: L, options: options)
        return encoder.encode(L, top: top, into: &writer, otherwise: "cannot encode the element") { $0.run(element) }
    }
}

// MARK: - Output

/// A growable byte buffer on the C heap, written through raw pointers.
typealias XMLWriter = ByteWriter
