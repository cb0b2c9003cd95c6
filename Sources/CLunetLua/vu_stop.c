// Stopping `lunet load`'s VUs whose iteration never yields (`while true do end`): the loop, and
// with it every timer, Ctrl-C's callback and the graceful stop, waits for a coroutine that never
// gives it back. A count hook on each VU's coroutine looks, every 1000 instructions, whether a
// stop was asked (a second Ctrl-C or SIGTERM: a flag) or a deadline has passed (a stop's grace,
// or the whole schedule: the monotonic clock read every 8th call, 8000 instructions, a vDSO
// read of ~20 ns). Stopped, the hook raises a `cancelled` error in that VU's coroutine at every
// instruction until the coroutine has unwound (a pcall in the iteration cannot swallow it);
// other coroutines, which have no hook, go on: the run's own code then ends the run and writes
// its summary.
//
// The deadline is read by the hook itself, not delivered by an interval timer's SIGALRM: a
// signal's handler may run late or not at all while a thread only spins in the Lua VM
// (ThreadSanitizer holds a signal back until the thread calls into libc, which a spinning VU
// never did: its run never stopped). The clock read is such a call, so a pending Ctrl-C is
// handled there too.
#include "CLunetLua.h"
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "before_raise.h"
#include "error_object.h"

static volatile sig_atomic_t stop_requested = 0;
static volatile sig_atomic_t signals_seen = 0;
// When the VUs are stopped, in monotonic milliseconds; 0 for no deadline. Set from signal
// handlers too: a lock-free atomic, written and read whole.
static _Atomic long long stop_at_ms = 0;
static _Atomic long long grace_ms = 30000;   // what a first Ctrl-C or SIGTERM leaves VUs
static unsigned calls = 0;

// clock_gettime is async-signal-safe.
static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void vu_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (!stop_requested) {
        if ((++calls & 7) != 0) return;
        long long at = atomic_load(&stop_at_ms);
        if (at == 0 || now_ms() < at) return;
        stop_requested = 1;
    }
    lua_sethook(L, vu_hook, LUA_MASKCOUNT, 1);
    lua_pushliteral(L, "the run was stopped: the code never yielded (stopped by lunet load's hook)");
    lunet_error_object(L, "cancelled");
    BEFORE_RAISE();
    lua_error(L);
}

void lunet_vu_hook_arm(lua_State *L) { lua_sethook(L, vu_hook, LUA_MASKCOUNT, 1000); }

void lunet_vu_stop_after(double seconds) {
    if (seconds <= 0) { stop_requested = 1; return; }
    atomic_store(&stop_at_ms, now_ms() + (long long)(seconds * 1000));
}

void lunet_vu_grace(double seconds) { atomic_store(&grace_ms, (long long)(seconds * 1000)); }

void lunet_vu_signal(void) {
    signals_seen = signals_seen + 1;
    if (signals_seen >= 2) stop_requested = 1;
    else atomic_store(&stop_at_ms, now_ms() + atomic_load(&grace_ms) + 500);
}

void lunet_vu_stop_reset(void) {
    atomic_store(&stop_at_ms, 0);
    stop_requested = 0;
    signals_seen = 0;
}
