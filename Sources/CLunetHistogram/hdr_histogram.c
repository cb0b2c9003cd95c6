// The counts of `lunet load`'s HDR histograms (lua/lunet/load/hdr.lua), in C.
//
// Why in C: a run records seven values a request (the duration, its five phases, the
// iteration's), and in Lua each record was ~30 VM instructions and eight table lookups by name.
// Moving them here took a request under `lunet load` from 113.9k to 105.4k instructions
// (callgrind, 64 VUs on one nginx file; the bare 64-task loop takes 90.2k). A record is one
// call, and a request's six values are one call through a group (below). The layout, the
// rounding and every figure are hdr.lua's (documented there); the percentiles, the encoding and
// the text stay in Lua and read the counts through next().
//
// A histogram is a userdata: its exact figures, and its counts in one of two forms. It starts
// sparse: up to SPARSE (slot, count) pairs inline, ~150 bytes in all, as small as the Lua table
// it replaced (a run may keep 10,000 tag sets of seven histograms, most of them holding few
// distinct values). The first value of a slot past those makes it chunked: a directory of 92
// chunk pointers, each chunk the counts of 256 consecutive slots, made the first time one of
// them is counted. The directory and the chunks are userdata of their own, kept in the
// histogram's user value (a table), so the collector sees and frees all of it: no __gc.
// Functions Lua calls here check their arguments and raise with a message naming the problem;
// nothing here calls Swift.
#include "CLunetHistogram.h"

#include <lua5.4/lauxlib.h>

#include <math.h>   // HUGE_VAL
#include <string.h>

#include "before_raise.h"

enum {
    SUB_HALF_MAG = 10,              // hdr.lua's SUB_HALF_MAG: 1024 sub-buckets a half
    SUB_HALF = 1 << SUB_HALF_MAG,
    SMALL = 2 * SUB_HALF,           // values below this are their own slot
    SLOTS = 23 * SUB_HALF,          // past index_of(HIGHEST)
    CHUNK = 256,
    CHUNKS = SLOTS / CHUNK,
};
#define HIGHEST 3600000000LL        // one hour in microseconds (hdr.HIGHEST)

enum { SPARSE = 6 };

typedef struct {
    lua_Integer count, sum, clamped;
    lua_Integer min, max;           // LUA_MAXINTEGER and LUA_MININTEGER while empty
    lua_Integer **dir;              // NULL while sparse; else CHUNKS chunk pointers (NULL: none counted)
    int sparse;                     // pairs in use while sparse
    unsigned short slot[SPARSE];
    lua_Integer n[SPARSE];
} histogram;

// The helpers that raise are inlined into the function Lua called, so that BEFORE_RAISE takes
// off the one frame the longjmp skips (ThreadSanitizer; see before_raise.h), even unoptimised.
#define RAISES static inline __attribute__((always_inline))

// Counts add with wrap-around on purpose (no undefined behaviour): lunet.load.result refuses
// counts and sums past 2^53, so a wrap needs more values than any run records.
static inline lua_Integer add_counts(lua_Integer a, lua_Integer b) { return (lua_Integer)((lua_Unsigned)a + (lua_Unsigned)b); }

RAISES int fail(lua_State *L, const char *what) {
    lua_pushstring(L, what);
    BEFORE_RAISE();
    return lua_error(L);
}

// The histogram at `idx`, or NULL when it is something else. Upvalue 1 of every function here
// is the histograms' metatable.
static histogram *test(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(histogram)) return NULL;
    histogram *h = lua_touserdata(L, idx);
    if (!lua_getmetatable(L, idx)) return NULL;
    int same = lua_rawequal(L, -1, lua_upvalueindex(1));
    lua_pop(L, 1);
    return same ? h : NULL;
}

RAISES histogram *check(lua_State *L, int idx, const char *fn) {
    histogram *h = test(L, idx);
    if (h == NULL) {
        lua_pushfstring(L, "hdr.%s: argument %d is not a histogram", fn, idx);
        BEFORE_RAISE();
        lua_error(L);
    }
    return h;
}

