// fuzz-charset: what response:text() runs on a body: Charset.detect (from a Content-Type value
// and the body's first bytes) and Charset.toUTF8 (glibc iconv, or the UTF-8 check).
//
// Input: byte 0 picks a charset (low 3 bits) and a mode (bit 3); then
//   mode 0: the body, converted from the picked charset;
//   mode 1: a Content-Type value up to the first newline, then the body: detect, then convert
//           from whatever detect says (any name a server may send reaches iconv_open).
// Properties: no crash; a conversion that succeeds gives well-formed UTF-8 (no overlong forms,
// no surrogates); from UTF-8 it gives the input without its BOM, and fails exactly when the
// input is not well-formed; converting twice gives the same result.
import FuzzSupport
import Lunet

@_cdecl("fuzz_charset_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzCharset)
}

private let charsets = ["utf-8", "shift_jis", "euc-jp", "iso-2022-jp", "gbk", "big5", "euc-kr", "iso-8859-1"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCharset(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size > 0, let data else { return 0 }
    let control = data[0]
    var rest = UnsafeBufferPointer(start: data + 1, count: size - 1)
    var charset = charsets[Int(control & 7)]
    if control & 8 != 0 {
        let newline = rest.firstIndex(of: 0x0A) ?? rest.count
        let contentType = String(decoding: UnsafeBufferPointer(rebasing: rest[..<newline]), as: UTF8.self)
        rest = UnsafeBufferPointer(rebasing: rest[Swift.min(newline + 1, rest.count)...])
        charset = Charset.detect(contentType: contentType.isEmpty ? nil : contentType, body: rest)
        _ = Charset.parameter("charset", in: contentType)
    }
    convert(rest, charset)
    return 0
}

private func convert(_ body: UnsafeBufferPointer<UInt8>, _ charset: String) {
    let result = Charset.toUTF8(body, from: charset)
    let again = Charset.toUTF8(body, from: charset)
    switch (result, again) {
    case (.success(let out), .success(let out2)):
        fuzzCheck(Array(out.bytes) == Array(out2.bytes), "converting twice from \(charset) differs")
        fuzzCheck(Charset.firstInvalidUTF8(out.bytes) == nil, "the conversion from \(charset) gave invalid UTF-8")
        fuzzCheck(String(decoding: out.bytes, as: UTF8.self).utf8.elementsEqual(out.bytes),
                  "the conversion from \(charset) gave UTF-8 that Swift repairs")
        if Charset.isUTF8(charset) {
            let skip = body.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            fuzzCheck(out.bytes.elementsEqual(body.dropFirst(skip)), "UTF-8 in is not the same UTF-8 out")
        }
    case (.failure(let e), .failure(let e2)):
        fuzzCheck(e.message == e2.message, "converting twice from \(charset) fails differently")
        if Charset.isUTF8(charset) {
            fuzzCheck(Charset.firstInvalidUTF8(body) != nil, "valid UTF-8 was refused: \(e.message)")
            fuzzCheck(String(decoding: body, as: UTF8.self).utf8.elementsEqual(body) == false,
                      "the UTF-8 check refused what Swift accepts")
        }
    default:
        fuzzFail("converting twice from \(charset) gave different outcomes")
    }
}
