// The Lua bridge: what Swift needs to host Lua 5.4 and be called by it. Only the Lua layers
// (LunetLuaStack, LunetCodecs, LunetLua, the front ends, lunet-luac) depend on it; the core does
// not, so the core cannot see Lua (libcurl and the OS calls are the shims', CLunetCurl and CLunetLinux).
//
// Two rules shape it:
//  1. A Lua error is a longjmp. It must never jump over a Swift frame, so every Swift function
//     that Lua calls is reached through lunet_trampoline: the Swift function returns a status and
//     the trampoline raises after the Swift frame has returned.
//  2. Lua's API is half macros, which Swift cannot call: they are wrapped here in small typed
//     functions.
#ifndef CLUNET_LUA_H
#define CLUNET_LUA_H

#include <stddef.h>
#include <stdint.h>
#include <lua5.4/lua.h>
#include <lua5.4/lualib.h>
#include <lua5.4/lauxlib.h>

#include "before_raise.h"   // for the C functions of the bridge and of the Lua C modules above it

// ---------------------------------------------------------------------------------------------
// Swift functions callable from Lua
// ---------------------------------------------------------------------------------------------

/// What a Swift function returns to the trampoline: a count of results (>= 0), or LUNET_RAISE
/// when it pushed an error value that the trampoline must raise with lua_error.
#define LUNET_RAISE (-1)

typedef int (*lunet_SwiftFunction)(lua_State *L);

/// Pushes a Lua C closure that calls `fn` through the trampoline. `nup` values on top of the
/// stack become the closure's upvalues; Swift reads them with lunet_upvalue(i) (1-based).
void lunet_pushswiftfunction(lua_State *L, lunet_SwiftFunction fn, int nup);
static inline int lunet_upvalue(int i) { return lua_upvalueindex(i + 1); }

// ---------------------------------------------------------------------------------------------
// States, loading, protected calls
// ---------------------------------------------------------------------------------------------

/// A new state whose allocator aborts the process with a clear message when memory runs out,
/// so that no push made from Swift can raise a memory error.
lua_State *lunet_newstate(void);
/// A state on lunet's allocator (lua_heap.c); lunet_newstate uses it.
lua_State *lunet_newstate_with_heap(void);
/// lua_close, then gives back what the state's allocator holds. For states lunet_newstate made.
void lunet_closestate(lua_State *L);
/// luaL_openlibs under a protected call. Returns a Lua status.
int lunet_openlibs(lua_State *L);
/* lua5.4 -E: the package library ignores LUA_PATH and LUA_CPATH. Before lunet_openlibs. */
void lunet_set_noenv(lua_State *L);
/// lua_pcall with a message handler that appends a traceback to string errors. The handler
/// leaves non-string error values alone (tables, error objects) so callers can inspect them.
int lunet_pcall(lua_State *L, int nargs, int nresults);
/// Pushes len bytes as a Lua string under a protected call of its own: LUA_OK, or LUA_ERRMEM
/// with nothing pushed when the memory is not there (a Swift function then raises; for large
/// strings, where an allocation can fail).
int lunet_protected_pushlstring(lua_State *L, const char *s, size_t len);
/// The calls from Lua into Swift functions (down) and from Swift into Lua (up, lunet_pcall)
/// made on this thread so far.
void lunet_crossings(unsigned long *down, unsigned long *up);
/// luaL_loadbufferx (never raises).
int lunet_loadbuffer(lua_State *L, const char *buf, size_t len, const char *chunkname, const char *mode);
/// [chunk, core] on top become the loader of one of lunet's own modules: called by require as
/// loader(name), it runs chunk(name, core). Pushing raises nothing (the allocator aborts when
/// memory runs out).
void lunet_wrap_module_chunk(lua_State *L);
/// Interrupting a runaway line at the prompt: arm a count hook on a thread (coroutines made
/// from it inherit it); request (async-signal-safe) makes every later check raise a `cancelled`
/// error object until cleared.
void lunet_interrupt_arm(lua_State *L);
void lunet_interrupt_disarm(lua_State *L);
void lunet_interrupt_request(void);
void lunet_interrupt_clear(void);
int lunet_interrupt_pending(void);
/// A deadline for code that may never yield (a spinning test): a count hook on thread L raises
/// a `timeout` error object once `seconds` have passed, and keeps raising until the code has
/// unwound. lunet_deadline_clear() lifts it (the hook then costs a clock read per 1000
/// instructions on the threads that have it).
void lunet_deadline_arm(lua_State *L, double seconds);
void lunet_deadline_clear(void);
/// `lunet load`'s VUs whose iteration never yields (vu_stop.c): a hook on each VU's coroutine
/// raises `cancelled` there once a stop is requested: by lunet_vu_stop_after(seconds) (a
/// deadline the hook reads the clock for; 0: now), or by a second lunet_vu_signal() (a signal
/// handler's call; the first sets the deadline to the grace lunet_vu_grace set).
/// lunet_vu_stop_reset() lifts it all.
void lunet_vu_hook_arm(lua_State *L);
void lunet_vu_stop_after(double seconds);
void lunet_vu_grace(double seconds);
void lunet_vu_signal(void);
void lunet_vu_stop_reset(void);

