import CLunet
import LunetLuaStack
import Glibc
import LunetCore

/// A schema read from a `FileDescriptorSet` (what `protoc --descriptor_set_out=FILE
/// --include_imports` writes), flattened into plain arrays the codecs index without reference
/// counting: fields, messages, enums. Names the codecs push or look up live in a Lua table
/// kept with the schema's userdata (`ProtobufModule`): the strings at 1...names.count, then
/// one table per message (field name → field index) and one per enum (value name → number).
final class PBSchema {
    /// Descriptor field types (google.protobuf.FieldDescriptorProto.Type).
    enum FieldType {
        static let double: UInt8 = 1, float: UInt8 = 2, int64: UInt8 = 3, uint64: UInt8 = 4
        static let int32: UInt8 = 5, fixed64: UInt8 = 6, fixed32: UInt8 = 7, bool: UInt8 = 8
        static let string: UInt8 = 9, group: UInt8 = 10, message: UInt8 = 11, bytes: UInt8 = 12
        static let uint32: UInt8 = 13, `enum`: UInt8 = 14, sfixed32: UInt8 = 15, sfixed64: UInt8 = 16
        static let sint32: UInt8 = 17, sint64: UInt8 = 18

        static func name(_ t: UInt8) -> String {
            let names = ["?", "double", "float", "int64", "uint64", "int32", "fixed64", "fixed32", "bool", "string",
                         "group", "message", "bytes", "uint32", "enum", "sfixed32", "sfixed64", "sint32", "sint64"]
            return Int(t) < names.count ? names[Int(t)] : "type \(t)"
        }

        /// The wire type a value of this type is written with.
        @inline(__always)
        static func wire(_ t: UInt8) -> UInt8 {
            switch t {
            case double, fixed64, sfixed64: return PBWire.fixed64
            case float, fixed32, sfixed32: return PBWire.fixed32
            case string, message, bytes: return PBWire.len
            case group: return PBWire.startGroup
            default: return PBWire.varint
            }
        }
    }

    struct Field {
        var number: Int32
        var type: UInt8
        var repeated: Bool
        var packed: Bool            // written packed (a repeated scalar number)
        var map: Bool               // a repeated map-entry message
        var implicitPresence: Bool  // proto3 singular scalar outside a oneof: zero is not written
        var oneof: Int32            // index into `oneofNames`, or -1 (proto3 `optional` is not a oneof here)
        var typeIndex: Int32        // the message or enum of a message/enum field, else -1
        var nameRef: Int32          // the name's index in the Lua names table
        var message: Int32          // the message it belongs to
    }

    struct Message {
        var firstField: Int32
        var fieldCount: Int32
        var denseBase: Int32        // dense[denseBase + number] = field index or -1, for number < denseCount
        var denseCount: Int32
        var lookupRef: Int32        // Lua names table index of { field name = field index }
        var mapEntry: Bool
    }

    struct Enum {
        var firstValue: Int32       // values sorted by number (first declared kept for aliases)
        var valueCount: Int32
        var lookupRef: Int32        // Lua names table index of { value name = number }
        var defaultNumber: Int32    // the first declared value
        var defaultNameRef: Int32
    }

    struct EnumValue {
        var number: Int32
        var nameRef: Int32
    }

    let fields: UnsafeMutableBufferPointer<Field>
    let messages: UnsafeMutableBufferPointer<Message>
    let dense: UnsafeMutableBufferPointer<Int32>
    let enums: UnsafeMutableBufferPointer<Enum>
    let enumValues: UnsafeMutableBufferPointer<EnumValue>

    let messageNames: [String]
    let fieldNames: [String]
    let enumNames: [String]
    let oneofNames: [String]
    /// Default values as written in proto2 descriptors (`default_value`), by field index.
    let fieldDefaults: [String?]
    /// The Lua names table's strings, 1-based in Lua (names[0] is Lua's [1]).
    let names: [String]
    let messageIndex: [String: Int32]
    /// Each enum's values as declared (names and numbers, aliases included).
    let enumDeclarations: [[(String, Int32)]]

