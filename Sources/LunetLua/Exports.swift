// The stack helpers and error objects live one module down (LunetLuaStack), where the codecs
// can share them; to everything above, they are still part of the host.
@_exported import LunetLuaStack
