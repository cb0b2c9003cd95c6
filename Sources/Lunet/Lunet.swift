@_exported import LunetLua
