// The entry point a stock Lua interpreter calls for `require "lunet"`.
#ifndef CLUNET_MODULE_H
#define CLUNET_MODULE_H
#include <lua5.4/lua.h>
int luaopen_lunet(lua_State *L);
#endif
