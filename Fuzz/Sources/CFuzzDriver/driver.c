#include "CFuzzDriver.h"

// In libFuzzer (compiler-rt) since LLVM 13.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t));

int lunet_fuzz_run(int argc, char **argv, lunet_fuzz_target target) {
    return LLVMFuzzerRunDriver(&argc, &argv, target);
}
