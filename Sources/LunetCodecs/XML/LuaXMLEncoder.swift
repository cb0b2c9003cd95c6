import CLunet
import LunetLuaStack
import Glibc
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
        var writer = XMLWriter()
        defer { writer.release() }
        if let error = encode(L, index: index, options: options, writer: &writer) { return error }
        if writer.count > 0 { out.append(writer.base!, writer.count) }
        return nil
    }

    static func encode(_ L: OpaquePointer, index: Int32, options: Options, writer: inout XMLWriter) -> LunetError? {
        let top = lua_gettop(L)
        let mark = writer.count
        let element = lua_absindex(L, index)
        guard lua_checkstack(L, 16) != 0 else { return LunetError(.argument, "cannot encode: the Lua stack is full") }
        var encoder = XMLEncoderState(L: L, options: options)
        encoder.out = writer
        let ok = encoder.run(element)
        writer = encoder.out
        let error = encoder.error
        encoder.release()
        lua_settop(L, top)
        if !ok {
            writer.count = mark
            return error ?? LunetError(.argument, "cannot encode the element")
        }
        return nil
    }
}

// MARK: - Output

/// A growable byte buffer on the C heap, written through raw pointers.
typealias XMLWriter = ByteWriter

// MARK: - The encoder

/// An element being written: its table at `slot`, then its tag, attrs, ns, children and the
/// name of a declaration the encoder added (or nil) at slot + 1 … slot + 5.
struct XMLEncoderFrame {
    var slot: Int32
    var table: UnsafeRawPointer?
    var next: Int
    var count: Int
    var inline: Bool
    var bindingMark: Int
    var tag: UnsafePointer<UInt8>
    var tagLength: Int
}

/// A namespace binding in scope: prefix (empty for the default namespace) → URI. The bytes
/// belong to strings held by tables on the stack.
struct XMLBinding {
    var prefix: UnsafePointer<UInt8>
    var prefixLength: Int
    var uri: UnsafePointer<UInt8>
    var uriLength: Int
}

/// An attribute to write. A string value is kept as bytes; a number is converted when written.
struct XMLAttribute {
    var name: UnsafePointer<UInt8>
    var nameLength: Int
    var value: UnsafePointer<UInt8>?
    var valueLength: Int
}

struct XMLEncoderState {
    let L: OpaquePointer
    var out = XMLWriter()
    let pretty: Bool
    let declaration: Bool
    var frames: UnsafeMutablePointer<XMLEncoderFrame>? = nil
    var frameCapacity = 0
    var depth = 0
    var bindings: UnsafeMutablePointer<XMLBinding>? = nil
    var bindingCapacity = 0
    var bindingCount = 0
    var attributes: UnsafeMutablePointer<XMLAttribute>? = nil
    var attributeCapacity = 0
    var error: LunetError? = nil
    let classes: UnsafePointer<UInt8>

    init(L: OpaquePointer, options: LuaXMLEncoder.Options) {
        self.L = L
        self.pretty = options.pretty
        self.declaration = options.declaration
        self.classes = UnsafeRawPointer(xmlByteClasses.utf8Start).assumingMemoryBound(to: UInt8.self)
    }

    mutating func release() {
        free(frames)
        free(bindings)
        free(attributes)
        frames = nil
        bindings = nil
        attributes = nil
    }

    // MARK: the walk

    mutating func run(_ root: Int32) -> Bool {
        if declaration {
            out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            if pretty { out.append(0x0A) }
        }
        // The xml prefix is bound from the start.
        let xmlPrefix: StaticString = "xml"
        let xmlURI: StaticString = "http://www.w3.org/XML/1998/namespace"
        pushBinding(XMLBinding(prefix: xmlPrefix.utf8Start, prefixLength: 3, uri: xmlURI.utf8Start, uriLength: xmlURI.utf8CodeUnitCount))
        lua_pushvalue(L, root)
        guard open(lua_gettop(L), inline: !pretty) else { return false }
        while depth > 0 {
            let frame = frames.unsafelyUnwrapped + (depth - 1)
            if frame.pointee.next <= frame.pointee.count {
                let i = frame.pointee.next
                frame.pointee.next += 1
                let inline = frame.pointee.inline
                if lua_rawgeti(L, frame.pointee.slot + 4, lua_Integer(i)) == LUA_TSTRING {
                    var n = 0
                    let s = UnsafeRawPointer(lua_tolstring(L, -1, &n)!).assumingMemoryBound(to: UInt8.self)
                    guard escape(s, n, attribute: nil) else { return false }
                    lua_settop(L, -2)
                } else {
                    if !inline { newline(depth) }
                    guard open(lua_gettop(L), inline: inline) else { return false }
                }
            } else {
                if !frame.pointee.inline { newline(depth - 1) }
                let o = out.reserve(frame.pointee.tagLength + 3)
                o[0] = UInt8(ascii: "<")
                o[1] = UInt8(ascii: "/")
                (o + 2).update(from: frame.pointee.tag, count: frame.pointee.tagLength)
                o[frame.pointee.tagLength + 2] = UInt8(ascii: ">")
                out.count += frame.pointee.tagLength + 3
                bindingCount = frame.pointee.bindingMark
                lua_settop(L, frame.pointee.slot - 1)
                depth -= 1
            }
        }
        return true
    }

