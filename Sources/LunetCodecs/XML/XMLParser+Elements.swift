import CLunetLua
import Glibc

// MARK: - Elements

extension XMLParser {
    /// At '<' of a start tag: pushes the element table. An empty-element tag (`<a/>`) completes
    /// the element; otherwise it becomes the open element.
    ///
    /// One function on purpose (issue 34): it is the decoder's hot path, run for every element,
    /// and its loop runs for every attribute. The tag, the attrs table and the namespace lookup
    /// share its locals (the element's stack index, the attribute count, the name's bytes);
    /// split into helpers, those would be passed through calls the optimiser does not always
    /// inline, which costs instructions on every tag.
    mutating func parseStartTag() -> Bool {
        let lt = p
        if depth >= maxDepth { return fail(.tooDeep(maxDepth), at: lt) }
        guard lua_checkstack(L, 8) != 0 else { return fail(.luaStackExhausted, at: lt) }
        p += 1
        let name = p
        guard scanner.scanName("an element name after '<'; write &lt; for a '<' in text") else { return false }
        let nameLength = p - name
        // The element table, with its tag; the attributes wait above it.
        let element = lua_gettop(L) + 1
        lua_createtable(L, 0, 4)
        lua_pushvalue(L, tagKey)
        lua_pushlstring(L, UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self), nameLength)
        lua_rawset(L, element)

