// glibc's malloc tuning (mallopt): Swift's Glibc module does not bring in malloc.h.
#include "CLunetLinux.h"
#include <malloc.h>

void lunet_malloc_no_fastbins(void) {
    mallopt(M_MXFAST, 0);
}

void lunet_malloc_keep_heap_top(void) {
    // Allocations of 1 MB and more get mappings of their own, returned when freed; below that
    // the heap serves them, and keeps up to 4 MB free at its top (growing by 512 KB beyond what
    // is asked) instead of 128 KB. Setting these stops glibc's own sliding of the thresholds,
    // which starts at 128 KB and moves only when a mapped chunk is freed.
    mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    mallopt(M_TOP_PAD, 512 * 1024);
}

size_t lunet_malloc_usable_size(void *p) { return malloc_usable_size(p); }

size_t lunet_malloc_in_use(void) { return mallinfo2().uordblks; }