    /// Writes the start tag of the element at `slot` (the top of the stack) and, when it has
    /// children, makes it the open element; otherwise writes it whole and pops it.
    mutating func open(_ slot: Int32, inline: Bool) -> Bool {
        let type = lua_type(L, slot)
        guard type == LUA_TTABLE else {
            if depth == 0 { return fail("cannot encode a \(typeName(type)) as an element (an element is a table with a tag)", "") }
            return fail("cannot encode a child of type \(typeName(type)) (children are strings and element tables)", "")
        }
        let pointer = lua_topointer(L, slot)
        for d in 0..<depth where frames.unsafelyUnwrapped[d].table == pointer {
            return fail("cannot encode an element that contains itself", "")
        }
        guard depth < LuaXMLEncoder.maxDepth else { return fail("cannot encode: nesting deeper than \(LuaXMLEncoder.maxDepth) levels", "") }
        guard lua_checkstack(L, 16) != 0 else { return fail("cannot encode: the Lua stack is full", "") }

        // slot + 1: tag
        let tagType = lunet_rawgetfield(L, slot, "tag")
        guard tagType == LUA_TSTRING else {
            return fail("cannot encode an element without a string tag (got \(typeName(tagType)))", ".tag")
        }
        var tagLength = 0
        let tag = UnsafeRawPointer(lua_tolstring(L, slot + 1, &tagLength)!).assumingMemoryBound(to: UInt8.self)
        guard isName(tag, tagLength) else {
            return fail("cannot encode the tag \(quote(tag, tagLength)) (not a valid XML name)", ".tag")
        }
        // slot + 2: attrs, slot + 3: ns, slot + 4: children, slot + 5: an added declaration's name
        let attrsType = lunet_rawgetfield(L, slot, "attrs")
        guard attrsType == LUA_TTABLE || attrsType == LUA_TNIL else {
            return fail("cannot encode attrs of type \(typeName(attrsType)) (attrs must be a table of name = value)", ".attrs")
        }
        let nsType = lunet_rawgetfield(L, slot, "ns")
        guard nsType == LUA_TSTRING || nsType == LUA_TNIL else {
            return fail("cannot encode ns of type \(typeName(nsType)) (ns must be a namespace URI string)", ".ns")
        }
        let childrenType = lunet_rawgetfield(L, slot, "children")
        guard childrenType == LUA_TTABLE || childrenType == LUA_TNIL else {
            return fail("cannot encode children of type \(typeName(childrenType)) (children must be a list of strings and element tables)", ".children")
        }
        lua_pushnil(L)

        // Attributes, checked, with the namespace declarations among them.
        let bindingMark = bindingCount
        var attributeCount = 0
        if attrsType == LUA_TTABLE {
            lua_pushnil(L)
            while lua_next(L, slot + 2) != 0 {
                guard lua_type(L, -2) == LUA_TSTRING else {
                    return fail("cannot encode an attribute name of type \(typeName(lua_type(L, -2))) (attribute names are strings)", ".attrs")
                }
                var n = 0
                let name = UnsafeRawPointer(lua_tolstring(L, -2, &n)!).assumingMemoryBound(to: UInt8.self)
                guard isName(name, n) else {
                    return fail("cannot encode the attribute name \(quote(name, n)) (not a valid XML name)", ".attrs" + keyPath(name, n))
                }
                var value: UnsafePointer<UInt8>? = nil
                var valueLength = 0
                switch lua_type(L, -1) {
                case LUA_TSTRING:
                    value = UnsafeRawPointer(lua_tolstring(L, -1, &valueLength)!).assumingMemoryBound(to: UInt8.self)
                case LUA_TNUMBER:
                    break
                default:
                    return fail("cannot encode an attribute value of type \(typeName(lua_type(L, -1))) (values are strings or numbers)", ".attrs" + keyPath(name, n))
                }
                if n >= 5 && memcmp(name, "xmlns", 5) == 0 && (n == 5 || (n > 6 && name[5] == UInt8(ascii: ":"))) {
                    guard let value else {
                        return fail("cannot encode the namespace declaration \(quote(name, n)) with a number (a namespace is a URI string)", ".attrs" + keyPath(name, n))
                    }
                    let prefix = n == 5 ? name + 5 : name + 6
                    pushBinding(XMLBinding(prefix: prefix, prefixLength: n == 5 ? 0 : n - 6, uri: value, uriLength: valueLength))
                }
                addAttribute(&attributeCount, XMLAttribute(name: name, nameLength: n, value: value, valueLength: valueLength))
                lua_settop(L, -2)
            }
        }

        // ns: declare it unless it is what the prefix already means here.
        if nsType == LUA_TSTRING {
            var nsLength = 0
            let ns = UnsafeRawPointer(lua_tolstring(L, slot + 3, &nsLength)!).assumingMemoryBound(to: UInt8.self)
            if nsLength > 0 {
                var prefixLength = 0
                if let colon = memchr(tag, Int32(UInt8(ascii: ":")), tagLength) {
                    let c = UnsafeRawPointer(colon) - UnsafeRawPointer(tag)
                    if c > 0 && c < tagLength - 1 { prefixLength = c }
                }
                var bound: XMLBinding? = nil
                var own = false
                var i = bindingCount - 1
                while i >= 0 {
                    let b = bindings.unsafelyUnwrapped[i]
                    if b.prefixLength == prefixLength && memcmp(b.prefix, tag, prefixLength) == 0 {
                        bound = b
                        own = i >= bindingMark
                        break
                    }
                    i -= 1
                }
                let same = bound.map { $0.uriLength == nsLength && memcmp($0.uri, ns, nsLength) == 0 } ?? false
                if !same {
                    if own, let b = bound {
                        let attribute = prefixLength == 0 ? "xmlns" : "xmlns:" + String(decoding: UnsafeBufferPointer(start: tag, count: prefixLength), as: UTF8.self)
                        return fail("cannot encode ns \(quote(ns, nsLength)): the element's attribute \(attribute) declares \(quote(b.uri, b.uriLength))", ".ns")
                    }
                    // Declare it: "xmlns" or "xmlns:prefix", a string kept at slot + 5.
                    var name = "xmlns"
                    if prefixLength > 0 { name += ":" + String(decoding: UnsafeBufferPointer(start: tag, count: prefixLength), as: UTF8.self) }
                    LuaStack(L).push(name)
                    lunet_replace(L, slot + 5)
                    var n = 0
                    let declared = UnsafeRawPointer(lua_tolstring(L, slot + 5, &n)!).assumingMemoryBound(to: UInt8.self)
                    pushBinding(XMLBinding(prefix: tag, prefixLength: prefixLength, uri: ns, uriLength: nsLength))
                    addAttribute(&attributeCount, XMLAttribute(name: declared, nameLength: n, value: ns, valueLength: nsLength))
                }
            }
        }

        // Children: strings and element tables only; any text makes the element inline.
        var count = 0
        var mixed = false
        if childrenType == LUA_TTABLE {
            count = Int(lua_rawlen(L, slot + 4))
            for i in 0..<count {
                let i = i + 1
                let t = lua_rawgeti(L, slot + 4, lua_Integer(i))
                lua_settop(L, -2)
                if t == LUA_TSTRING {
                    mixed = true
                } else if t != LUA_TTABLE {
                    return fail("cannot encode a child of type \(typeName(t)) (children are strings and element tables)", ".children[\(i)]")
                }
            }
        }

        // The start tag.
        var o = out.reserve(tagLength + 1)
        o[0] = UInt8(ascii: "<")
        (o + 1).update(from: tag, count: tagLength)
        out.count += tagLength + 1
        if attributeCount > 0 {
            var list = UnsafeMutableBufferPointer(start: attributes.unsafelyUnwrapped, count: attributeCount)
            if attributeCount > 1 {
                list.sort { a, b in
                    let c = memcmp(a.name, b.name, min(a.nameLength, b.nameLength))
                    return c != 0 ? c < 0 : a.nameLength < b.nameLength
                }
            }
            for a in list {
                o = out.reserve(a.nameLength + 2)
                o[0] = UInt8(ascii: " ")
                (o + 1).update(from: a.name, count: a.nameLength)
                o[a.nameLength + 1] = UInt8(ascii: "=")
                out.count += a.nameLength + 2
                out.append(UInt8(ascii: "\""))
                if let value = a.value {
                    guard escape(value, a.valueLength, attribute: a) else { return false }
                } else {
                    // A number, as Lua writes it (converted on a copy).
                    lua_pushlstring(L, UnsafeRawPointer(a.name).assumingMemoryBound(to: CChar.self), a.nameLength)
                    lua_rawget(L, slot + 2)
                    var n = 0
                    let text = UnsafeRawPointer(lua_tolstring(L, -1, &n)!).assumingMemoryBound(to: UInt8.self)
                    out.append(text, n)
                    lua_settop(L, -2)
                }
                out.append(UInt8(ascii: "\""))
            }
        }
        if count == 0 {
            out.append(UInt8(ascii: "/"))
            out.append(UInt8(ascii: ">"))
            bindingCount = bindingMark
            lua_settop(L, slot - 1)
            return true
        }
        out.append(UInt8(ascii: ">"))
        if depth == frameCapacity { growFrames() }
        frames.unsafelyUnwrapped[depth] = XMLEncoderFrame(slot: slot, table: pointer, next: 1, count: count, inline: inline || mixed,
                                                          bindingMark: bindingMark, tag: tag, tagLength: tagLength)
        depth += 1
        return true
    }

