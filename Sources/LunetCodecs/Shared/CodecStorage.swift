import Glibc

/// Grows a C-heap array that a codec keeps for the length of one call (open containers, path
/// entries, sort keys, attributes): doubling, from `minimum`, to at least `needed`. Out of
/// memory stops the process with a message naming `codec`, as the Lua allocator does, so
/// nothing raises from Swift.
@inline(never)
func growStorage<T>(_ storage: inout UnsafeMutablePointer<T>?, _ capacity: inout Int, minimum: Int,
                    needed: Int = 0, _ codec: StaticString) {
    let newCapacity = max(needed, minimum, capacity * 2)
    guard let grown = realloc(storage, newCapacity * MemoryLayout<T>.stride) else { codecOutOfMemory(codec) }
    storage = grown.assumingMemoryBound(to: T.self)
    capacity = newCapacity
}

/// Codecs abort on exhaustion, as the Lua allocator does, so that nothing raises from Swift.
@inline(never)
func codecOutOfMemory(_ codec: StaticString) -> Never {
    let prefix: StaticString = "lunet: out of memory in "
    let suffix: StaticString = "; stopping\n"
    _ = write(2, prefix.utf8Start, prefix.utf8CodeUnitCount)
    _ = write(2, codec.utf8Start, codec.utf8CodeUnitCount)
    _ = write(2, suffix.utf8Start, suffix.utf8CodeUnitCount)
    abort()
}
