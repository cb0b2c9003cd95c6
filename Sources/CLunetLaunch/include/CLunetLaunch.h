// The lunet executable's start, before Swift's main (launch.c has the why).
#ifndef CLUNET_LAUNCH_H
#define CLUNET_LAUNCH_H

/// 1 when these arguments make a request certain (`lunet GET ...`, `lunet http://...`) or likely
/// (an -e chunk that names `http`): the libcurl preload then starts before main. Pure but for
/// access(2) on the first argument (a file that exists is a script).
int lunet_launch_predicts_request(int argc, char **argv);

/// glibc's fastbins off (mallopt M_MXFAST = 0) unless GLIBC_TUNABLES names mxfast. Why: Lua's
/// collector frees a decoded document's objects by the hundred thousand; glibc parks small freed
/// chunks in fastbins and merges them all (malloc_consolidate) at the next large request, which a
/// growing table or stack makes soon. On the 5 MB JSON benchmark that merging was a sixth of the
/// profile; without fastbins small chunks are merged as they are freed and the per-size tcache
/// still serves the common alloc/free pairs (docs/benchmarks.md, after section (f)). Only the
/// executable does this: a program that embeds the Lunet library owns its allocator.
void lunet_launch_tune_malloc(void);

/// Referenced from main.swift so the linker keeps this object (and its constructor).
int lunet_launch_linked(void);

#endif
