import CLunetLua
import LunetCore

/// What the JSON and XML encoders share: each walks Lua values into a `ByteWriter` it borrows
/// from the caller and records its first error.
protocol TextEncoderState {
    var out: ByteWriter { get set }
    var error: LunetError? { get }
    /// Frees what the walk allocated (not `out`, which goes back to the caller).
    mutating func release()
}

extension TextEncoderState {
    /// Lends `writer` to the encoder for `walk`, then takes it back. On failure the writer is
    /// cut back to where it was and the error returned (`otherwise` when none was recorded);
    /// the Lua stack goes back to `top` either way.
    mutating func encode(_ L: OpaquePointer, top: Int32, into writer: inout ByteWriter, otherwise: String,
                         _ walk: (inout Self) -> Bool) -> LunetError? {
        let mark = writer.count
        out = writer
        let ok = walk(&self)
        writer = out
        let error = self.error
        release()
        lua_settop(L, top)
        if !ok {
            writer.count = mark
            return error ?? LunetError(.argument, otherwise)
        }
        return nil
    }
}
