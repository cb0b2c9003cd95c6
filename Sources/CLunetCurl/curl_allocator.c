// libcurl's memory functions (curl_global_init_mem): glibc's malloc, with each thread keeping
// recently freed blocks for its next allocations of their size.
//
// Why: libcurl allocates and frees ~25 blocks a request (a 16 KB receive buffer, two zeroed
// blocks of 752 and 1,496 bytes, header strings, its request buffer grown by realloc) and
// lunet's loop runs 64 requests at once. glibc's per-thread cache holds 7 freed blocks of a
// size; past that, blocks go back to its bins and come out of them through the general paths,
// ~9k of the ~96k instructions of a request in the 64-concurrent benchmark, and more of its
// time (cache misses). Here freed blocks wait on lists of the thread's own, CACHED_PER_LIST at
// most: one for each 16-byte class up to SMALL_MAX, and LARGE_LISTS for blocks of one exact
// size each up to LARGE_MAX. Every block is a glibc block (a small one malloc'd for its class's
// whole size), so a block freed with free(), or on another thread, or reallocated, is right.
//
// What it costs: up to CACHED_BYTES of freed blocks per thread stay with that thread until it
// allocates again or ends (a thread's blocks are freed then). Under AddressSanitizer nothing is
// kept, so that a use of a freed block is still caught (scripts/sanitize).
#define _GNU_SOURCE
#include "CLunetCurl.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUNET_ALLOCATOR_PLAIN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LUNET_ALLOCATOR_PLAIN 1
#endif

enum {
    GRAIN = 16,
    SMALL_MAX = 1024,                   // blocks up to this size by 16-byte class
    CLASSES = SMALL_MAX / GRAIN + 1,    // class k holds blocks usable for k * GRAIN bytes
    LARGE_MAX = 64 * 1024,              // larger ones by their exact size, in a few lists
    LARGE_LISTS = 8,
    CACHED_PER_LIST = 128,              // 64 transfers' worth of a block per request, twice
    CACHED_BYTES = 512 * 1024,          // and no more than this per thread in all
};

typedef struct {
    size_t size;                  // the usable size of its blocks (0: the list is free)
    void *head;
    unsigned count;
} large_list;

typedef struct {
    void *head[CLASSES];          // freed blocks of each class, linked through their first word
    unsigned short count[CLASSES];
    large_list large[LARGE_LISTS];
    size_t bytes;                 // kept in all
    unsigned next_evicted;        // the large list given up next when a new size needs one
    int registered;               // 1: the exit handler knows this thread's cache; -1: it ran
} block_cache;

static __thread block_cache cache;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void free_list(void *b) {
    while (b) {
        void *next = *(void **)b;
        free(b);
        b = next;
    }
}

// A thread's blocks go back to glibc when it ends (libcurl's resolver threads come and go).
static void release_cache(void *p) {
    block_cache *c = p;
    for (int k = 0; k < CLASSES; k++) {
        free_list(c->head[k]);
        c->head[k] = NULL;
        c->count[k] = 0;
    }
    for (int i = 0; i < LARGE_LISTS; i++) {
        free_list(c->large[i].head);
        c->large[i] = (large_list){0, NULL, 0};
    }
    c->bytes = 0;
    c->registered = -1;   // what the thread frees after this (other exit handlers) is not kept
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, release_cache); }

// The usable size glibc gives a request of n bytes (its chunk: n and an 8-byte header, in
// 16-byte steps): a large block freed with that usable size serves the request, and a large
// block is allocated at that size. Only a lookup key: a block is always filed under the size
// malloc_usable_size reports for it.
static inline size_t large_usable(size_t n) { return ((n + 8 + 15) & ~(size_t)15) - 8; }

static inline large_list *large_list_of(size_t usable) {
    for (int i = 0; i < LARGE_LISTS; i++)
        if (cache.large[i].size == usable) return &cache.large[i];
    return NULL;
}

