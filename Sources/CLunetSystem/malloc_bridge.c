// glibc's malloc tuning (mallopt): Swift's Glibc module does not bring in malloc.h.
#include "CLunetSystem.h"
#include <malloc.h>

void lunet_malloc_no_fastbins(void) {
    mallopt(M_MXFAST, 0);
}