// The user value table of the histogram at stack index `idx`, made when new, pushed.
static void push_store(lua_State *L, int idx) {
    if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE) return;
    lua_pop(L, 1);
    lua_createtable(L, 4, 0);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, idx, 1);
}

// The counts of slot i's chunk, made when new. The histogram is chunked, at stack index `idx`.
static lua_Integer *chunk_of(lua_State *L, histogram *h, int idx, int i) {
    int k = i / CHUNK;
    if (h->dir[k] != NULL) return h->dir[k];
    push_store(L, idx);
    lua_Integer *c = lua_newuserdatauv(L, CHUNK * sizeof(lua_Integer), 0);
    memset(c, 0, CHUNK * sizeof(lua_Integer));
    lua_rawseti(L, -2, k + 2);   // 1 is the directory
    lua_pop(L, 1);
    h->dir[k] = c;
    return c;
}

// Sparse to chunked: the directory made, the pairs moved into chunks.
static void make_chunked(lua_State *L, histogram *h, int idx) {
    push_store(L, idx);
    lua_Integer **dir = lua_newuserdatauv(L, CHUNKS * sizeof(lua_Integer *), 0);
    memset(dir, 0, CHUNKS * sizeof(lua_Integer *));
    lua_rawseti(L, -2, 1);
    lua_pop(L, 1);
    h->dir = dir;
    for (int k = 0; k < h->sparse; k++) chunk_of(L, h, idx, h->slot[k])[h->slot[k] % CHUNK] += h->n[k];
    h->sparse = 0;
}

// n more at slot i of the histogram at stack index `idx`. With idx 0 (the histogram is not on
// the stack: record_group) returns 0, counting nothing, when new storage is needed; else 1.
static int add_at(lua_State *L, histogram *h, int idx, int i, lua_Integer n) {
    if (h->dir == NULL) {
        for (int k = 0; k < h->sparse; k++) {
            if (h->slot[k] == i) {
                h->n[k] = add_counts(h->n[k], n);
                return 1;
            }
        }
        if (h->sparse < SPARSE) {
            h->slot[h->sparse] = (unsigned short)i;
            h->n[h->sparse++] = n;
            return 1;
        }
        if (idx == 0) return 0;
        make_chunked(L, h, idx);
    }
    lua_Integer *c = h->dir[i / CHUNK];
    if (c == NULL) {
        if (idx == 0) return 0;
        c = chunk_of(L, h, idx, i);
    }
    c[i % CHUNK] = add_counts(c[i % CHUNK], n);
    return 1;
}

// The count at slot i.
static lua_Integer count_at(const histogram *h, int i) {
    if (h->dir != NULL) return h->dir[i / CHUNK] ? h->dir[i / CHUNK][i % CHUNK] : 0;
    for (int k = 0; k < h->sparse; k++)
        if (h->slot[k] == i) return h->n[k];
    return 0;
}

static int slot_of(lua_Integer v) {
    if (v < SMALL) return (int)v;
    int bucket = 63 - __builtin_clzll((unsigned long long)v) - SUB_HALF_MAG;
    return ((bucket + 1) << SUB_HALF_MAG) + (int)(v >> bucket) - SUB_HALF;
}

static int h_new(lua_State *L) {
    histogram *h = lua_newuserdatauv(L, sizeof(histogram), 1);
    memset(h, 0, sizeof *h);
    h->min = LUA_MAXINTEGER;
    h->max = LUA_MININTEGER;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setmetatable(L, -2);
    return 1;
}

// A value to record: us (microseconds) rounded and clamped as hdr.lua says.
typedef struct {
    lua_Integer v;
    int slot, clamped;
} value;

// us as a value to record; 0 for NaN (no value to keep).
static int value_of(lua_Number us, value *x) {
    x->clamped = 0;
    if (!(us >= 0)) {
        if (us != us) return 0;
        us = 0;
    } else if (us >= HIGHEST + 0.5) {
        us = (lua_Number)HIGHEST;
        x->clamped = 1;
    }
    x->v = (lua_Integer)(us + 0.5);   // us >= 0: truncating is flooring
    x->slot = slot_of(x->v);
    return 1;
}

