// The Lua half of the bridge: the trampoline, the aborting allocator, the protected call.
#include "CLunet.h"
#include <stdio.h>
#include <stdlib.h>

// The one C function Lua calls for every Swift function. Upvalue 1 holds the Swift function
// pointer. The Swift frame has fully returned before lua_error runs, so no Swift cleanup is
// ever skipped by the longjmp.
static int lunet_trampoline(lua_State *L) {
    lunet_SwiftFunction fn = (lunet_SwiftFunction)lua_touserdata(L, lua_upvalueindex(1));
    int n = fn(L);
    if (n == LUNET_RAISE) return lua_error(L);
    return n;
}

void lunet_pushswiftfunction(lua_State *L, lunet_SwiftFunction fn, int nup) {
    lua_pushlightuserdata(L, (void *)fn);
    if (nup > 0) lua_insert(L, -(nup + 1));
    lua_pushcclosure(L, lunet_trampoline, nup + 1);
}

static void *lunet_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud; (void)osize;
    if (nsize == 0) { free(ptr); return NULL; }
    void *p = realloc(ptr, nsize);
    if (p == NULL) {
        fprintf(stderr, "lunet: out of memory (Lua asked for %zu bytes); stopping\n", nsize);
        abort();
    }
    return p;
}

static int lunet_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "lunet: unprotected Lua error: %s\n", msg ? msg : "(not a string)");
    abort();
    return 0;
}

lua_State *lunet_newstate(void) {
    lua_State *L = lua_newstate(lunet_alloc, NULL);
    if (L) lua_atpanic(L, lunet_panic);
    return L;
}

static int openlibs(lua_State *L) { luaL_openlibs(L); return 0; }

int lunet_openlibs(lua_State *L) {
    lua_pushcfunction(L, openlibs);
    return lua_pcall(L, 0, 0, 0);
}

static int message_handler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) return 1;  // an error object: leave it as it is
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int lunet_pcall(lua_State *L, int nargs, int nresults) {
    int base = lua_gettop(L) - nargs;   // the function's index
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    int status = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return status;
}

int lunet_loadbuffer(lua_State *L, const char *buf, size_t len, const char *chunkname, const char *mode) {
    return luaL_loadbufferx(L, buf, len, chunkname, mode);
}

const char *lunet_lua_release(void) { return LUA_RELEASE; }
