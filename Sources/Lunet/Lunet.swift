@_exported import LunetCore
@_exported import LunetLua
// The codecs (JSON, XML, protobuf) are their own module; an embedding tool sees them as before.
@_exported import LunetCodecs
