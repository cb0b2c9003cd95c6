// fuzz-xml: LuaXMLDecoder (what xml.decode and the xml response serializer run) on arbitrary
// bytes, on a fresh bare Lua state per input.
//
// Input: the document. Its last byte also picks the options of a second decode: bit 0
// keep_whitespace, bit 1 ignore_encoding, bits 2-4 a max_depth of 1..8 when bit 5 is set.
// Properties:
// - decode never crashes, returns 1 or LUNET_RAISE and leaves exactly one value;
// - what decodes (keep_whitespace, so no text is dropped) encodes; that text decodes, and
//   decoding and encoding it again gives the same bytes; the pretty form decodes too.
import CLunetLua
import FuzzSupport
import LunetCodecs
import LunetCore

@_cdecl("fuzz_xml_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzXML)
}

private func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, _ options: LuaXMLDecoder.Options, _ what: String) -> Bool {
    let top = lua_gettop(L)
    let status = XMLModule.decode(L, bytes, options: options)
    fuzzCheckDecodeResult(L, status: status, top: top, what)
    return status == 1
}

private func encodeTop(_ L: OpaquePointer, pretty: Bool = false) -> (bytes: [UInt8]?, error: String?) {
    var options = LuaXMLEncoder.Options()
    options.pretty = pretty
    let out = ByteBuffer()
    if let error = LuaXMLEncoder.encode(L, index: -1, options: options, into: out) { return (nil, "\(error)") }
    return (Array(out.bytes), nil)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXML(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzBytes(data, size)
    withFuzzState { L in check(L, input) }
    return 0
}

private func check(_ L: OpaquePointer, _ input: UnsafeRawBufferPointer) {
    let size = input.count

    // Default options: the contract only.
    _ = decode(L, input, LuaXMLDecoder.Options(), "decode(input)")
    lua_settop(L, 0)

    // Options from the last byte.
    if size > 0 {
        let control = input[size - 1]
        var options = LuaXMLDecoder.Options()
        options.keepWhitespace = control & 1 != 0
        options.ignoreEncoding = control & 2 != 0
        if control & 0x20 != 0 { options.maxDepth = Int((control >> 2) & 7) + 1 }
        _ = decode(L, input, options, "decode(input, options)")
        lua_settop(L, 0)
    }

    // Round trip.
    var keep = LuaXMLDecoder.Options()
    keep.keepWhitespace = true
    keep.ignoreEncoding = true
    guard decode(L, input, keep, "decode(input, keep_whitespace)") else { return }
    let (first, error) = encodeTop(L)
    guard let first else { fuzzFail("a decoded document does not encode: \(error ?? "")") }
    lua_settop(L, 0)
    guard first.withUnsafeBytes({ decode(L, $0, keep, "decode(encode(decode(input)))") }) else {
        fuzzFail("encode's output does not decode: \(luaMessage(L, -1))\n  \(text(first))")
    }
    let (second, _) = encodeTop(L)
    fuzzCheck(second == first, "encode(decode(x)) is not stable:\n  \(text(first))\n  \(text(second ?? []))")
    let (pretty, prettyError) = encodeTop(L, pretty: true)
    guard let pretty else { fuzzFail("a decoded document does not encode pretty: \(prettyError ?? "")") }
    lua_settop(L, 0)
    fuzzCheck(pretty.withUnsafeBytes { decode(L, $0, keep, "decode(pretty)") }, "the pretty form does not decode: \(text(pretty))")
}

private func text(_ b: [UInt8]) -> String {
    String(decoding: b.prefix(400), as: UTF8.self)
}
