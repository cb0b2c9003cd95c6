import CLunetLua
import Glibc
import LunetCore

// MARK: - Bookkeeping and errors

extension XMLEncoderState {
    mutating func pushBinding(_ b: XMLBinding) {
        if bindingCount == bindingCapacity { growStorage(&bindings, &bindingCapacity, minimum: 16, "the XML codec") }
        bindings.unsafelyUnwrapped[bindingCount] = b
        bindingCount += 1
    }

    mutating func addAttribute(_ count: inout Int, _ a: XMLAttribute) {
        if count == attributeCapacity { growStorage(&attributes, &attributeCapacity, minimum: 16, "the XML codec") }
        attributes.unsafelyUnwrapped[count] = a
        count += 1
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
        if CodecText.isIdentifier(s, n) { return "." + String(decoding: UnsafeBufferPointer(start: s, count: n), as: UTF8.self) }
        return "[" + CodecText.quote(s, n) + "]"
    }
}