    init(fields: [Field], messages: [Message], dense: [Int32], enums: [Enum], enumValues: [EnumValue],
         messageNames: [String], fieldNames: [String], enumNames: [String], oneofNames: [String],
         fieldDefaults: [String?], names: [String], enumDeclarations: [[(String, Int32)]]) {
        func copy<T>(_ a: [T]) -> UnsafeMutableBufferPointer<T> {
            let b = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, a.count))
            _ = b.initialize(from: a)
            return UnsafeMutableBufferPointer(rebasing: b[0..<a.count])
        }
        self.fields = copy(fields)
        self.messages = copy(messages)
        self.dense = copy(dense)
        self.enums = copy(enums)
        self.enumValues = copy(enumValues)
        self.messageNames = messageNames
        self.fieldNames = fieldNames
        self.enumNames = enumNames
        self.oneofNames = oneofNames
        self.fieldDefaults = fieldDefaults
        self.names = names
        self.enumDeclarations = enumDeclarations
        var index: [String: Int32] = [:]
        for (i, name) in messageNames.enumerated() { index[name] = Int32(i) }
        self.messageIndex = index
    }

    deinit {
        fields.baseAddress.map { $0.deallocate() }
        messages.baseAddress.map { $0.deallocate() }
        dense.baseAddress.map { $0.deallocate() }
        enums.baseAddress.map { $0.deallocate() }
        enumValues.baseAddress.map { $0.deallocate() }
    }

    /// The field of message `m` with `number`, or -1.
    @inline(__always)
    func field(_ m: Int32, _ number: UInt64) -> Int32 {
        let message = messages[Int(m)]
        if number < UInt64(message.denseCount) {
            return dense[Int(message.denseBase) + Int(number)]
        }
        var lo = Int(message.firstField)
        var hi = lo + Int(message.fieldCount)
        while lo < hi {
            let mid = (lo + hi) >> 1
            let n = UInt64(fields[mid].number)
            if n == number { return Int32(mid) }
            if n < number { lo = mid + 1 } else { hi = mid }
        }
        return -1
    }

    /// The names-table index of the name of `number` in enum `e`, or 0 when it has none.
    @inline(__always)
    func enumName(_ e: Int32, _ number: Int32) -> Int32 {
        let en = enums[Int(e)]
        var lo = Int(en.firstValue)
        var hi = lo + Int(en.valueCount)
        while lo < hi {
            let mid = (lo + hi) >> 1
            let n = enumValues[mid].number
            if n == number { return enumValues[mid].nameRef }
            if n < number { lo = mid + 1 } else { hi = mid }
        }
        return 0
    }

    /// The full name of a field for messages: "pkg.Message.field".
    func fieldPath(_ f: Int32) -> String {
        messageNames[Int(fields[Int(f)].message)] + "." + fieldNames[Int(f)]
    }

    /// Message names for schema:messages(): all but the synthetic map entries, sorted.
    var listedMessages: [String] {
        messageNames.indices.filter { !messages[$0].mapEntry }.map { messageNames[$0] }.sorted()
    }
}

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

// MARK: - Building the schema

