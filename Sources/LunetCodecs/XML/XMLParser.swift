import CLunetLua
import Glibc

/// An open element. Its table is at `base`; its children wait on the stack above it until it
/// closes (or until there are `pendingLimit` of them: then its children table is made at
/// base + 1 and they go straight into it).
struct XMLFrame {
    var base: Int32
    var count: Int
    var direct: Bool
    var name: UnsafePointer<UInt8>
    var nameLength: Int
    var undoMark: Int
}

struct XMLParser {
    let L: OpaquePointer
    /// What reads the bytes; the parser builds the tables.
    var scanner: XMLScanner
    let keepWhitespace: Bool
    let maxDepth: Int

    // Fixed stack slots.
    let tagKey: Int32
    let attrsKey: Int32
    let childrenKey: Int32

    var frames: UnsafeMutablePointer<XMLFrame>? = nil
    var frameCapacity = 0
    var depth = 0
    var namespaces: XMLNamespaceScope

    /// The text run being gathered (its scratch also holds attribute values being unescaped).
    var text = XMLTextRun()

    var attrOffsets: UnsafeMutablePointer<Int>? = nil
    var attrCapacity = 0


    static let pendingLimit = 256

    init(L: OpaquePointer, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, slots base: Int32, options: LuaXMLDecoder.Options) {
        self.L = L
        self.scanner = XMLScanner(start: start, end: end, ignoreEncoding: options.ignoreEncoding)
        self.keepWhitespace = options.keepWhitespace
        self.maxDepth = max(1, options.maxDepth)
        tagKey = base + 1
        attrsKey = base + 2
        childrenKey = base + 3
        namespaces = XMLNamespaceScope(L: L, nsKey: base + 4, emptyKey: base + 5, table: base + 6, undo: base + 7,
                                       cache: base + 8, anyPointer: start)
    }

    mutating func release() {
        free(frames)
        text.scratch.release()
        free(attrOffsets)
        frames = nil
        attrOffsets = nil
    }

    // The scanner's position and bounds, read and moved by the parts that scan as they build
    // (text, attribute values, tags).
    var p: UnsafePointer<UInt8> {
        @inline(__always) get { scanner.p }
        @inline(__always) set { scanner.p = newValue }
    }
    var start: UnsafePointer<UInt8> { @inline(__always) get { scanner.start } }
    var end: UnsafePointer<UInt8> { @inline(__always) get { scanner.end } }

    @inline(__always)
    mutating func fail(_ problem: LuaXMLDecoder.Problem, at q: UnsafePointer<UInt8>) -> Bool {
        scanner.fail(problem, at: q)
    }
}
