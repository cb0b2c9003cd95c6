import CLunetSystem
import Glibc

/// Turns glibc's fastbins off (mallopt M_MXFAST = 0) for the lunet executable, before anything
/// is allocated in earnest. Why: Lua's collector frees a decoded document's objects by the
/// hundred thousand; glibc parks small freed chunks in fastbins and merges them all
/// (malloc_consolidate) at the next large request, which a growing table or stack makes soon.
/// On the 5 MB JSON benchmark that merging was a sixth of the profile; without fastbins small
/// chunks are merged as they are freed and the per-size tcache still serves the common
/// alloc/free pairs. Measured in alternating rounds (docs/benchmarks.md, after section (f)):
/// decoding the 5 MB document +20%, the 100 KB one and encoding unchanged; XML decoding +25%.
///
/// Only the executable does this: a program that embeds the Lunet library owns its allocator.
/// A GLIBC_TUNABLES setting that names mxfast wins (so the two can be compared on one binary).
func tuneMalloc() {
    if let tunables = getenv("GLIBC_TUNABLES"), String(cString: tunables).contains("mxfast") { return }
    lunet_malloc_no_fastbins()
}
