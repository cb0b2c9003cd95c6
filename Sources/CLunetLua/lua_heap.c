// The allocator of the Lua states lunet makes (lunet_newstate): small blocks by size class from
// chunks the state owns, everything else from malloc.
//
// Why: Lua allocates and frees small objects (short strings, tables, closures, upvalues) by the
// hundred thousand when it builds or collects a large value (a decoded 5 MB JSON document), and
// glibc's general-purpose paths were about a tenth of such a decode. Here a block of up to 256
// bytes comes off its class's free list or the current chunk, and goes back onto the list when
// Lua frees it: a few instructions each way. Lua tells the allocator the size of every block it
// frees or resizes (osize), so no header is needed.
//
// What it costs: memory freed in small blocks stays with the state for its later small blocks,
// until lua_close (lunet_closestate gives the chunks back). Under AddressSanitizer the state uses
// plain malloc, so that a use of a freed Lua object is still caught (scripts/sanitize).
#include "CLunetLua.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUNET_HEAP_PLAIN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LUNET_HEAP_PLAIN 1
#endif

enum { GRAIN = 16, SMALL_MAX = 256, CLASSES = SMALL_MAX / GRAIN + 1, CHUNK = 64 * 1024 };

typedef struct lunet_heap {
    void *free_list[CLASSES];   // freed blocks of each class, linked through their first word
    char *cursor, *limit;       // the unused rest of the newest chunk
    void *chunks;               // every chunk, linked through its first word
} lunet_heap;

extern _Thread_local int lunet_swift_depth;   // lua_bridge.c

// A block Lua asked for and malloc could not give. With no Swift frame between here and the
// innermost protected call, NULL: Lua raises "not enough memory", which a pcall catches, as in
// stock Lua. Inside a Swift function, Lua's longjmp would skip the Swift frame's cleanup: the
// process stops with a message instead.
#define OUT_OF_MEMORY(n) do { if (lunet_swift_depth == 0) return NULL; out_of_memory(n); } while (0)

static void out_of_memory(size_t n) {
    fprintf(stderr, "lunet: out of memory (Lua asked for %zu bytes inside a Swift function); stopping\n", n);
    abort();
}

static inline size_t class_of(size_t n) { return (n + GRAIN - 1) / GRAIN; }

static void *small_block(lunet_heap *h, size_t c) {
    void *p = h->free_list[c];
    if (p) {
        h->free_list[c] = *(void **)p;
        return p;
    }
    size_t size = c * GRAIN;
    if ((size_t)(h->limit - h->cursor) < size) {
        char *chunk = malloc(CHUNK);
        if (!chunk) return NULL;
        *(void **)chunk = h->chunks;
        h->chunks = chunk;
        h->cursor = chunk + GRAIN;   // the link, rounded up to keep blocks 16-byte aligned
        h->limit = chunk + CHUNK;
    }
    p = h->cursor;
    h->cursor += size;
    return p;
}

static inline void small_free(lunet_heap *h, void *p, size_t c) {
    *(void **)p = h->free_list[c];
    h->free_list[c] = p;
}

static void *plain_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud; (void)osize;
    if (nsize == 0) { free(ptr); return NULL; }
    void *p = realloc(ptr, nsize);
    if (p == NULL) OUT_OF_MEMORY(nsize);
    return p;
}

static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    lunet_heap *h = ud;
    if (ptr == NULL) {   // a new block (osize is then the kind of object, not a size)
        if (nsize == 0) return NULL;
        void *p = nsize <= SMALL_MAX ? small_block(h, class_of(nsize)) : malloc(nsize);
        if (p == NULL) OUT_OF_MEMORY(nsize);
        return p;
    }
    if (osize <= SMALL_MAX) {
        size_t c = class_of(osize);
        if (nsize == 0) { small_free(h, ptr, c); return NULL; }
        if (nsize <= SMALL_MAX && class_of(nsize) == c) return ptr;
        void *p = nsize <= SMALL_MAX ? small_block(h, class_of(nsize)) : malloc(nsize);
        if (p == NULL) OUT_OF_MEMORY(nsize);   // the old block stays as it was, as Lua expects
        memcpy(p, ptr, osize < nsize ? osize : nsize);
        small_free(h, ptr, c);
        return p;
    }
    if (nsize == 0) { free(ptr); return NULL; }
    if (nsize <= SMALL_MAX) {
        void *p = small_block(h, class_of(nsize));
        if (p == NULL) OUT_OF_MEMORY(nsize);
        memcpy(p, ptr, nsize);
        free(ptr);
        return p;
    }
    void *p = realloc(ptr, nsize);
    if (p == NULL) OUT_OF_MEMORY(nsize);
    return p;
}

lua_State *lunet_newstate_with_heap(void) {
#ifdef LUNET_HEAP_PLAIN
    return lua_newstate(plain_alloc, NULL);
#else
    lunet_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    lua_State *L = lua_newstate(heap_alloc, h);
    if (!L) free(h);
    return L;
#endif
}

void lunet_closestate(lua_State *L) {
    void *ud = NULL;
    lua_Alloc f = lua_getallocf(L, &ud);
    lua_close(L);
    if (f != heap_alloc || ud == NULL) return;
    lunet_heap *h = ud;
    for (void *c = h->chunks; c; ) {
        void *next = *(void **)c;
        free(c);
        c = next;
    }
    free(h);
}
