// What the lunet executable does before Swift's main runs: an ELF constructor, so that it
// happens as early as the process can do anything (after the dynamic loader, before the Swift
// runtime and the argument parsing).
//
// 1. glibc's malloc tuned (tune_malloc: fastbins off, a larger free top), before anything is
//    allocated in earnest and before a second thread exists.
// 2. Leaving without the exit handlers of libcurl's libraries, once they are loaded
//    (curl_loader.c, lunet_allow_fast_exit).
// 3. When the arguments make a request certain or likely, the libcurl preload thread starts here
//    (curl_loader.c). Loading libcurl and its ~30 libraries is most of what one GET costs
//    (~4-5 ms, what `curl` itself spends before it sends): started at `main` it began ~0.7 ms
//    later, while the loader, the Swift runtime and the command line parsing ran.
//
// 4. The arguments, kept for the Swift runtime and main.swift (_swift_stdlib_getUnsafeArgvArgc
//    and lunet_launch_arguments below).
//
// The prediction is narrow on purpose: every command line it accepts is one main.swift treats as
// a request, or an -e chunk that names `http`, which starts the same preload when it runs. A
// wrong guess costs only CPU on another core and, at exit, waiting for that thread to finish.
// main.swift still asks for the preload in every case it knows of (asking twice starts nothing).
// This file is linked into the lunet executable only: a program that embeds lunet, or a stock
// lua5.4 that loads it as a module, never runs it.
#include "CLunetLaunch.h"
#include "CLunetCurl.h"
#include "CLunetLinux.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"};

static int is_method(const char *a) {
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(a, methods[i]) == 0) return 1;
    return 0;
}

// "scheme://..." with a scheme of letters, digits, '+', '.', '-' (as CommandLine.looksLikeURL).
static int has_scheme(const char *a) {
    const char *sep = strstr(a, "://");
    if (!sep || sep == a) return 0;
    for (const char *p = a; p < sep; p++)
        if (!(isalnum((unsigned char)*p) || *p == '+' || *p == '.' || *p == '-')) return 0;
    return 1;
}

static int is_identifier_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

// Does a Lua chunk name `http` as a word (http.get, http:..., local h = http)?
static int names_http(const char *chunk) {
    for (const char *p = chunk; (p = strstr(p, "http")) != NULL; p += 4) {
        int starts = p == chunk || !is_identifier_char(p[-1]);
        if (starts && !is_identifier_char(p[4])) return 1;
    }
    return 0;
}

// 1 when these arguments make a request certain (`lunet GET ...`, `lunet http://...`) or likely
// (an -e chunk that names `http`). Pure but for access(2) on the first argument.
static int predicts_request(int argc, char **argv) {
    if (argc < 2 || !argv || !argv[1]) return 0;
    const char *first = argv[1];
    // The one-shot command line: `lunet METHOD ...` or `lunet URL ...`, unless that first word
    // is a file (a file is always a script).
    if (is_method(first) || has_scheme(first) || first[0] == ':' || strncmp(first, "localhost", 9) == 0)
        return access(first, F_OK) != 0;
    // Interpreter options before a script: an -e chunk that names http.
    for (int i = 1; i < argc && argv[i]; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-e") == 0) {
            if (i + 1 < argc && argv[i + 1] && names_http(argv[i + 1])) return 1;
            i++;
        } else if (strcmp(a, "-l") == 0 || strcmp(a, "--har") == 0) {
            i++;
        } else if (a[0] != '-' || strcmp(a, "-") == 0 || strcmp(a, "--") == 0) {
            return 0;  // the script (or standard input) begins: its text decides, when it runs
        }
    }
    return 0;
}

// Why fastbins off: Lua's collector frees a decoded document's objects by the hundred thousand;
// glibc parks small freed chunks in fastbins and merges them all (malloc_consolidate) at the
// next large request, which a growing table or stack makes soon. On the 5 MB JSON benchmark that
// merging was a sixth of the profile; without fastbins small chunks are merged as they are freed
// and the per-size tcache still serves the common alloc/free pairs (docs/benchmarks.md, after
// section (f)). Only the executable does this: a program that embeds lunet owns its allocator.
//
// Why the heap keeps up to 4 MB free at its top: with glibc's 128 KB, a loop of requests (64 in
// flight) shrank the heap and grew it again with brk a hundred times a second, and each page it
// gave back was faulted in again on its next use: 0.2 (s:get_async) to 0.5 (task.spawn workers)
// page faults a request, ~1 us of kernel time a request on this machine
// (Benchmarks/concurrent.sh; docs/benchmarks.md). The resident size of such a loop stayed
// the same (16.4 MB), and that of one GET too.
static void tune_malloc(void) {
    // A GLIBC_TUNABLES setting that names one of these wins (so that each can be compared on
    // one binary).
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (!(tunables && strstr(tunables, "mxfast"))) lunet_malloc_no_fastbins();
    if (!(tunables && (strstr(tunables, "trim_threshold") || strstr(tunables, "top_pad") || strstr(tunables, "mmap_threshold"))))
        lunet_malloc_keep_heap_top();
}

// The process's arguments, as glibc hands them to each ELF constructor.
static char *no_arguments[] = {NULL};
static char **launch_argv = no_arguments;
static int launch_argc;

// Where Swift's `CommandLine` gets the arguments from. The runtime's own version (its
// CommandLine.cpp) comes with a static initializer that finds them by reading /proc/self/maps
// line by line, with fopen and sscanf, at every start, whether or not the program ever asks,
// while the libcurl preload may be mapping libraries (the kernel holds the mappings' lock for
// both). Defined here, in the program, it keeps that object and its initializer out of the
// static link (with the $ORIGIN run path gone at the same time: `lunet -e 'print(1)'` 1.50 ->
// 1.40 ms); Tests/lua/release_binary_test.lua checks the release binary for it. A build with the
// runtime as a shared library keeps the runtime's own version and never calls this one.
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *count) {
    *count = launch_argc;
    return launch_argv;
}

char **lunet_launch_arguments(int *count) {
    *count = launch_argc;
    return launch_argv;
}

__attribute__((constructor)) static void lunet_launch(int argc, char **argv, char **envp) {
    (void)envp;
    if (argv) {
        launch_argv = argv;
        launch_argc = argc;
    }
    tune_malloc();
    lunet_curl_allow_preload();
    lunet_allow_fast_exit();
    if (predicts_request(argc, argv)) lunet_curl_preload();
}

int lunet_launch_linked(void) { return 1; }
