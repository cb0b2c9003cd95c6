import Glibc

/// The bounds of each thread's stack, for the recursive encoder.
enum PBStack {
    struct Bounds {
        var floor: UInt     // the lowest address the encoder may reach (64 KB above the end); 0: unknown
        var high: UInt
    }

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    /// This thread's stack, from pthread_getattr_np (looked up with dlsym, as Swift's Glibc
    /// module leaves GNU extensions out); found once per thread.
    static func bounds() -> Bounds {
        if let known = pthread_getspecific(key) { return known.load(as: Bounds.self) }
        var bounds = Bounds(floor: 0, high: 0)
        typealias GetAttr = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        if let symbol = dlsym(nil, "pthread_getattr_np") {
            var attr = pthread_attr_t()
            if unsafeBitCast(symbol, to: GetAttr.self)(pthread_self(), &attr) == 0 {
                var low: UnsafeMutableRawPointer? = nil
                var size = 0
                if pthread_attr_getstack(&attr, &low, &size) == 0, let low, size > 128 * 1024 {
                    bounds = Bounds(floor: UInt(bitPattern: low) + 64 * 1024, high: UInt(bitPattern: low) + UInt(size))
                }
                pthread_attr_destroy(&attr)
            }
        }
        guard let slot = malloc(MemoryLayout<Bounds>.size) else { codecOutOfMemory("the protobuf codec") }
        slot.storeBytes(of: bounds, as: Bounds.self)
        pthread_setspecific(key, slot)
        return bounds
    }

    /// Whether the stack has room below the caller.
    @inline(never)
    static func hasRoom(_ bounds: Bounds) -> Bool {
        guard bounds.floor != 0 else { return true }
        var marker: UInt8 = 0
        var here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        if here < bounds.floor - 64 * 1024 || here >= bounds.high {
            // Not on this thread's stack: AddressSanitizer keeps such locals on a heap
            // "fake stack". Ask the CPU's stack pointer instead.
            guard let sp = stackPointer() else { return true }
            here = sp
        }
        return here > bounds.floor
    }

    static func stackPointer() -> UInt? {
        typealias GetContext = @convention(c) (UnsafeMutablePointer<ucontext_t>) -> Int32
        guard let symbol = dlsym(nil, "getcontext") else { return nil }
        var context = ucontext_t()
        guard unsafeBitCast(symbol, to: GetContext.self)(&context) == 0 else { return nil }
        #if arch(x86_64)
        return withUnsafeBytes(of: context.uc_mcontext.gregs) { UInt(bitPattern: Int($0.load(fromByteOffset: 15 * 8, as: Int64.self))) }   // REG_RSP
        #elseif arch(arm64)
        return UInt(context.uc_mcontext.sp)
        #else
        return nil
        #endif
    }
}
