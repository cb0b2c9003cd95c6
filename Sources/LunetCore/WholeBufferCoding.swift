import CLunetCodings
import Glibc

/// One call of the codings shim's whole-buffer functions (gzip.c, snappy.c), whose result codes
/// share their numbers: 0 done, 1 the library cannot be opened, 2 not data in the coding, 3
/// larger than the limit, 4 out of memory (CLunetCodings.h: LUNET_GZIP_* and LUNET_SNAPPY_*). `body` gets the result's bytes while it runs; the
/// buffer is freed after.
enum WholeBufferCoding {
    static func run<T>(_ call: (inout UnsafeMutableRawPointer?, inout Int) -> Int32, what: String, library: String, coding: String,
                       _ body: (UnsafeRawBufferPointer) -> T) -> Result<T, LunetError> {
        var out: UnsafeMutableRawPointer?
        var length = 0
        switch call(&out, &length) {
        case 0:
            defer { free(out) }
            return .success(body(UnsafeRawBufferPointer(start: out, count: length)))
        case 1: return .failure(LunetError(.io, "\(what): the system's \(library) cannot be opened"))
        case 3: return .failure(LunetError(.tooLarge, "\(what): the data would be larger than the limit"))
        case 4: return .failure(LunetError(.io, "\(what): out of memory"))
        default: return .failure(LunetError(.decode, "\(what): not \(coding) data, or cut short"))
        }
    }
}