extension PBSchema {
    /// A schema from descriptor set bytes; throws PBDescriptorError for bytes that are not a
    /// descriptor set, or a LunetError (.decode) for one that does not hold together (a type
    /// it names but does not contain: made without --include_imports).
    static func load(_ bytes: UnsafeRawBufferPointer) throws -> PBSchema {
        let set = try PBDescriptorSet.read(bytes)

        // Every message and enum by full name ("pkg.Outer.Inner"), in a stable order.
        var messageProtos: [(name: String, proto: PBDescriptorSet.MessageProto, proto3: Bool)] = []
        var enumProtos: [(name: String, proto: PBDescriptorSet.EnumProto)] = []
        func collect(_ m: PBDescriptorSet.MessageProto, _ scope: String, _ proto3: Bool) {
            let name = scope.isEmpty ? m.name : scope + "." + m.name
            messageProtos.append((name, m, proto3))
            for e in m.enums { enumProtos.append((name + "." + e.name, e)) }
            for n in m.nested { collect(n, name, proto3) }
        }
        for file in set.files {
            let proto3 = file.syntax == "proto3"
            for m in file.messages { collect(m, file.package, proto3) }
            for e in file.enums { enumProtos.append((file.package.isEmpty ? e.name : file.package + "." + e.name, e)) }
        }
        var messageIndex: [String: Int32] = [:]
        for (i, m) in messageProtos.enumerated() {
            guard messageIndex[m.name] == nil else {
                throw LunetError(.decode, "protobuf: the descriptor set defines the message \(m.name) twice")
            }
            messageIndex[m.name] = Int32(i)
        }
        var enumIndex: [String: Int32] = [:]
        for (i, e) in enumProtos.enumerated() {
            guard enumIndex[e.name] == nil, messageIndex[e.name] == nil else {
                throw LunetError(.decode, "protobuf: the descriptor set defines the type \(e.name) twice")
            }
            enumIndex[e.name] = Int32(i)
        }

        var names: [String] = []
        var nameRefs: [String: Int32] = [:]
        func ref(_ s: String) -> Int32 {
            if let r = nameRefs[s] { return r }
            names.append(s)
            nameRefs[s] = Int32(names.count)
            return Int32(names.count)
        }

        /// A type name as a field gives it: ".pkg.Type" (what protoc writes), or relative to
        /// the message's scope, looked up from the innermost scope out.
        func resolve(_ typeName: String, scope: String) -> (isMessage: Bool, index: Int32)? {
            func find(_ full: String) -> (Bool, Int32)? {
                if let m = messageIndex[full] { return (true, m) }
                if let e = enumIndex[full] { return (false, e) }
                return nil
            }
            if typeName.hasPrefix(".") { return find(String(typeName.dropFirst())) }
            var s = Substring(scope)
            while true {
                if let found = find(s.isEmpty ? typeName : s + "." + typeName) { return found }
                if s.isEmpty { return nil }
                if let dot = s.lastIndex(of: ".") { s = s[..<dot] } else { s = "" }
            }
        }

        /// A map entry as protoc makes them: key = 1 of an integer, bool or string type, value = 2.
        func isMapEntry(_ m: PBDescriptorSet.MessageProto) -> Bool {
            guard m.mapEntry, m.fields.count == 2,
                  let key = m.fields.first(where: { $0.number == 1 }), m.fields.contains(where: { $0.number == 2 }) else { return false }
            return [FieldType.int64, FieldType.uint64, FieldType.int32, FieldType.fixed64, FieldType.fixed32, FieldType.bool,
                    FieldType.string, FieldType.uint32, FieldType.sfixed32, FieldType.sfixed64, FieldType.sint32,
                    FieldType.sint64].contains(key.type) && key.label != 3
        }

        var fields: [Field] = []
        var fieldNames: [String] = []
        var fieldDefaults: [String?] = []
        var oneofNames: [String] = []
        var messages: [Message] = []
        var dense: [Int32] = []
        for (mi, entry) in messageProtos.enumerated() {
            let proto = entry.proto
            let oneofBase = Int32(oneofNames.count)
            oneofNames.append(contentsOf: proto.oneofs)
            let first = Int32(fields.count)
            for f in proto.fields.sorted(by: { $0.number < $1.number }) {
                let where_ = "\(entry.name).\(f.name)"
                guard f.number > 0 && UInt64(f.number) <= PBWire.maxFieldNumber else {
                    throw LunetError(.decode, "protobuf: the field \(where_) has the invalid number \(f.number)")
                }
                var type = f.type
                var typeIndex: Int32 = -1
                if type == FieldType.message || type == FieldType.enum || type == FieldType.group || (type == 0 && !f.typeName.isEmpty) {
                    guard let found = resolve(f.typeName, scope: entry.name) else {
                        throw LunetError(.decode, "protobuf: the field \(where_) names the type \(f.typeName), which the descriptor set does not hold (was it made with --include_imports?)")
                    }
                    if type == 0 { type = found.isMessage ? FieldType.message : FieldType.enum }
                    guard found.isMessage == (type != FieldType.enum) else {
                        throw LunetError(.decode, "protobuf: the field \(where_) names the type \(f.typeName) of the wrong kind")
                    }
                    typeIndex = found.index
                }
                guard type >= 1 && type <= 18 else {
                    throw LunetError(.decode, "protobuf: the field \(where_) has the unknown type \(type)")
                }
                let repeated = f.label == 3
                let scalarNumber = FieldType.wire(type) != PBWire.len && type != FieldType.group
                let isMap = repeated && type == FieldType.message && isMapEntry(messageProtos[Int(typeIndex)].proto)
                let inOneof = f.oneofIndex >= 0 && !f.proto3Optional && Int(f.oneofIndex) < proto.oneofs.count
                fields.append(Field(
                    number: f.number, type: type, repeated: repeated,
                    packed: repeated && scalarNumber && (f.packed ?? entry.proto3),
                    map: isMap,
                    implicitPresence: entry.proto3 && !repeated && !inOneof && !f.proto3Optional && type != FieldType.message,
                    oneof: inOneof ? oneofBase + f.oneofIndex : -1,
                    typeIndex: typeIndex, nameRef: ref(f.name), message: Int32(mi)))
                fieldNames.append(f.name)
                fieldDefaults.append(f.defaultValue)
            }
            let count = Int32(fields.count) - first
            let largest = count > 0 ? fields[fields.count - 1].number : 0
            let denseCount = min(largest + 1, 1024)
            let denseBase = Int32(dense.count)
            var table = [Int32](repeating: -1, count: Int(denseCount))
            for i in first..<(first + count) where fields[Int(i)].number < denseCount {
                if table[Int(fields[Int(i)].number)] >= 0 {
                    throw LunetError(.decode, "protobuf: the message \(entry.name) has two fields numbered \(fields[Int(i)].number)")
                }
                table[Int(fields[Int(i)].number)] = i
            }
            dense.append(contentsOf: table)
            messages.append(Message(firstField: first, fieldCount: count, denseBase: denseBase, denseCount: denseCount,
                                    lookupRef: 0, mapEntry: proto.mapEntry))
        }

        var enums: [Enum] = []
        var enumValues: [EnumValue] = []
        for e in enumProtos {
            let first = Int32(enumValues.count)
            var seen = Set<Int32>()
            var values: [EnumValue] = []
            for (name, number) in e.proto.values where seen.insert(number).inserted {
                values.append(EnumValue(number: number, nameRef: ref(name)))
            }
            enumValues.append(contentsOf: values.sorted { $0.number < $1.number })
            let firstDeclared = e.proto.values.first
            enums.append(Enum(firstValue: first, valueCount: Int32(values.count), lookupRef: 0,
                              defaultNumber: firstDeclared?.1 ?? 0,
                              defaultNameRef: firstDeclared.map { ref($0.0) } ?? 0))
        }
        // The lookup tables follow the names.
        for i in messages.indices { messages[i].lookupRef = Int32(names.count + 1 + i) }
        for i in enums.indices { enums[i].lookupRef = Int32(names.count + 1 + messages.count + i) }

        return PBSchema(fields: fields, messages: messages, dense: dense, enums: enums, enumValues: enumValues,
                        messageNames: messageProtos.map(\.name), fieldNames: fieldNames,
                        enumNames: enumProtos.map(\.name), oneofNames: oneofNames,
                        fieldDefaults: fieldDefaults, names: names, enumDeclarations: enumProtos.map { $0.proto.values })
    }

    /// Pushes the Lua names table: the strings, then each message's { field name = field
    /// index } and each enum's { value name = number }.
    func pushNamesTable(_ L: OpaquePointer) {
        let s = LuaStack(L)
        lua_createtable(L, Int32(names.count + messages.count + enums.count), 0)
        for (i, name) in names.enumerated() {
            s.push(name)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
        for m in 0..<messages.count {
            let message = messages[m]
            lua_createtable(L, 0, message.fieldCount)
            for f in message.firstField..<(message.firstField + message.fieldCount) {
                s.push(fieldNames[Int(f)])
                lua_pushinteger(L, lua_Integer(f))
                lua_rawset(L, -3)
            }
            lua_rawseti(L, -2, lua_Integer(message.lookupRef))
        }
        for e in 0..<enums.count {
            let values = enumDeclarations[e]
            lua_createtable(L, 0, Int32(values.count))
            for (name, number) in values {
                s.push(name)
                lua_pushinteger(L, lua_Integer(number))
                lua_rawset(L, -3)
            }
            lua_rawseti(L, -2, lua_Integer(enums[e].lookupRef))
        }
    }
}
