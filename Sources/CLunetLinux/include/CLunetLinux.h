// The Linux shim under the core: the calls Swift's Glibc module does not show (eventfd, the
// netlink route socket, getrandom, sync_file_range, glibc's malloc tuning). No Lua header and
// no curl header: each shim is one concern (the curl shim is CLunetCurl), and LunetCore, which
// stands on the two, cannot see Lua's API (scripts/check-layers checks that it stays so).
#ifndef CLUNET_LINUX_H
#define CLUNET_LINUX_H

#include <stddef.h>
#include <stdint.h>

/// Starts writing a file's range back to disk without waiting (sync_file_range WRITE).
int lunet_start_writeback(int fd, long long offset, long long length);

/// A non-blocking NETLINK_ROUTE socket subscribed to link and route changes, or -1.
int lunet_route_socket(void);
/// The bytes TCP socket `fd` has received, or -1 when the kernel cannot say.
long long lunet_socket_bytes_received(int fd);
/// A non-blocking eventfd (close-on-exec) that wakes the loop from other threads, or -1.
int lunet_wakeup_fd(void);
/// Fills p with n random bytes from the kernel; 0, or -1 if it could not.
int lunet_random_bytes(void *p, size_t n);
/// Turns glibc's fastbins off (mallopt M_MXFAST 0); the lunet executable says why.
void lunet_malloc_no_fastbins(void);
/// Lets the heap keep more free memory at its top, and maps 1 MB allocations and up on their
/// own (mallopt M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD); the lunet executable says why.
void lunet_malloc_keep_heap_top(void);
/// glibc's malloc_usable_size and the bytes allocated in all its arenas (mallinfo2's
/// uordblks), for tests.
size_t lunet_malloc_usable_size(void *p);
size_t lunet_malloc_in_use(void);

#endif