// Counts x in the histogram at stack index idx (0: not on the stack; then returns 0, counting
// nothing, when it needs new storage).
static int count_value(lua_State *L, histogram *h, int idx, const value *x) {
    lua_Integer *c;
    if (h->dir != NULL && (c = h->dir[x->slot / CHUNK]) != NULL) c[x->slot % CHUNK]++;   // a long run's case
    else if (!add_at(L, h, idx, x->slot, 1)) return 0;
    h->clamped += x->clamped;
    h->count = add_counts(h->count, 1);
    h->sum = add_counts(h->sum, x->v);
    if (x->v < h->min) h->min = x->v;
    if (x->v > h->max) h->max = x->v;
    return 1;
}

// Records us (microseconds) in the histogram at stack index idx.
static void record_value(lua_State *L, histogram *h, int idx, lua_Number us) {
    value x;
    if (value_of(us, &x)) (void)count_value(L, h, idx, &x);
}

RAISES lua_Number us_arg(lua_State *L, int idx, const char *fn) {
    if (lua_type(L, idx) != LUA_TNUMBER) {   // not a string that reads as one, either
        lua_pushfstring(L, "hdr.%s: argument %d is not a number of microseconds", fn, idx);
        BEFORE_RAISE();
        lua_error(L);
    }
    return lua_tonumber(L, idx);
}

// record(h, us)
static int h_record(lua_State *L) {
    histogram *h = check(L, 1, "record");
    record_value(L, h, 1, us_arg(L, 2, "record"));
    return 0;
}

// A group: the histograms one request's values go into, in order (lunet.load.vu makes one for
// each tag set), so that recording them is one call that checks one argument. It holds their
// addresses, and keeps them alive through a table of its own in its user value (like a
// histogram's chunks: the debug library's setuservalue can break that, as it can break other
// userdata's invariants).
enum { GROUP_MAX = 16 };
typedef struct {
    int n;
    histogram *h[GROUP_MAX];
} group;

// The group at `idx`, or NULL. Upvalue 2 of every function here is the groups' metatable.
static group *test_group(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(group)) return NULL;
    group *g = lua_touserdata(L, idx);
    if (!lua_getmetatable(L, idx)) return NULL;
    int same = lua_rawequal(L, -1, lua_upvalueindex(2));
    lua_pop(L, 1);
    return same ? g : NULL;
}

// group(list): a group of the 1 to GROUP_MAX histograms of `list`, in its order.
static int h_group(lua_State *L) {
    if (lua_type(L, 1) != LUA_TTABLE) return fail(L, "hdr.group: argument 1 is not a list of histograms");
    lua_Unsigned n = lua_rawlen(L, 1);
    if (n < 1 || n > GROUP_MAX) return fail(L, "hdr.group: a group holds 1 to 16 histograms");
    group *g = lua_newuserdatauv(L, sizeof(group), 1);   // at 2
    g->n = (int)n;
    lua_createtable(L, (int)n, 0);                          // at 3: what keeps them alive
    for (int k = 1; k <= (int)n; k++) {
        lua_rawgeti(L, 1, k);
        histogram *h = test(L, -1);
        if (h == NULL) {
            lua_pushfstring(L, "hdr.group: list item %d is not a histogram", k);
            BEFORE_RAISE();
            return lua_error(L);
        }
        g->h[k - 1] = h;
        lua_rawseti(L, 3, k);
    }
    lua_setiuservalue(L, 2, 1);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_setmetatable(L, 2);
    return 1;
}

