import CLunetLua
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
