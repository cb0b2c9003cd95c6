#ifndef LUNET_FUZZ_DRIVER_H
#define LUNET_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// A fuzz target's entry: libFuzzer's LLVMFuzzerTestOneInput signature.
typedef int (*lunet_fuzz_target)(const uint8_t *data, size_t size);

/// Runs libFuzzer's driver (command line, corpus, mutation) over `target`. SwiftPM links every
/// executable with `main` renamed to `<module>_main`, so a fuzzer defines that symbol and calls
/// this instead of relying on libFuzzer's own `main`.
int lunet_fuzz_run(int argc, char **argv, lunet_fuzz_target target);

#endif
