@_exported import LunetCore
@_exported import LunetLua
