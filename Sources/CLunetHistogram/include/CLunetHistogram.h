// The counts of `lunet load`'s HDR histograms (lua/lunet/load/hdr.lua), as a Lua C function:
// load's feature code, in a target of its own above the Lua bridge (CLunetLua), not inside it.
#ifndef CLUNET_HISTOGRAM_H
#define CLUNET_HISTOGRAM_H

#include <lua5.4/lua.h>

/// Pushes core.hdr_open, a C function (hdr_histogram.c). Pushing raises nothing (the
/// allocator aborts when memory runs out).
void lunet_push_hdr_open(lua_State *L);

#endif
