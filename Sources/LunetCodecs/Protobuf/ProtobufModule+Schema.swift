import CLunetLua
import LunetCore
import LunetLuaStack

// MARK: - Schemas: protobuf.load and the schema's methods

extension ProtobufModule {
    /// protobuf.load(descriptor_set_bytes) -> schema
    static let loadFunction: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TSTRING else {
            return LuaErrorObject.badArgument(L, 1, "load", "string expected (the bytes of a descriptor set), got \(typeName(L, 1))")
        }
        var length = 0
        let p = lunet_tolstring(L, 1, &length)!
        let schema: PBSchema
        do {
            schema = try PBSchema.load(UnsafeRawBufferPointer(start: p, count: length))
        } catch let error as PBDescriptorError {
            let position = error.offset + 1
            LuaErrorObject.push(L, .decode, "protobuf: cannot read the descriptor set (expected what protoc --descriptor_set_out writes): \(error.problem.text) at byte \(position)")
            LuaStack(L).set(-1, "position", position)
            return LUNET_RAISE
        } catch let error as LunetError {
            return LuaErrorObject.raise(L, error.kind, error.message)
        } catch {
            return LuaErrorObject.raise(L, .decode, "protobuf: cannot read the descriptor set")
        }
        if schema.messages.count == 0 && schema.enums.count == 0 {
            return LuaErrorObject.raise(L, .decode, "protobuf: the descriptor set holds no messages (expected what protoc --descriptor_set_out=FILE --include_imports writes)")
        }
        guard lua_checkstack(L, 8) != 0 else { return LuaErrorObject.raise(L, .argument, "protobuf: the Lua stack is full") }
        let slot = lunet_newuserdata(L, MemoryLayout<UnsafeMutableRawPointer?>.size, 1)!
        slot.storeBytes(of: Unmanaged.passRetained(schema).toOpaque(), as: UnsafeMutableRawPointer?.self)
        pushSchemaMetatable(L)
        lua_setmetatable(L, -2)
        schema.pushNamesTable(L)
        lua_setiuservalue(L, -2, 1)
        return 1
    }

    static func pushSchemaMetatable(_ L: OpaquePointer) {
        let s = LuaStack(L)
        if s.registryField(schemaMetatableKey) == LUA_TTABLE { return }
        s.pop()
        lua_createtable(L, 0, 5)
        s.pushFunction(schemaGC)
        s.setRawField(-2, "__gc")
        s.pushFunction(schemaToString)
        s.setRawField(-2, "__tostring")
        s.push("protobuf.schema")
        s.setRawField(-2, "__name")
        lua_createtable(L, 0, 3)
        s.pushFunction(schemaDecode)
        s.setRawField(-2, "decode")
        s.pushFunction(schemaEncode)
        s.setRawField(-2, "encode")
        s.pushFunction(schemaMessages)
        s.setRawField(-2, "messages")
        s.setRawField(-2, "__index")
        s.pushValue(-1)
        s.setRawField(lunet_registryindex(), schemaMetatableKey)
    }

    /// The schema at `index` when it is one (and not yet collected).
    static func schema(_ L: OpaquePointer, _ index: Int32) -> PBSchema? {
        guard lua_type(L, index) == LUA_TUSERDATA, lua_getmetatable(L, index) != 0 else { return nil }
        let s = LuaStack(L)
        _ = s.registryField(schemaMetatableKey)
        let same = lua_rawequal(L, -1, -2) != 0
        s.pop(2)
        guard same, let slot = lua_touserdata(L, index),
              let raw = slot.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<PBSchema>.fromOpaque(raw).takeUnretainedValue()
    }

    static let schemaGC: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TUSERDATA, let slot = lua_touserdata(L, 1),
              lua_rawlen(L, 1) == MemoryLayout<UnsafeMutableRawPointer?>.size else { return 0 }
        if let raw = slot.load(as: UnsafeMutableRawPointer?.self) {
            slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            Unmanaged<PBSchema>.fromOpaque(raw).release()
        }
        return 0
    }

    static let schemaToString: lunet_SwiftFunction = { L in
        let L = L!
        if let schema = schema(L, 1) {
            LuaStack(L).push("protobuf.schema (\(schema.listedMessages.count) messages)")
        } else {
            LuaStack(L).push("protobuf.schema")
        }
        return 1
    }

    /// The schema at 1, or the status of the error pushed.
    static func selfSchema(_ L: OpaquePointer, _ method: String) -> Result<PBSchema, Failure> {
        guard let schema = schema(L, 1) else {
            return .failure(Failure(status: LuaErrorObject.raise(L, .argument, "bad self to '\(method)' (a protobuf schema expected, got \(typeName(L, 1)); call it as schema:\(method)(...))")))
        }
        return .success(schema)
    }

    struct Failure: Error { var status: Int32 }

    /// The message named by the string at `index`, or the status of the error pushed.
    static func messageArgument(_ L: OpaquePointer, _ schema: PBSchema, _ index: Int32, _ method: String) -> Result<Int32, Failure> {
        guard lua_type(L, index) == LUA_TSTRING, var name = LuaStack(L).string(index) else {
            return .failure(Failure(status: LuaErrorObject.badArgument(L, Int(index) - 1, method, "message name expected, got \(typeName(L, index))")))
        }
        if name.hasPrefix(".") { name.removeFirst() }
        guard let m = schema.messageIndex[name] else {
            return .failure(Failure(status: LuaErrorObject.badArgument(L, Int(index) - 1, method, "unknown message '\(name)' (schema:messages() lists the \(schema.listedMessages.count) it has)")))
        }
        return .success(m)
    }

    /// schema:decode(bytes, "pkg.Message" [, { max_depth = n, unknown = bool, defaults = bool }]) -> table
    static let schemaDecode: lunet_SwiftFunction = { L in
        let L = L!
        let schema: PBSchema
        switch selfSchema(L, "decode") {
        case .failure(let f): return f.status
        case .success(let s): schema = s
        }
        guard lua_type(L, 2) == LUA_TSTRING else {
            return LuaErrorObject.badArgument(L, 1, "decode", "string expected, got \(typeName(L, 2))")
        }
        let m: Int32
        switch messageArgument(L, schema, 3, "decode") {
        case .failure(let f): return f.status
        case .success(let v): m = v
        }
        var options = PBSchemaDecoder.Options()
        if let status = CodecOptions.check(L, 4, "decode", known: ["max_depth", "unknown", "defaults"], position: 3) { return status }
        if lua_type(L, 4) == LUA_TTABLE {
            switch CodecOptions.maxDepth(L, 4, "decode", position: 3, allowingZero: true) {
            case .failed(let status): return status
            case .value(let v): options.maxDepth = v
            case .absent: break
            }
            switch CodecOptions.bool(L, 4, "decode", "unknown", position: 3) {
            case .failed(let status): return status
            case .value(let v): options.keepUnknown = v
            case .absent: break
            }
            switch CodecOptions.bool(L, 4, "decode", "defaults", position: 3) {
            case .failed(let status): return status
            case .value(let v): options.defaults = v
            case .absent: break
            }
        }
        lua_settop(L, 2)
        lua_getiuservalue(L, 1, 1)
        var length = 0
        let p = lunet_tolstring(L, 2, &length)!
        return PBSchemaDecoder.decode(L, schema, names: 3, message: m, UnsafeRawBufferPointer(start: p, count: length), options)
    }

    /// schema:encode(t, "pkg.Message" [, { max_depth = n }]) -> bytes
    static let schemaEncode: lunet_SwiftFunction = { L in
        let L = L!
        let schema: PBSchema
        switch selfSchema(L, "encode") {
        case .failure(let f): return f.status
        case .success(let s): schema = s
        }
        guard lua_type(L, 2) == LUA_TTABLE else {
            return LuaErrorObject.badArgument(L, 1, "encode", "table expected, got \(typeName(L, 2))")
        }
        let m: Int32
        switch messageArgument(L, schema, 3, "encode") {
        case .failure(let f): return f.status
        case .success(let v): m = v
        }
        var maxDepth = PBWire.defaultMaxDepth
        if let status = CodecOptions.check(L, 4, "encode", known: ["max_depth"], position: 3) { return status }
        if lua_type(L, 4) == LUA_TTABLE {
            switch CodecOptions.maxDepth(L, 4, "encode", position: 3, allowingZero: true) {
            case .failed(let status): return status
            case .value(let v): maxDepth = v
            case .absent: break
            }
        }
        lua_settop(L, 2)
        lua_getiuservalue(L, 1, 1)
        var encoder = PBEncoder(L: L, maxDepth: maxDepth, schema: schema, names: 3)
        defer { encoder.release() }
        let ok = encoder.message(m, 2)
        return finish(L, &encoder, ok, arguments: 2)
    }

    /// schema:messages() -> { "pkg.Message", ... } (sorted; map entry types left out)
    static let schemaMessages: lunet_SwiftFunction = { L in
        let L = L!
        let schema: PBSchema
        switch selfSchema(L, "messages") {
        case .failure(let f): return f.status
        case .success(let s): schema = s
        }
        let names = schema.listedMessages
        lua_createtable(L, Int32(names.count), 0)
        for (i, name) in names.enumerated() {
            LuaStack(L).push(name)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
        return 1
    }
}
