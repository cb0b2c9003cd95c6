// The loop's wakeup descriptor: other threads write to it, the loop polls it beside its sockets
// (Swift's Glibc module does not bring in sys/eventfd.h).
#include "CLunetLinux.h"
#include <sys/eventfd.h>

int lunet_wakeup_fd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