/// "Lua 5.4.4"
const char *lunet_lua_release(void);
/// The state's extra space: a pointer slot the host uses to find itself.
static inline void **lunet_extraspace(lua_State *L) { return (void **)lua_getextraspace(L); }

/// The traceback of `L1` as a string pushed on `L` (luaL_traceback; raises only on memory errors,
/// which abort).
static inline void lunet_traceback(lua_State *L, lua_State *L1, const char *msg, int level) { luaL_traceback(L, L1, msg, level); }

// ---------------------------------------------------------------------------------------------
// Lua macros as functions
// ---------------------------------------------------------------------------------------------
static inline int lunet_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline void lunet_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void lunet_newtable(lua_State *L) { lua_newtable(L); }
static inline void lunet_insert(lua_State *L, int idx) { lua_insert(L, idx); }
static inline void lunet_remove(lua_State *L, int idx) { lua_remove(L, idx); }
static inline void lunet_replace(lua_State *L, int idx) { lua_replace(L, idx); }
static inline int lunet_isnoneornil(lua_State *L, int idx) { return lua_isnoneornil(L, idx); }
static inline const char *lunet_tolstring(lua_State *L, int idx, size_t *len) { return lua_tolstring(L, idx, len); }
static inline lua_Integer lunet_tointegerx(lua_State *L, int idx, int *isnum) { return lua_tointegerx(L, idx, isnum); }
static inline lua_Number lunet_tonumberx(lua_State *L, int idx, int *isnum) { return lua_tonumberx(L, idx, isnum); }
static inline void *lunet_newuserdata(lua_State *L, size_t size, int nuv) { return lua_newuserdatauv(L, size, nuv); }
/// Pushes n bytes as a string (p may be NULL when n is 0).
static inline void lunet_pushbytes(lua_State *L, const void *p, size_t n) { lua_pushlstring(L, n ? (const char *)p : "", n); }
static inline void lunet_pushlightuserdata(lua_State *L, void *p) { lua_pushlightuserdata(L, p); }
/// Raw reads and writes with a string key: no metamethods, so they never raise.
static inline int lunet_rawgetfield(lua_State *L, int idx, const char *k) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, k);
    return lua_rawget(L, idx);
}
static inline void lunet_rawsetfield(lua_State *L, int idx, const char *k) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, k);
    lua_insert(L, -2);
    lua_rawset(L, idx);
}
/// luaL_ref / luaL_unref on the registry.
static inline int lunet_ref(lua_State *L) { return luaL_ref(L, LUA_REGISTRYINDEX); }
static inline void lunet_unref(lua_State *L, int ref) { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
static inline int lunet_getref(lua_State *L, int ref) { return lua_rawgeti(L, LUA_REGISTRYINDEX, ref); }

#endif
