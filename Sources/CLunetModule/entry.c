// luaopen_lunet is C so that a failure can raise with lua_error after the Swift code that
// built the module has returned (a Lua error never crosses a Swift frame).
#include "CLunetModule.h"

// Implemented in Swift (Sources/LunetLuaModule): pushes the module table and returns 1, or
// pushes an error message and returns -1.
extern int lunet_module_open(lua_State *L);

int luaopen_lunet(lua_State *L) {
    int n = lunet_module_open(L);
    if (n < 0) return lua_error(L);
    return n;
}