        var count = 0
        var declarations = false
        var empty = false
        while true {
            let space = scanner.skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("'>' to end the start tag"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: ">") {
                p += 1
                break
            }
            if c == UInt8(ascii: "/") {
                p += 1
                guard p < end && p.pointee == UInt8(ascii: ">") else { return scanner.failHere("'>' after '/' in a start tag") }
                p += 1
                empty = true
                break
            }
            guard space else { return fail(.unexpected("whitespace, '>' or '/>' after an attribute"), at: p) }
            guard lua_checkstack(L, 8) != 0 else { return fail(.luaStackExhausted, at: p) }
            let attribute = p
            guard scanner.scanName("an attribute name, '>' or '/>'") else { return false }
            let attributeLength = p - attribute
            if count == attrCapacity { growStorage(&attrOffsets, &attrCapacity, minimum: 16, "the XML codec") }
            attrOffsets.unsafelyUnwrapped[count] = attribute - start
            lua_pushlstring(L, UnsafeRawPointer(attribute).assumingMemoryBound(to: CChar.self), attributeLength)
            scanner.skipWhitespace()
            guard p < end && p.pointee == UInt8(ascii: "=") else {
                if p >= end { return fail(.unexpectedEnd("'=' after an attribute name"), at: p) }
                return fail(.unexpectedAttribute("'='", name: attribute - start, length: attributeLength), at: p)
            }
            p += 1
            scanner.skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("a quoted attribute value"), at: p) }
            guard p.pointee == UInt8(ascii: "\"") || p.pointee == UInt8(ascii: "'") else {
                return fail(.unexpectedAttribute("'\"' or ''' to open the value (values are quoted)", name: attribute - start, length: attributeLength), at: p)
            }
            guard parseAttributeValue() else { return false }
            if attributeLength >= 5 && memcmp(attribute, "xmlns", 5) == 0 && (attributeLength == 5 || (attributeLength > 6 && attribute[5] == UInt8(ascii: ":"))) {
                declarations = true
            }
            count += 1
        }

        // attrs: [element][name][value]... → a table of exactly that size; a name seen twice is
        // an error.
        lua_pushvalue(L, attrsKey)
        lua_createtable(L, 0, Int32(count))
        let attrs = element + 2 * Int32(count) + 2
        for i in 0..<Int32(count) {
            let k = element + 1 + 2 * i
            if count > 1 {
                lua_pushvalue(L, k)
                if lua_rawget(L, attrs) != LUA_TNIL {
                    let offset = attrOffsets.unsafelyUnwrapped[Int(i)]
                    var n = 0
                    _ = lua_tolstring(L, k, &n)
                    return fail(.duplicateAttribute(length: n), at: start + offset)
                }
                lua_settop(L, -2)
            }
            lua_pushvalue(L, k)
            lua_pushvalue(L, k + 1)
            lua_rawset(L, attrs)
        }
        lua_rawset(L, element)
        let undoMark = namespaces.undoCount
        if count > 0 {
            if declarations { namespaces.declare(element, count) }
            lua_settop(L, element)
        }

        // ns: what the prefix (or the default namespace) is bound to.
        var colon = 0
        while colon < nameLength && name[colon] != UInt8(ascii: ":") { colon += 1 }
        if colon > 0 && colon < nameLength - 1 {
            namespaces.lookUp(name, colon, element)
        } else if namespaces.hasDeclarations {
            namespaces.lookUp(name, 0, element)
        }
        if empty {
            lua_pushvalue(L, childrenKey)
            lua_createtable(L, 0, 0)
            lua_rawset(L, element)
            namespaces.restore(undoMark)
            return addChild()
        }
        if depth == frameCapacity { growStorage(&frames, &frameCapacity, minimum: 32, "the XML codec") }
        frames.unsafelyUnwrapped[depth] = XMLFrame(base: element, count: 0, direct: false, name: name, nameLength: nameLength, undoMark: undoMark)
        depth += 1
        return true
    }

    /// At "</": checks that it closes the open element, then completes it.
    mutating func parseEndTag() -> Bool {
        let lt = p
        p += 2
        let frame = frames.unsafelyUnwrapped + (depth - 1)
        let n = frame.pointee.nameLength
        if end - p > n && memcmp(p, frame.pointee.name, n) == 0 && p[n] < 0x80 && scanner.byteClass(p[n]) & 2 == 0 {
            p += n
        } else {
            let name = p
            guard scanner.scanName("the element name after '</'") else { return false }
            guard p - name == n && memcmp(name, frame.pointee.name, n) == 0 else {
                return fail(.mismatched(found: name - start, foundLength: p - name, open: frame.pointee.name - start, openLength: n), at: lt)
            }
        }
        scanner.skipWhitespace()
        guard p < end else { return fail(.unexpectedEnd("'>' to end the end tag"), at: p) }
        guard p.pointee == UInt8(ascii: ">") else { return fail(.unexpected("'>' to end the end tag"), at: p) }
        p += 1

        // The element's children go into its table.
        let base = frame.pointee.base
        if !frame.pointee.direct { makeChildren(frame, size: frame.pointee.count) }
        lua_pushvalue(L, childrenKey)
        lua_rotate(L, -2, 1)
        lua_rawset(L, base)
        namespaces.restore(frame.pointee.undoMark)
        depth -= 1
        return addChild()
    }

    /// The value on top completes an item of the open element (nothing to do for the root).
    @inline(__always)
    mutating func addChild() -> Bool {
        guard depth > 0 else { return true }
        let frame = frames.unsafelyUnwrapped + (depth - 1)
        if frame.pointee.direct {
            lua_rawseti(L, frame.pointee.base + 1, lua_Integer(frame.pointee.count + 1))
        }
        frame.pointee.count += 1
        if !frame.pointee.direct && frame.pointee.count >= Self.pendingLimit { makeChildren(frame) }
        if lua_checkstack(L, 8) == 0 {
            if !frame.pointee.direct { makeChildren(frame) }
            guard lua_checkstack(L, 8) != 0 else { return fail(.luaStackExhausted, at: p) }
        }
        return true
    }

    /// Makes the children table of the element at `frame` from the items piled above it, and
    /// leaves it at base + 1: from now on items go straight into it.
    mutating func makeChildren(_ frame: UnsafeMutablePointer<XMLFrame>, size: Int? = nil) {
        let base = frame.pointee.base
        let n = frame.pointee.count
        lua_createtable(L, Int32(clamping: size ?? 2 * n), 0)
        if n > 0 {
            lua_rotate(L, base + 1, 1)
            var i = lua_Integer(n)
            while i > 0 {
                lua_rawseti(L, base + 1, i)
                i -= 1
            }
        }
        frame.pointee.direct = true
    }

}
