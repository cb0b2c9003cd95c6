import Glibc
import LunetCore

// MARK: - Reading descriptor.proto's messages

/// A failure reading the descriptor set: where, and what.
struct PBDescriptorError: Error {
    var problem: PBProblem
    var offset: Int
}

/// A reader over descriptor bytes for the loader (plain Swift; errors are thrown).
struct PBDescriptorReader {
    let start: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>

    init(_ start: UnsafePointer<UInt8>, _ p: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) {
        self.start = start
        self.p = p
        self.end = end
    }

    func failure(_ problem: PBProblem, at q: UnsafePointer<UInt8>) -> PBDescriptorError {
        PBDescriptorError(problem: problem, offset: q - start)
    }

    /// The next field's number and wire type, or nil at the end.
    mutating func next() throws -> (UInt64, UInt8)? {
        guard p < end else { return nil }
        let at = p
        let tag = try varint("a field tag")
        let field = tag >> 3
        guard field != 0 else { throw failure(.fieldNumberZero, at: at) }
        guard field <= PBWire.maxFieldNumber else { throw failure(.fieldNumberTooLarge(field), at: at) }
        return (field, UInt8(tag & 7))
    }

    mutating func varint(_ what: String) throws -> UInt64 {
        guard p < end else { throw failure(.truncatedVarint(what), at: p) }
        let at = p
        var v: UInt64 = 0
        switch PBWire.readVarint(&p, end, &v) {
        case .ok: return v
        case .truncated: throw failure(.truncatedVarint(what), at: at)
        case .overflow: throw failure(.varintOverflow(what), at: at)
        }
    }

    /// A length-delimited value: a reader over it (and moves past it).
    mutating func sub(_ what: String) throws -> PBDescriptorReader {
        let at = p
        let n = try varint("the length of \(what)")
        guard n <= UInt64(end - p) else { throw failure(.lengthPastEnd(n, end - p), at: at) }
        let r = PBDescriptorReader(start, p, p + Int(n))
        p += Int(n)
        return r
    }

    mutating func string(_ what: String) throws -> String {
        let r = try sub(what)
        return String(decoding: UnsafeBufferPointer(start: r.p, count: r.end - r.p), as: UTF8.self)
    }

    mutating func skip(_ field: UInt64, _ wire: UInt8) throws {
        switch wire {
        case PBWire.varint: _ = try varint("field \(field)")
        case PBWire.fixed64:
            guard end - p >= 8 else { throw failure(.truncatedFixed(8, "field \(field)"), at: p) }
            p += 8
        case PBWire.fixed32:
            guard end - p >= 4 else { throw failure(.truncatedFixed(4, "field \(field)"), at: p) }
            p += 4
        case PBWire.len: _ = try sub("field \(field)")
        case PBWire.startGroup: throw failure(.group(field), at: p)
        default: throw failure(.invalidWireType(wire, field), at: p)
        }
    }
}

/// The parts of descriptor.proto the codecs need, as read.
struct PBDescriptorSet {
    struct FieldProto {
        var name = ""
        var number: Int32 = 0
        var label: Int32 = 1            // 1 optional, 2 required, 3 repeated
        var type: UInt8 = 0
        var typeName = ""
        var defaultValue: String? = nil
        var oneofIndex: Int32 = -1
        var packed: Bool? = nil
        var proto3Optional = false
    }
    struct EnumProto {
        var name = ""
        var values: [(String, Int32)] = []
    }
    struct MessageProto {
        var name = ""
        var fields: [FieldProto] = []
        var nested: [MessageProto] = []
        var enums: [EnumProto] = []
        var oneofs: [String] = []
        var mapEntry = false
    }
    struct FileProto {
        var name = ""
        var package = ""
        var syntax = ""
        var messages: [MessageProto] = []
        var enums: [EnumProto] = []
    }

    var files: [FileProto] = []

    /// FileDescriptorSet { repeated FileDescriptorProto file = 1; }
    static func read(_ bytes: UnsafeRawBufferPointer) throws -> PBDescriptorSet {
        var set = PBDescriptorSet()
        guard bytes.count > 0, let raw = bytes.baseAddress else { return set }
        let start = raw.assumingMemoryBound(to: UInt8.self)
        var r = PBDescriptorReader(start, start, start + bytes.count)
        while let (field, wire) = try r.next() {
            if field == 1 && wire == PBWire.len {
                var sub = try r.sub("a FileDescriptorProto")
                set.files.append(try file(&sub))
            } else {
                try r.skip(field, wire)
            }
        }
        return set
    }

