// Random bytes from the kernel (WebSocket keys and masks). Swift's Glibc module does not bring
// in sys/random.h.
#include "CLunetLinux.h"
#include <sys/random.h>

int lunet_random_bytes(void *p, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = getrandom((char *)p + done, n - done, 0);
        if (r < 0) return -1;
        done += (size_t)r;
    }
    return 0;
}