#ifndef LUNET_ALLOCATOR_PLAIN
// Keeps block p (usable size `usable`) for a later allocation; 0 when it is not kept. The whole
// rule, out of line: lunet_curl_mem_free keeps a small block itself in the common case.
__attribute__((noinline)) static int keep(void *p, size_t usable) {
    size_t k = usable / GRAIN;   // rounded down: a 24-byte block serves requests of up to 16
    if (k == 0 || usable > LARGE_MAX) return 0;
    size_t kept = k < CLASSES ? k * GRAIN : usable;
    if (cache.bytes + kept > CACHED_BYTES) return 0;
    large_list *list = NULL;
    if (k >= CLASSES) {
        list = large_list_of(usable);
        if (!list) {   // a list of its own: a free one, else the next in turn is given up
            for (int i = 0; i < LARGE_LISTS && !list; i++)
                if (cache.large[i].count == 0) list = &cache.large[i];
            if (!list) {
                // Blocks of sizes asked for once (glibc may hand out a little more than asked)
                // must not hold every list for good: the size freed now is as likely to come
                // back as one kept before.
                list = &cache.large[cache.next_evicted++ % LARGE_LISTS];
                free_list(list->head);
                cache.bytes -= list->count * list->size;
                *list = (large_list){0, NULL, 0};
                if (cache.bytes + kept > CACHED_BYTES) return 0;
            }
            list->size = usable;
        }
        if (list->count >= CACHED_PER_LIST) return 0;
    } else if (cache.count[k] >= CACHED_PER_LIST) {
        return 0;
    }
    if (cache.registered != 1) {
        if (cache.registered < 0) return 0;
        pthread_once(&exit_key_once, make_exit_key);
        // Without the exit handler a thread's blocks would outlive it: then keep nothing.
        if (pthread_setspecific(exit_key, &cache) != 0) return 0;
        cache.registered = 1;
    }
    if (list) {
        *(void **)p = list->head;
        list->head = p;
        list->count++;
    } else {
        *(void **)p = cache.head[k];
        cache.head[k] = p;
        cache.count[k]++;
    }
    cache.bytes += kept;
    return 1;
}
#endif

void *lunet_curl_mem_malloc(size_t n) {
#ifndef LUNET_ALLOCATOR_PLAIN
    if (n - 1 < SMALL_MAX) {   // 1 ... SMALL_MAX (0 wraps to the largest size_t)
        size_t k = (n + GRAIN - 1) / GRAIN;
        void *b = cache.head[k];
        if (b) {
            cache.head[k] = *(void **)b;
            cache.count[k]--;
            cache.bytes -= k * GRAIN;
            return b;
        }
        return malloc(k * GRAIN);   // the class's whole size: any block of the class fits any request of it
    }
    if (n <= LARGE_MAX) {
        size_t usable = large_usable(n);
        large_list *list = large_list_of(usable);
        if (list && list->head) {
            void *b = list->head;
            list->head = *(void **)b;
            list->count--;
            cache.bytes -= usable;
            return b;
        }
        // Asked for at the size glibc would round it to: an allocator that gives exactly what
        // is asked (a sanitizer's) then reports the same usable size when it is freed.
        return malloc(usable);
    }
#endif
    return malloc(n);
}

// Frees a block (not NULL). Out of line, so that lunet_curl_mem_free's test for NULL needs no
// stack frame: libcurl frees NULL ~80 times a request (Curl_safefree), a block ~33 times, and
// with one function the frame was set up and taken down for every NULL too.
__attribute__((noinline)) static void free_block(void *p) {
#ifndef LUNET_ALLOCATOR_PLAIN
    size_t usable = malloc_usable_size(p), k = usable / GRAIN;
    // A small block with room on its list: kept here, no call (keep() has every other case).
    if (k - 1 < CLASSES - 1 && cache.registered == 1 && cache.count[k] < CACHED_PER_LIST &&
        cache.bytes + k * GRAIN <= CACHED_BYTES) {
        *(void **)p = cache.head[k];
        cache.head[k] = p;
        cache.count[k]++;
        cache.bytes += k * GRAIN;
        return;
    }
    if (keep(p, usable)) return;
#endif
    free(p);
}

void lunet_curl_mem_free(void *p) {
    if (p) free_block(p);
}

void *lunet_curl_mem_realloc(void *p, size_t n) {
    if (!p) return lunet_curl_mem_malloc(n);
#ifndef LUNET_ALLOCATOR_PLAIN
    // A growing buffer (libcurl's request, built a piece at a time) moves between kept blocks:
    // a copy of at most LARGE_MAX bytes instead of glibc's paths. A block big enough stays.
    if (n - 1 < LARGE_MAX) {
        size_t usable = malloc_usable_size(p);
        if (usable >= n) return p;
        void *q = lunet_curl_mem_malloc(n);
        if (!q) return NULL;
        memcpy(q, p, usable);
        lunet_curl_mem_free(p);
        return q;
    }
#endif
    return realloc(p, n);
}

void *lunet_curl_mem_calloc(size_t count, size_t size) {
    size_t n;
    if (__builtin_mul_overflow(count, size, &n)) return NULL;
    if (n == 0 || n > LARGE_MAX) return calloc(count, size);
    void *p = lunet_curl_mem_malloc(n);
    if (p) memset(p, 0, n);
    return p;
}

char *lunet_curl_mem_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = lunet_curl_mem_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

void lunet_curl_mem_counts(size_t *blocks, size_t *bytes) {
    size_t total = 0;
    for (int k = 0; k < CLASSES; k++) total += cache.count[k];
    for (int i = 0; i < LARGE_LISTS; i++) total += cache.large[i].count;
    *blocks = total;
    *bytes = cache.bytes;
}

int lunet_curl_mem_keeps_blocks(void) {
#ifdef LUNET_ALLOCATOR_PLAIN
    return 0;
#else
    return 1;
#endif
}
