// The Lua half of the bridge: the trampoline, the state (its allocator: lua_heap.c), the protected call.
#include "CLunetLua.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "before_raise.h"
#include "error_object.h"

// The one C function Lua calls for every Swift function. Upvalue 1 holds the Swift function
// pointer. The Swift frame has fully returned before lua_error runs, so no Swift cleanup is
// ever skipped by the longjmp.
// Crossings between Lua and Swift on this thread (a host's Lua runs on one thread): calls from
// Lua into a Swift function, and protected calls from Swift into Lua. Read by core.crossings()
// so that a test can count what one request costs at the bridge (docs/architecture.md).
static _Thread_local unsigned long crossings_down, crossings_up;

void lunet_crossings(unsigned long *down, unsigned long *up) {
    *down = crossings_down;
    *up = crossings_up;
}

// Whether a Swift frame stands between the code running now and the innermost protected call:
// above 0 inside a Swift function Lua called (the trampoline counts it), 0 again inside a
// protected call Swift makes (lunet_pcall, lunet_protected_pushlstring). The allocator
// (lua_heap.c) reads it: a failed allocation with no Swift frame in the way returns NULL, and
// Lua raises "not enough memory" as stock Lua does; with one, a longjmp would skip the Swift
// frame's cleanup, so it stops the process with a message instead.
_Thread_local int lunet_swift_depth;

static int lunet_trampoline(lua_State *L) {
    crossings_down++;
    lunet_SwiftFunction fn = (lunet_SwiftFunction)lua_touserdata(L, lua_upvalueindex(1));
    lunet_swift_depth++;
    int n = fn(L);
    lunet_swift_depth--;
    if (n == LUNET_RAISE) {
        BEFORE_RAISE();
        return lua_error(L);
    }
    return n;
}

void lunet_pushswiftfunction(lua_State *L, lunet_SwiftFunction fn, int nup) {
    lua_pushlightuserdata(L, (void *)fn);
    if (nup > 0) lua_insert(L, -(nup + 1));
    lua_pushcclosure(L, lunet_trampoline, nup + 1);
}

static int lunet_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "lunet: unprotected Lua error: %s\n", msg ? msg : "(not a string)");
    abort();
    return 0;
}

// Lua's warnings (an error in a __gc metamethod, warn(...)) go to standard error, so that
// nothing a script does wrong passes without a word. "@off" and "@on" turn them off and on.
static int warnings_on = 1;
static int warning_continues = 0;

static void lunet_warn(void *ud, const char *msg, int tocont) {
    (void)ud;
    if (!warning_continues && msg[0] == '@') {
        if (strcmp(msg, "@off") == 0) warnings_on = 0;
        else if (strcmp(msg, "@on") == 0) warnings_on = 1;
        return;
    }
    if (warnings_on) {
        if (!warning_continues) fputs("lunet: warning: ", stderr);
        fputs(msg, stderr);
        if (!tocont) fputc('\n', stderr);
    }
    warning_continues = tocont;
}

lua_State *lunet_newstate(void) {
    lua_State *L = lunet_newstate_with_heap();   // lua_heap.c
    if (L) {
        lua_atpanic(L, lunet_panic);
        lua_setwarnf(L, lunet_warn, NULL);
    }
    return L;
}

static int openlibs(lua_State *L) { luaL_openlibs(L); return 0; }

void lunet_set_noenv(lua_State *L) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");   /* what lua.c's -E sets: package reads no env */
}

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
    crossings_up++;
    int base = lua_gettop(L) - nargs;   // the function's index
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    int depth = lunet_swift_depth;
    lunet_swift_depth = 0;
    int status = lua_pcall(L, nargs, nresults, base);
    lunet_swift_depth = depth;
    lua_remove(L, base);
    return status;
}

static int push_lstring(lua_State *L) {
    const char *s = lua_touserdata(L, 1);
    size_t len = (size_t)lua_tointeger(L, 2);
    lua_pushlstring(L, s, len);
    return 1;
}

