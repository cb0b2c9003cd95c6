// BEFORE_RAISE(): what a C function of the bridge calls right before it raises a Lua error.
#ifndef LUNET_BEFORE_RAISE_H
#define LUNET_BEFORE_RAISE_H

// Under ThreadSanitizer (scripts/sanitize), before a C function of ours raises: TSan does not
// see lua_error's longjmp (Debian's liblua jumps with __longjmp_chk, which TSan does not
// intercept), so the raising function's frame would stay on TSan's shadow stack, one entry per
// raise, until that stack (64Ki entries) overflowed into other memory and the run crashed.
// This takes the frame off first. Only lunet's own C frames are ever jumped over.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
void __tsan_func_exit(void);
#define BEFORE_RAISE() __tsan_func_exit()
#endif
#endif
#ifndef BEFORE_RAISE
#define BEFORE_RAISE() ((void)0)
#endif

#endif