    // MARK: text

    @inline(__always)
    mutating func newline(_ level: Int) {
        let o = out.reserve(1 + 2 * level)
        o.pointee = 0x0A
        (o + 1).initialize(repeating: 0x20, count: 2 * level)
        out.count += 1 + 2 * level
    }

    /// Writes `s` escaped for text or for a double-quoted attribute value, checking that it is
    /// UTF-8 of XML characters. Invariant: the room left at `o` is at least the input left plus
    /// 8 (a word store); an escape makes room again.
    /// `attribute` is the attribute whose value it is (nil for text): it names the path in errors.
    mutating func escape(_ s: UnsafePointer<UInt8>, _ n: Int, attribute: XMLAttribute?) -> Bool {
        var o = out.reserve(n + 8)
        var i = 0
        while i < n {
            if n - i >= 8 {
                let w = UInt64(littleEndian: UnsafeRawPointer(s + i).loadUnaligned(as: UInt64.self))
                UnsafeMutableRawPointer(o).storeBytes(of: w.littleEndian, as: UInt64.self)
                var special = XMLScan.equal(w, UInt8(ascii: "<")) | XMLScan.equal(w, UInt8(ascii: "&"))
                    | XMLScan.equal(w, UInt8(ascii: ">")) | XMLScan.controlOrHigh(w)
                if attribute != nil { special |= XMLScan.equal(w, UInt8(ascii: "\"")) }
                if special == 0 {
                    o += 8
                    i += 8
                    continue
                }
                let plain = special.trailingZeroBitCount >> 3
                o += plain
                i += plain
            }
            let c = s[i]
            if c >= 0x80 {
                let (u, k) = XMLScan.decodeUTF8(s + i, n - i)
                guard k > 0 else {
                    return failText("that is not valid UTF-8 (byte \(LuaXMLDecoder.hex(c)) at offset \(i + 1))", attribute)
                }
                guard k != 3 || u < 0xFFFE else { return failText("containing \(LuaXMLDecoder.codePoint(u)) (not allowed in XML)", attribute) }
                for j in 0..<k { o[j] = s[i + j] }
                o += k
                i += k
                continue
            }
            let replacement: StaticString
            switch c {
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "\"") where attribute != nil: replacement = "&quot;"
            case 0x0D: replacement = "&#13;"
            case 0x0A where attribute != nil: replacement = "&#10;"
            case 0x09 where attribute != nil: replacement = "&#9;"
            case 0x0A, 0x09, 0x20...0x7F:
                o.pointee = c
                o += 1
                i += 1
                continue
            default:
                return failText("containing \(LuaXMLDecoder.codePoint(UInt32(c))) (not allowed in XML)", attribute)
            }
            out.count = o - out.base.unsafelyUnwrapped
            o = out.reserve(n - i + 8 + 6)
            (o).update(from: replacement.utf8Start, count: replacement.utf8CodeUnitCount)
            o += replacement.utf8CodeUnitCount
            i += 1
        }
        out.count = o - out.base.unsafelyUnwrapped
        return true
    }

    @inline(never)
    mutating func failText(_ problem: String, _ attribute: XMLAttribute?) -> Bool {
        guard let a = attribute else { return fail("cannot encode text \(problem)", "") }
        return fail("cannot encode an attribute value \(problem)", ".attrs" + keyPath(a.name, a.nameLength))
    }

    // MARK: names

    /// Whether the bytes are an XML Name (XML 1.0 fifth edition).
    func isName(_ s: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n > 0 else { return false }
        var i = 0
        var first = true
        while i < n {
            let c = s[i]
            if c < 0x80 {
                let k = classes[Int(c)] &- UInt8(ascii: "0")
                guard k & (first ? 1 : 2) != 0 else { return false }
                i += 1
            } else {
                let (u, k) = XMLScan.decodeUTF8(s + i, n - i)
                guard k > 0, first ? XMLScan.isNameStart(u) : XMLScan.isNameChar(u) else { return false }
                i += k
            }
            first = false
        }
        return true
    }

    // MARK: bookkeeping

    mutating func pushBinding(_ b: XMLBinding) {
        if bindingCount == bindingCapacity {
            let capacity = max(16, bindingCapacity * 2)
            guard let grown = realloc(bindings, capacity * MemoryLayout<XMLBinding>.stride) else { xmlCodecOutOfMemory() }
            bindings = grown.assumingMemoryBound(to: XMLBinding.self)
            bindingCapacity = capacity
        }
        bindings.unsafelyUnwrapped[bindingCount] = b
        bindingCount += 1
    }

    mutating func addAttribute(_ count: inout Int, _ a: XMLAttribute) {
        if count == attributeCapacity {
            let capacity = max(16, attributeCapacity * 2)
            guard let grown = realloc(attributes, capacity * MemoryLayout<XMLAttribute>.stride) else { xmlCodecOutOfMemory() }
            attributes = grown.assumingMemoryBound(to: XMLAttribute.self)
            attributeCapacity = capacity
        }
        attributes.unsafelyUnwrapped[count] = a
        count += 1
    }

    @inline(never)
    mutating func growFrames() {
        let capacity = max(32, frameCapacity * 2)
        guard let grown = realloc(frames, capacity * MemoryLayout<XMLEncoderFrame>.stride) else { xmlCodecOutOfMemory() }
        frames = grown.assumingMemoryBound(to: XMLEncoderFrame.self)
        frameCapacity = capacity
    }

    // MARK: errors

    /// Records an `argument` error at the current element's path followed by `suffix`.
    @inline(never)
    mutating func fail(_ message: String, _ suffix: String) -> Bool {
        error = LunetError(.argument, "\(message) at \(pathString())\(suffix)")
        return false
    }

    func typeName(_ type: Int32) -> String { String(cString: lua_typename(L, type)) }

    /// `$.children[2].children[1]`: where the element being written is (long paths elided).
    func pathString() -> String {
        var text = "$"
        for d in 0..<depth {
            if depth > 40 && d == 20 { text += "…" }
            if depth > 40 && d >= 20 && d < depth - 10 { continue }
            text += ".children[\(frames.unsafelyUnwrapped[d].next - 1)]"
        }
        return text
    }

    /// `.name` for a Lua identifier, else `["name"]`.
    func keyPath(_ s: UnsafePointer<UInt8>, _ n: Int) -> String {
        let bytes = UnsafeBufferPointer(start: s, count: n)
        let identifier = n > 0 && !(s[0] >= UInt8(ascii: "0") && s[0] <= UInt8(ascii: "9")) && bytes.allSatisfy { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_")
        }
        return identifier ? "." + String(decoding: bytes, as: UTF8.self) : "[" + quote(s, n) + "]"
    }

    /// A string quoted for a message (printable ASCII as is, other bytes as \xNN; long ones cut).
    func quote(_ s: UnsafePointer<UInt8>, _ n: Int) -> String {
        var text = "\""
        for b in UnsafeBufferPointer(start: s, count: min(n, 60)) {
            switch b {
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(b))
            default: text += "\\x" + String(LuaXMLDecoder.hex(b).dropFirst(2))
            }
        }
        return text + (n > 60 ? "\"…" : "\"")
    }
}