// record_group(g, us1, us2, ...): us1 into the group's first histogram, us2 into its second, ...:
// the values of one request in one call. Every argument is checked before any is recorded.
static int h_record_group(lua_State *L) {
    group *g = test_group(L, 1);
    if (g == NULL) return fail(L, "hdr.record_group: argument 1 is not a group of histograms");
    int n = lua_gettop(L) - 1;
    if (n > g->n) {
        lua_pushfstring(L, "hdr.record_group: %d values for a group of %d histograms", n, g->n);
        BEFORE_RAISE();
        return lua_error(L);
    }
    for (int k = 1; k <= n; k++) (void)us_arg(L, k + 1, "record_group");
    // Room for the rare case below: the keeping table, the histogram, and what making its
    // storage pushes (its store, a chunk).
    if (!lua_checkstack(L, 6)) return fail(L, "hdr.record_group: no room on the stack");
    for (int k = 0; k < n; k++) {
        value x;
        if (!value_of(lua_tonumber(L, k + 2), &x)) continue;
        histogram *h = g->h[k];
        if (count_value(L, h, 0, &x)) continue;
        // New storage: made with the histogram on the stack (its user value holds it). The
        // debug library can replace that table: then this is an error, not a histogram taken
        // from whatever is there.
        if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE || lua_rawgeti(L, -1, k + 1) != LUA_TUSERDATA ||
            lua_touserdata(L, -1) != (void *)h)
            return fail(L, "hdr.record_group: the group's histograms were replaced");
        (void)count_value(L, h, lua_gettop(L), &x);
        lua_pop(L, 2);
    }
    return 0;
}

static int next_slot(const histogram *h, int i);

// merge(a, b): b's counts and figures added into a; returns a.
static int h_merge(lua_State *L) {
    histogram *a = check(L, 1, "merge"), *b = check(L, 2, "merge");
    if (a == b) return fail(L, "hdr.merge: a histogram merged into itself");
    for (int j = next_slot(b, -1); j >= 0; j = next_slot(b, j)) add_at(L, a, 1, j, count_at(b, j));
    a->count = add_counts(a->count, b->count);
    a->sum = add_counts(a->sum, b->sum);
    a->clamped = add_counts(a->clamped, b->clamped);
    if (b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
    lua_settop(L, 1);
    return 1;
}

// The first slot after i that holds a count, or -1.
static int next_slot(const histogram *h, int i) {
    if (h->dir == NULL) {
        int best = -1;
        for (int k = 0; k < h->sparse; k++)
            if (h->slot[k] > i && h->n[k] != 0 && (best < 0 || h->slot[k] < best)) best = h->slot[k];
        return best;
    }
    for (int j = i + 1; j < SLOTS;) {
        const lua_Integer *c = h->dir[j / CHUNK];
        if (c == NULL) {
            j = (j / CHUNK + 1) * CHUNK;
            continue;
        }
        if (c[j % CHUNK] != 0) return j;
        j++;
    }
    return -1;
}

// next(h, i): the next slot after index i (-1: the first) that holds a count, and its count;
// nothing past the last. In the order of the slots, which is the order of the values.
static int h_next(lua_State *L) {
    histogram *h = check(L, 1, "next");
    int isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (!isint || i < -1 || i >= SLOTS) return fail(L, "hdr.next: a slot index expected");
    int j = next_slot(h, (int)i);
    if (j < 0) return 0;
    lua_pushinteger(L, j);
    lua_pushinteger(L, count_at(h, j));
    return 2;
}

// add(h, i, n): n more at slot i (a decoded histogram's counts; its figures come with them).
static int h_add(lua_State *L) {
    histogram *h = check(L, 1, "add");
    int ok_i, ok_n;
    lua_Integer i = lua_tointegerx(L, 2, &ok_i), n = lua_tointegerx(L, 3, &ok_n);
    if (!ok_i || i < 0 || i > slot_of(HIGHEST)) return fail(L, "hdr.add: slot index out of range");
    if (!ok_n || n < 0) return fail(L, "hdr.add: a count must be a whole number, 0 or more");
    add_at(L, h, 1, (int)i, n);
    return 0;
}

RAISES lua_Integer whole_arg(lua_State *L, int idx, lua_Integer absent, const char *what) {
    if (lua_isnoneornil(L, idx)) return absent;
    int ok;
    lua_Integer v = lua_tointegerx(L, idx, &ok);
    if (!ok) {
        lua_pushfstring(L, "hdr.set_figures: %s must be a whole number", what);
        BEFORE_RAISE();
        lua_error(L);
    }
    return v;
}

// set_figures(h, count, sum, min, max, clamped): a decoded histogram's exact figures (min and
// max nil when it is empty).
static int h_set_figures(lua_State *L) {
    histogram *h = check(L, 1, "set_figures");
    h->count = whole_arg(L, 2, 0, "count");
    h->sum = whole_arg(L, 3, 0, "sum");
    h->min = whole_arg(L, 4, LUA_MAXINTEGER, "min");
    h->max = whole_arg(L, 5, LUA_MININTEGER, "max");
    h->clamped = whole_arg(L, 6, 0, "clamped");
    return 0;
}

// h.count, h.sum, h.min, h.max (math.huge and -math.huge while empty, as in Lua), h.clamped,
// h.counts (a new table { [slot] = count }, for readers that walk it), else the methods
// (upvalue 2, filled by hdr.lua).
static int h_index(lua_State *L) {
    histogram *h = check(L, 1, "index");
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;   // a number key stays a number
    if (k != NULL) {
        if (strcmp(k, "count") == 0) { lua_pushinteger(L, h->count); return 1; }
        if (strcmp(k, "sum") == 0) { lua_pushinteger(L, h->sum); return 1; }
        if (strcmp(k, "clamped") == 0) { lua_pushinteger(L, h->clamped); return 1; }
        if (strcmp(k, "min") == 0) {
            if (h->count > 0 || h->min != LUA_MAXINTEGER) lua_pushinteger(L, h->min); else lua_pushnumber(L, HUGE_VAL);
            return 1;
        }
        if (strcmp(k, "max") == 0) {
            if (h->count > 0 || h->max != LUA_MININTEGER) lua_pushinteger(L, h->max); else lua_pushnumber(L, -HUGE_VAL);
            return 1;
        }
        if (strcmp(k, "counts") == 0) {
            lua_newtable(L);
            for (int j = next_slot(h, -1); j >= 0; j = next_slot(h, j)) {
                lua_pushinteger(L, count_at(h, j));
                lua_rawseti(L, -2, j);
            }
            return 1;
        }
    }
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(2));
    return 1;
}

