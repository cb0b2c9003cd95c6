// fuzz-json: LuaJSONDecoder on arbitrary bytes, on a fresh bare Lua state per input.
//
// Properties checked on every input:
// - decode never crashes, returns 1 or LUNET_RAISE, and leaves exactly one value (the value or
//   an error object) on the stack;
// - whatever decodes also encodes (sorted keys), and that text decodes and encodes to the same
//   bytes again; the pretty form decodes to the same value;
// - the input as a Lua string: json.encode either refuses it (invalid UTF-8) or gives text that
//   decodes back to exactly those bytes;
// - decoding with a small max_depth keeps the contract.
import CLunetLua
import FuzzSupport
import LunetCodecs
import LunetCore

// The input's state (a fresh one per input: withFuzzState), global for the helpers below.
nonisolated(unsafe) private var L: OpaquePointer! = nil

private func sortedOptions(pretty: Bool) -> LuaJSONEncoder.Options {
    var o = LuaJSONEncoder.Options()
    o.sortKeys = true
    o.pretty = pretty
    return o
}

/// Encodes the value at the top; nil with the error's text when it cannot.
private func encodeTop(pretty: Bool = false) -> (bytes: [UInt8]?, error: String?) {
    let out = ByteBuffer()
    if let error = LuaJSONEncoder.encode(L, index: -1, options: sortedOptions(pretty: pretty), into: out) {
        return (nil, "\(error)")
    }
    return (Array(out.bytes), nil)
}

private func decode(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = LuaJSONDecoder.defaultMaxDepth, _ what: String) -> Bool {
    let top = lua_gettop(L)
    let status = LuaJSONDecoder.decode(L, bytes, maxDepth: maxDepth)
    fuzzCheckDecodeResult(L, status: status, top: top, what)
    return status == 1
}

@_cdecl("fuzz_json_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzJSON)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzBytes(data, size)
    withFuzzState { state in
        L = state
        defer { L = nil }
        check(input)
    }
    return 0
}

private func check(_ input: UnsafeRawBufferPointer) {
    let size = input.count
    let top = lua_gettop(L)

    if decode(input, "decode(input)") {
        let (first, error) = encodeTop()
        guard let first else { fuzzFail("a decoded value does not encode: \(error ?? "")") }
        let again = first.withUnsafeBytes { decode($0, "decode(encode(decode(input)))") }
        fuzzCheck(again, "encode's output does not decode: \(luaMessage(L, -1))")
        let (second, _) = encodeTop()
        fuzzCheck(second == first, "encode(decode(x)) is not stable:\n  \(text(first))\n  \(text(second ?? []))")
        lunet_pop(L, 1)

        let (pretty, prettyError) = encodeTop(pretty: true)
        guard let pretty else { fuzzFail("a decoded value does not encode pretty: \(prettyError ?? "")") }
        fuzzCheck(pretty.withUnsafeBytes { decode($0, "decode(pretty)") }, "the pretty form does not decode")
        let (fromPretty, _) = encodeTop()
        fuzzCheck(fromPretty == first, "the pretty form decodes to another value:\n  \(text(first))\n  \(text(fromPretty ?? []))")
    }
    lua_settop(L, top)

    // The bytes as a Lua string through the encoder and back.
    fuzzPushBytes(L, input)
    if let quoted = encodeTop().bytes {
        fuzzCheck(quoted.withUnsafeBytes { decode($0, "decode(encode(string))") }, "an encoded string does not decode")
        fuzzCheck(lua_type(L, -1) == LUA_TSTRING && luaBytes(L, -1).elementsEqual(input),
                  "a string does not survive encode and decode")
    }
    lua_settop(L, top)

    // A small depth limit.
    if size > 0 {
        _ = decode(input, maxDepth: Int(input[size - 1] % 8) + 1, "decode(input, max_depth)")
    }
}

private func text(_ b: [UInt8]) -> String {
    String(decoding: b.prefix(300), as: UTF8.self)
}