    static func file(_ r: inout PBDescriptorReader) throws -> FileProto {
        var f = FileProto()
        while let (field, wire) = try r.next() {
            switch (field, wire) {
            case (1, PBWire.len): f.name = try r.string("a file name")
            case (2, PBWire.len): f.package = try r.string("a package name")
            case (4, PBWire.len):
                var sub = try r.sub("a DescriptorProto")
                f.messages.append(try message(&sub))
            case (5, PBWire.len):
                var sub = try r.sub("an EnumDescriptorProto")
                f.enums.append(try enumType(&sub))
            case (12, PBWire.len): f.syntax = try r.string("a syntax name")
            default: try r.skip(field, wire)
            }
        }
        return f
    }

    static func message(_ r: inout PBDescriptorReader) throws -> MessageProto {
        var m = MessageProto()
        while let (field, wire) = try r.next() {
            switch (field, wire) {
            case (1, PBWire.len): m.name = try r.string("a message name")
            case (2, PBWire.len):
                var sub = try r.sub("a FieldDescriptorProto")
                m.fields.append(try fieldProto(&sub))
            case (3, PBWire.len):
                var sub = try r.sub("a nested DescriptorProto")
                m.nested.append(try message(&sub))
            case (4, PBWire.len):
                var sub = try r.sub("an EnumDescriptorProto")
                m.enums.append(try enumType(&sub))
            case (7, PBWire.len):
                // MessageOptions { optional bool map_entry = 7; }
                var sub = try r.sub("MessageOptions")
                while let (f, w) = try sub.next() {
                    if f == 7 && w == PBWire.varint { m.mapEntry = try sub.varint("map_entry") != 0 } else { try sub.skip(f, w) }
                }
            case (8, PBWire.len):
                // OneofDescriptorProto { optional string name = 1; }
                var sub = try r.sub("a OneofDescriptorProto")
                var name = ""
                while let (f, w) = try sub.next() {
                    if f == 1 && w == PBWire.len { name = try sub.string("a oneof name") } else { try sub.skip(f, w) }
                }
                m.oneofs.append(name)
            default: try r.skip(field, wire)
            }
        }
        return m
    }

    static func fieldProto(_ r: inout PBDescriptorReader) throws -> FieldProto {
        var f = FieldProto()
        while let (field, wire) = try r.next() {
            switch (field, wire) {
            case (1, PBWire.len): f.name = try r.string("a field name")
            case (3, PBWire.varint): f.number = Int32(truncatingIfNeeded: try r.varint("a field number"))
            case (4, PBWire.varint): f.label = Int32(truncatingIfNeeded: try r.varint("a label"))
            case (5, PBWire.varint): f.type = UInt8(truncatingIfNeeded: try r.varint("a field type"))
            case (6, PBWire.len): f.typeName = try r.string("a type name")
            case (7, PBWire.len): f.defaultValue = try r.string("a default value")
            case (8, PBWire.len):
                // FieldOptions { optional bool packed = 2; }
                var sub = try r.sub("FieldOptions")
                while let (o, w) = try sub.next() {
                    if o == 2 && w == PBWire.varint { f.packed = try sub.varint("packed") != 0 } else { try sub.skip(o, w) }
                }
            case (9, PBWire.varint): f.oneofIndex = Int32(truncatingIfNeeded: try r.varint("a oneof index"))
            case (17, PBWire.varint): f.proto3Optional = try r.varint("proto3_optional") != 0
            default: try r.skip(field, wire)
            }
        }
        return f
    }

    static func enumType(_ r: inout PBDescriptorReader) throws -> EnumProto {
        var e = EnumProto()
        while let (field, wire) = try r.next() {
            switch (field, wire) {
            case (1, PBWire.len): e.name = try r.string("an enum name")
            case (2, PBWire.len):
                var sub = try r.sub("an EnumValueDescriptorProto")
                var name = ""
                var number: Int32 = 0
                while let (f, w) = try sub.next() {
                    switch (f, w) {
                    case (1, PBWire.len): name = try sub.string("an enum value name")
                    case (2, PBWire.varint): number = Int32(truncatingIfNeeded: try sub.varint("an enum value number"))
                    default: try sub.skip(f, w)
                    }
                }
                e.values.append((name, number))
            default: try r.skip(field, wire)
            }
        }
        return e
    }
}
