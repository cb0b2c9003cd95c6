import CLunetLua
import Glibc
import LunetCore
import LunetLuaStack

// MARK: - Building the schema

extension PBSchema {
    /// A schema from descriptor set bytes; throws PBDescriptorError for bytes that are not a
    /// descriptor set, or a LunetError (.decode) for one that does not hold together (a type
    /// it names but does not contain: made without --include_imports).
    static func load(_ bytes: UnsafeRawBufferPointer) throws -> PBSchema {
        var loader = try Loader(PBDescriptorSet.read(bytes))
        for mi in loader.messageProtos.indices { try loader.addMessage(mi) }
        for e in loader.enumProtos { loader.addEnum(e.proto) }
        return loader.schema()
    }

    /// What `load` builds up, one step per method: the types by full name first (so a field can
    /// name a type declared after it), then the messages with their fields, then the enums.
    /// Fields and enum values intern their names with `ref` in the order they are added, which
    /// is the order of the Lua names table.
    fileprivate struct Loader {
        typealias MessageEntry = (name: String, proto: PBDescriptorSet.MessageProto, proto3: Bool)
        typealias EnumEntry = (name: String, proto: PBDescriptorSet.EnumProto)

        let messageProtos: [MessageEntry]
        let enumProtos: [EnumEntry]
        let messageIndex: [String: Int32]
        let enumIndex: [String: Int32]

        var names: [String] = []
        var nameRefs: [String: Int32] = [:]
        var fields: [Field] = []
        var fieldNames: [String] = []
        var fieldDefaults: [String?] = []
        var oneofNames: [String] = []
        var messages: [Message] = []
        var dense: [Int32] = []
        var enums: [Enum] = []
        var enumValues: [EnumValue] = []

        init(_ set: PBDescriptorSet) throws {
            (messageProtos, enumProtos) = Self.collectTypes(set)
            (messageIndex, enumIndex) = try Self.indexTypes(messageProtos, enumProtos)
        }

        /// Every message and enum by full name ("pkg.Outer.Inner"), in a stable order.
        static func collectTypes(_ set: PBDescriptorSet) -> ([MessageEntry], [EnumEntry]) {
            var messageProtos: [MessageEntry] = []
            var enumProtos: [EnumEntry] = []
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
            return (messageProtos, enumProtos)
        }

        /// Full name → index, for messages and for enums; a name defined twice (in either, or
        /// as both) is an error.
        static func indexTypes(_ messageProtos: [MessageEntry], _ enumProtos: [EnumEntry]) throws
            -> (messages: [String: Int32], enums: [String: Int32]) {
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
            return (messageIndex, enumIndex)
        }

        /// The index of `s` in the Lua names table (1-based), added at the end if new.
        mutating func ref(_ s: String) -> Int32 {
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

        /// Message `mi`: its oneofs, its fields sorted by number, then its dense table (number →
        /// field index for numbers below 1024, where two fields with one number are caught).
        mutating func addMessage(_ mi: Int) throws {
            let entry = messageProtos[mi]
            let proto = entry.proto
            let oneofBase = Int32(oneofNames.count)
            oneofNames.append(contentsOf: proto.oneofs)
            let first = Int32(fields.count)
            for f in proto.fields.sorted(by: { $0.number < $1.number }) {
                try addField(f, of: entry, message: Int32(mi), oneofBase: oneofBase)
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

        /// One field of `entry`, checked (its number and type), with what the codecs derive from
        /// the descriptor once here rather than per value: packed, map, implicit presence, oneof.
        mutating func addField(_ f: PBDescriptorSet.FieldProto, of entry: MessageEntry, message mi: Int32, oneofBase: Int32) throws {
            let where_ = "\(entry.name).\(f.name)"
            guard f.number > 0 && UInt64(f.number) <= PBWire.maxFieldNumber else {
                throw LunetError(.decode, "protobuf: the field \(where_) has the invalid number \(f.number)")
            }
            let (type, typeIndex) = try fieldType(f, where_, scope: entry.name)
            let repeated = f.label == 3
            let scalarNumber = FieldType.wire(type) != PBWire.len && type != FieldType.group
            let isMap = repeated && type == FieldType.message && isMapEntry(messageProtos[Int(typeIndex)].proto)
            let inOneof = f.oneofIndex >= 0 && !f.proto3Optional && Int(f.oneofIndex) < entry.proto.oneofs.count
            let nameRef = ref(f.name)
            fields.append(Field(
                number: f.number, type: type, repeated: repeated,
                packed: repeated && scalarNumber && (f.packed ?? entry.proto3),
                map: isMap,
                implicitPresence: entry.proto3 && !repeated && !inOneof && !f.proto3Optional && type != FieldType.message,
                oneof: inOneof ? oneofBase + f.oneofIndex : -1,
                typeIndex: typeIndex, nameRef: nameRef, message: mi))
            fieldNames.append(f.name)
            fieldDefaults.append(f.defaultValue)
        }

        /// A field's type and, for a message or enum field, the index of the type it names
        /// (else -1). A named type with no type given (0) takes the kind of what it names.
        func fieldType(_ f: PBDescriptorSet.FieldProto, _ where_: String, scope: String) throws -> (UInt8, Int32) {
            var type = f.type
            var typeIndex: Int32 = -1
            if type == FieldType.message || type == FieldType.enum || type == FieldType.group || (type == 0 && !f.typeName.isEmpty) {
                guard let found = resolve(f.typeName, scope: scope) else {
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
            return (type, typeIndex)
        }

        /// An enum: its values sorted by number (of aliases, the first declared is kept), and
        /// its default, the first value declared.
        mutating func addEnum(_ proto: PBDescriptorSet.EnumProto) {
            let first = Int32(enumValues.count)
            var seen = Set<Int32>()
            var values: [EnumValue] = []
            for (name, number) in proto.values where seen.insert(number).inserted {
                values.append(EnumValue(number: number, nameRef: ref(name)))
            }
            enumValues.append(contentsOf: values.sorted { $0.number < $1.number })
            let firstDeclared = proto.values.first
            let defaultNameRef = firstDeclared.map { ref($0.0) } ?? 0
            enums.append(Enum(firstValue: first, valueCount: Int32(values.count), lookupRef: 0,
                              defaultNumber: firstDeclared?.1 ?? 0,
                              defaultNameRef: defaultNameRef))
        }

        /// The schema. The lookup tables follow the names in the Lua names table.
        mutating func schema() -> PBSchema {
            for i in messages.indices { messages[i].lookupRef = Int32(names.count + 1 + i) }
            for i in enums.indices { enums[i].lookupRef = Int32(names.count + 1 + messages.count + i) }
            return PBSchema(fields: fields, messages: messages, dense: dense, enums: enums, enumValues: enumValues,
                            messageNames: messageProtos.map(\.name), fieldNames: fieldNames,
                            enumNames: enumProtos.map(\.name), oneofNames: oneofNames,
                            fieldDefaults: fieldDefaults, names: names, enumDeclarations: enumProtos.map { $0.proto.values })
        }
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
