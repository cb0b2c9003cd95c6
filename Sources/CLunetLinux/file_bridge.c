// sync_file_range is a GNU extension Swift's Glibc module does not show.
#define _GNU_SOURCE
#include <fcntl.h>
#include "CLunetLinux.h"

int lunet_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}
