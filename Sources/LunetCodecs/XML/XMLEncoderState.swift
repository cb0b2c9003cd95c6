import CLunetLua
import Glibc
import LunetLuaStack
import LunetCore

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

/// What `XMLEncoderState.readFields` found: the tag's bytes, and which of the optional fields
/// are present (each is the one type allowed, or nil).
private struct XMLElementFields {
    var tag: UnsafePointer<UInt8>
    var tagLength: Int
    var hasAttrs: Bool
    var hasNS: Bool
    var hasChildren: Bool
}

struct XMLEncoderState: TextEncoderState {
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
                    if !inline { out.newline(indent: depth) }
                    guard open(lua_gettop(L), inline: inline) else { return false }
                }
            } else {
                if !frame.pointee.inline { out.newline(indent: depth - 1) }
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
    /// The steps are the helpers below, in order; each checks what it reads, so the first
    /// problem found is the one reported (false, with `error` set).
    mutating func open(_ slot: Int32, inline: Bool) -> Bool {
        let pointer = lua_topointer(L, slot)
        guard checkElement(slot, pointer), let fields = readFields(slot) else { return false }
        let bindingMark = bindingCount
        var attributeCount = 0
        if fields.hasAttrs {
            guard collectAttributes(slot, &attributeCount) else { return false }
        }
        if fields.hasNS {
            guard declareNamespace(slot, fields.tag, fields.tagLength, bindingMark: bindingMark, &attributeCount) else { return false }
        }
        var count = 0
        var mixed = false
        if fields.hasChildren {
            guard checkChildren(slot, &count, &mixed) else { return false }
        }
        guard writeStartTag(slot, fields.tag, fields.tagLength, attributeCount) else { return false }
        if count == 0 {
            out.append(UInt8(ascii: "/"))
            out.append(UInt8(ascii: ">"))
            bindingCount = bindingMark
            lua_settop(L, slot - 1)
            return true
        }
        out.append(UInt8(ascii: ">"))
        if depth == frameCapacity { growStorage(&frames, &frameCapacity, minimum: 32, "the XML codec") }
        frames.unsafelyUnwrapped[depth] = XMLEncoderFrame(slot: slot, table: pointer, next: 1, count: count, inline: inline || mixed,
                                                          bindingMark: bindingMark, tag: fields.tag, tagLength: fields.tagLength)
        depth += 1
        return true
    }

    // MARK: the start tag

    /// Whether the value at `slot` can be written as an element here: a table, not one of the
    /// elements it is inside (`pointer` is its identity), not too deep, and with stack room for
    /// its fields.
    private mutating func checkElement(_ slot: Int32, _ pointer: UnsafeRawPointer?) -> Bool {
        let type = lua_type(L, slot)
        guard type == LUA_TTABLE else {
            if depth == 0 { return fail("cannot encode a \(typeName(type)) as an element (an element is a table with a tag)", "") }
            return fail("cannot encode a child of type \(typeName(type)) (children are strings and element tables)", "")
        }
        for d in 0..<depth where frames.unsafelyUnwrapped[d].table == pointer {
            return fail("cannot encode an element that contains itself", "")
        }
        guard depth < LuaXMLEncoder.maxDepth else { return fail("cannot encode: nesting deeper than \(LuaXMLEncoder.maxDepth) levels", "") }
        guard lua_checkstack(L, 16) != 0 else { return fail("cannot encode: the Lua stack is full", "") }
        return true
    }

    /// Pushes the element's fields to their slots (see XMLEncoderFrame) and checks their types:
    /// slot + 1 tag, + 2 attrs, + 3 ns, + 4 children, + 5 nil (for a declaration's name). The
    /// fields stay on the stack, so the tag's bytes stay valid while the element is open.
    private mutating func readFields(_ slot: Int32) -> XMLElementFields? {
        let tagType = lunet_rawgetfield(L, slot, "tag")
        guard tagType == LUA_TSTRING else {
            _ = fail("cannot encode an element without a string tag (got \(typeName(tagType)))", ".tag")
            return nil
        }
        var tagLength = 0
        let tag = UnsafeRawPointer(lua_tolstring(L, slot + 1, &tagLength)!).assumingMemoryBound(to: UInt8.self)
        guard isName(tag, tagLength) else {
            _ = fail("cannot encode the tag \(CodecText.quote(tag, tagLength)) (not a valid XML name)", ".tag")
            return nil
        }
        let attrsType = lunet_rawgetfield(L, slot, "attrs")
        guard attrsType == LUA_TTABLE || attrsType == LUA_TNIL else {
            _ = fail("cannot encode attrs of type \(typeName(attrsType)) (attrs must be a table of name = value)", ".attrs")
            return nil
        }
        let nsType = lunet_rawgetfield(L, slot, "ns")
        guard nsType == LUA_TSTRING || nsType == LUA_TNIL else {
            _ = fail("cannot encode ns of type \(typeName(nsType)) (ns must be a namespace URI string)", ".ns")
            return nil
        }
        let childrenType = lunet_rawgetfield(L, slot, "children")
        guard childrenType == LUA_TTABLE || childrenType == LUA_TNIL else {
            _ = fail("cannot encode children of type \(typeName(childrenType)) (children must be a list of strings and element tables)", ".children")
            return nil
        }
        lua_pushnil(L)
        return XMLElementFields(tag: tag, tagLength: tagLength, hasAttrs: attrsType == LUA_TTABLE,
                                hasNS: nsType == LUA_TSTRING, hasChildren: childrenType == LUA_TTABLE)
    }

    /// Adds the attrs table's attributes (at slot + 2) to `attributes`, checked; its namespace
    /// declarations (xmlns, xmlns:p) are also bound, for the element's ns and its children.
    private mutating func collectAttributes(_ slot: Int32, _ attributeCount: inout Int) -> Bool {
        lua_pushnil(L)
        while lua_next(L, slot + 2) != 0 {
            guard lua_type(L, -2) == LUA_TSTRING else {
                return fail("cannot encode an attribute name of type \(typeName(lua_type(L, -2))) (attribute names are strings)", ".attrs")
            }
            var n = 0
            let name = UnsafeRawPointer(lua_tolstring(L, -2, &n)!).assumingMemoryBound(to: UInt8.self)
            guard isName(name, n) else {
                return fail("cannot encode the attribute name \(CodecText.quote(name, n)) (not a valid XML name)", ".attrs" + keyPath(name, n))
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
                    return fail("cannot encode the namespace declaration \(CodecText.quote(name, n)) with a number (a namespace is a URI string)", ".attrs" + keyPath(name, n))
                }
                let prefix = n == 5 ? name + 5 : name + 6
                pushBinding(XMLBinding(prefix: prefix, prefixLength: n == 5 ? 0 : n - 6, uri: value, uriLength: valueLength))
            }
            addAttribute(&attributeCount, XMLAttribute(name: name, nameLength: n, value: value, valueLength: valueLength))
            lua_settop(L, -2)
        }
        return true
    }

    /// ns (at slot + 3): declares it, with an added xmlns attribute, unless the tag's prefix (or
    /// the default namespace) already means it here. The element's own attrs may not bind the
    /// prefix to something else: that is an error, not a silent override.
    private mutating func declareNamespace(_ slot: Int32, _ tag: UnsafePointer<UInt8>, _ tagLength: Int, bindingMark: Int,
                                           _ attributeCount: inout Int) -> Bool {
        var nsLength = 0
        let ns = UnsafeRawPointer(lua_tolstring(L, slot + 3, &nsLength)!).assumingMemoryBound(to: UInt8.self)
        guard nsLength > 0 else { return true }
        var prefixLength = 0
        if let colon = memchr(tag, Int32(UInt8(ascii: ":")), tagLength) {
            let c = UnsafeRawPointer(colon) - UnsafeRawPointer(tag)
            if c > 0 && c < tagLength - 1 { prefixLength = c }
        }
        let found = innermostBinding(tag, prefixLength)
        let bound = found?.binding
        let own = found.map { $0.index >= bindingMark } ?? false
        let same = bound.map { $0.uriLength == nsLength && memcmp($0.uri, ns, nsLength) == 0 } ?? false
        guard !same else { return true }
        if own, let b = bound {
            let attribute = prefixLength == 0 ? "xmlns" : "xmlns:" + String(decoding: UnsafeBufferPointer(start: tag, count: prefixLength), as: UTF8.self)
            return fail("cannot encode ns \(CodecText.quote(ns, nsLength)): the element's attribute \(attribute) declares \(CodecText.quote(b.uri, b.uriLength))", ".ns")
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
        return true
    }

    /// The binding in scope for a prefix (the first `prefixLength` bytes of `prefix`; 0 for the
    /// default namespace), innermost first, and its index in `bindings`.
    private func innermostBinding(_ prefix: UnsafePointer<UInt8>, _ prefixLength: Int) -> (binding: XMLBinding, index: Int)? {
        var i = bindingCount - 1
        while i >= 0 {
            let b = bindings.unsafelyUnwrapped[i]
            if b.prefixLength == prefixLength && memcmp(b.prefix, prefix, prefixLength) == 0 { return (b, i) }
            i -= 1
        }
        return nil
    }

    /// Checks the children list (at slot + 4) before anything of the element is written:
    /// strings and element tables only. `count` is its length; any text makes it `mixed`
    /// (written inline, as whitespace around text would change it).
    private mutating func checkChildren(_ slot: Int32, _ count: inout Int, _ mixed: inout Bool) -> Bool {
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
        return true
    }

    /// Writes "<tag" and the attributes, sorted by name (bytewise) so the output does not depend
    /// on the order of Lua's table traversal. The caller closes it with ">" or "/>".
    private mutating func writeStartTag(_ slot: Int32, _ tag: UnsafePointer<UInt8>, _ tagLength: Int, _ attributeCount: Int) -> Bool {
        var o = out.reserve(tagLength + 1)
        o[0] = UInt8(ascii: "<")
        (o + 1).update(from: tag, count: tagLength)
        out.count += tagLength + 1
        guard attributeCount > 0 else { return true }
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
                writeNumberAttribute(slot, a)
            }
            out.append(UInt8(ascii: "\""))
        }
        return true
    }

    /// A number attribute's value as Lua writes it, converted on a copy (the attrs table's own
    /// value stays a number).
    private mutating func writeNumberAttribute(_ slot: Int32, _ a: XMLAttribute) {
        lua_pushlstring(L, UnsafeRawPointer(a.name).assumingMemoryBound(to: CChar.self), a.nameLength)
        lua_rawget(L, slot + 2)
        var n = 0
        let text = UnsafeRawPointer(lua_tolstring(L, -1, &n)!).assumingMemoryBound(to: UInt8.self)
        out.append(text, n)
        lua_settop(L, -2)
    }
}