// core.hdr_open(): { new, record, group, record_group, merge, next, add, set_figures, methods }.
// `methods` is what a histogram's other keys find (hdr.lua puts its Lua methods there). Every
// state has one metatable for histograms and one for groups (in the registry), however often
// this is called.
static int hdr_open(lua_State *L) {
    if (luaL_newmetatable(L, "lunet.hdr.group")) {   // [gmt]
        lua_pushliteral(L, "lunet.hdr.group");
        lua_setfield(L, -2, "__metatable");
    }
    int fresh = luaL_newmetatable(L, "lunet.hdr");   // [gmt, mt]
    if (fresh) {
        lua_newtable(L);
        lua_setfield(L, -2, "methods");
        lua_pushliteral(L, "lunet.hdr");
        lua_setfield(L, -2, "__metatable");   // getmetatable(h) is this name, not the table
    }
    lua_getfield(L, -1, "methods");           // [gmt, mt, methods]
    if (fresh) {
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_pushcclosure(L, h_index, 2);
        lua_setfield(L, -3, "__index");
    }
    static const luaL_Reg fns[] = {
        {"new", h_new}, {"record", h_record}, {"group", h_group}, {"record_group", h_record_group},
        {"merge", h_merge}, {"next", h_next}, {"add", h_add}, {"set_figures", h_set_figures}, {NULL, NULL},
    };
    lua_createtable(L, 0, 9);                 // [gmt, mt, methods, t]
    for (const luaL_Reg *r = fns; r->name != NULL; r++) {
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -5);
        lua_pushcclosure(L, r->func, 2);
        lua_setfield(L, -2, r->name);
    }
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "methods");
    return 1;
}

void lunet_push_hdr_open(lua_State *L) { lua_pushcfunction(L, hdr_open); }
