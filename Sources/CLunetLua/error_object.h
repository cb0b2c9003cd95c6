// lunet_error_object: the bridge's hooks raise lunet's error objects, made here in one way.
#ifndef LUNET_ERROR_OBJECT_H
#define LUNET_ERROR_OBJECT_H
#include "CLunetLua.h"

// Replaces the message string on top of L's stack by an error object { kind = KIND, message =
// it } with lunet's error metatable (registry "lunet.Error") when the host has set it. Raises
// nothing: the caller raises (BEFORE_RAISE first, in its own frame).
void lunet_error_object(lua_State *L, const char *kind);

#endif