// Pushes len bytes as a string from a Swift function, under a protected call of its own: when
// the memory is not there, the string is not pushed and LUA_ERRMEM is returned (nothing is
// left on the stack), and the Swift function raises the error once it has returned
// (LUNET_RAISE). For large strings only: a protected call costs more than the push.
int lunet_protected_pushlstring(lua_State *L, const char *s, size_t len) {
    if (!lua_checkstack(L, 3)) return LUA_ERRMEM;
    lua_pushcfunction(L, push_lstring);
    lua_pushlightuserdata(L, (void *)s);
    lua_pushinteger(L, (lua_Integer)len);
    int depth = lunet_swift_depth;
    lunet_swift_depth = 0;
    int status = lua_pcall(L, 2, 1, 0);
    lunet_swift_depth = depth;
    if (status != LUA_OK) lua_pop(L, 1);   // the error object
    return status;
}

int lunet_loadbuffer(lua_State *L, const char *buf, size_t len, const char *chunkname, const char *mode) {
    return luaL_loadbufferx(L, buf, len, chunkname, mode);
}

// lunet's own modules get lunet.core from their loader, not from `require` by a chunk's name:
// the loader require calls runs the module's chunk as chunk(name, core). core is the loader's
// upvalue only (no table a script reaches holds it; lunet.core_guard keeps the debug library
// from showing or replacing it). C, not Swift: the chunk's own error passes through this frame,
// never through a Swift one.
static int module_loader(lua_State *L) {
    lua_settop(L, 1);                                   // the module's name
    lua_pushvalue(L, lua_upvalueindex(1));              // its chunk
    lua_insert(L, 1);
    lua_pushvalue(L, lua_upvalueindex(2));              // core
    lua_call(L, 2, LUA_MULTRET);
    return lua_gettop(L);
}

void lunet_wrap_module_chunk(lua_State *L) {
    lua_pushcclosure(L, module_loader, 2);
}

const char *lunet_lua_release(void) { return LUA_RELEASE; }

void lunet_error_object(lua_State *L, const char *kind) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_rotate(L, -2, 1);              // the message above the table
    lua_setfield(L, -2, "message");
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lunet.Error") == LUA_TTABLE) lua_setmetatable(L, -2);
    else lua_pop(L, 1);
}

// ---------------------------------------------------------------------------------------------
// Interrupting Lua code that never yields (a runaway loop at the prompt). A count hook checks a
// flag that a signal handler may set; while the flag is set, every check raises again, so a
// pcall in the runaway code cannot swallow the interrupt. New coroutines inherit the hook.
// ---------------------------------------------------------------------------------------------
#include <signal.h>

static volatile sig_atomic_t interrupt_requested = 0;

static void interrupt_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (!interrupt_requested) return;
    // From now on check at every instruction: a pcall may catch one raise, but the next
    // instruction outside it raises again, so the line unwinds to the host whatever it nests.
    lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, 1);
    lua_pushliteral(L, "interrupted (Ctrl-C)");
    lunet_error_object(L, "cancelled");
    BEFORE_RAISE();
    lua_error(L);
}

void lunet_interrupt_arm(lua_State *L) { lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, 1000); }
void lunet_interrupt_disarm(lua_State *L) { lua_sethook(L, NULL, 0, 0); }
void lunet_interrupt_request(void) { interrupt_requested = 1; }
void lunet_interrupt_clear(void) { interrupt_requested = 0; }
int lunet_interrupt_pending(void) { return interrupt_requested; }

// ---------------------------------------------------------------------------------------------
// A deadline for Lua code that may never yield (a test that spins: `lunet test`'s timeouts are
// otherwise timers, which a loop that never yields never lets run). A count hook on the code's
// coroutine compares the clock with the deadline every 1000 instructions; past it, it raises a
// `timeout` error object, and then at every instruction, so no pcall in the code can swallow
// it. One deadline for the process: tests run one at a time. Coroutines the code creates
// inherit the hook.
// ---------------------------------------------------------------------------------------------
#include <time.h>

static double deadline_at = 0;        // CLOCK_MONOTONIC seconds; 0: none
static double deadline_seconds = 0;

static double monotonic_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void deadline_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (deadline_at == 0 || monotonic_now() < deadline_at) return;
    lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 1);
    lua_pushfstring(L, "timed out after %f s (the code never yielded: stopped by the deadline hook)", deadline_seconds);
    lunet_error_object(L, "timeout");
    BEFORE_RAISE();
    lua_error(L);
}

void lunet_deadline_arm(lua_State *L, double seconds) {
    deadline_seconds = seconds;
    deadline_at = monotonic_now() + seconds;
    lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 1000);
}

void lunet_deadline_clear(void) { deadline_at = 0; }
