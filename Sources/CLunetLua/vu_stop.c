// Stopping `lunet load`'s VUs whose iteration never yields (`while true do end`): the loop, and
// with it every timer, Ctrl-C's callback and the graceful stop, waits for a coroutine that never
// gives it back. A count hook on each VU's coroutine checks a flag every 1000 instructions;
// the flag is set from a signal handler (a second Ctrl-C or SIGTERM), or by an interval timer
// (SIGALRM) when a stop's grace, or the whole schedule, has passed. Set, the hook raises a
// `cancelled` error in that VU's coroutine at every instruction until the coroutine has
// unwound (a pcall in the iteration cannot swallow it); other coroutines, which have no hook,
// go on: the run's own code then ends the run and writes its summary.
#include "CLunetLua.h"
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "before_raise.h"
#include "error_object.h"

static volatile sig_atomic_t stop_requested = 0;
static volatile sig_atomic_t signals_seen = 0;
static double grace_seconds = 30;   // what a first Ctrl-C or SIGTERM leaves VUs (then the timer)

static void vu_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (!stop_requested) return;
    lua_sethook(L, vu_hook, LUA_MASKCOUNT, 1);
    lua_pushliteral(L, "the run was stopped: the code never yielded (stopped by lunet load's hook)");
    lunet_error_object(L, "cancelled");
    BEFORE_RAISE();
    lua_error(L);
}

static void on_alarm(int sig) {
    (void)sig;
    stop_requested = 1;
}

// setitimer and sigaction are async-signal-safe: this is called from signal handlers too.
static void alarm_after(double seconds) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval t;
    memset(&t, 0, sizeof t);
    if (seconds > 0) {
        t.it_value.tv_sec = (time_t)seconds;
        t.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
        if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
    }
    setitimer(ITIMER_REAL, &t, NULL);
}

void lunet_vu_hook_arm(lua_State *L) { lua_sethook(L, vu_hook, LUA_MASKCOUNT, 1000); }

void lunet_vu_stop_after(double seconds) {
    if (seconds <= 0) { stop_requested = 1; return; }
    alarm_after(seconds);
}

void lunet_vu_grace(double seconds) { grace_seconds = seconds; }

void lunet_vu_signal(void) {
    signals_seen = signals_seen + 1;
    if (signals_seen >= 2) stop_requested = 1;
    else alarm_after(grace_seconds + 0.5);
}

void lunet_vu_stop_reset(void) {
    alarm_after(0);   // (0: the timer off)
    stop_requested = 0;
    signals_seen = 0;
}
