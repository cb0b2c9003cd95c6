import CLunet
import Glibc

// MARK: - Text runs: text is pushed from the input when it is one slice of it, else from the scratch

extension XMLParser {
    /// Adds n bytes at s to the scratch (n may be 0).
    @inline(__always)
    mutating func scratchAppend(_ s: UnsafePointer<UInt8>, _ n: Int) {
        guard n > 0 else { return }
        scratch.append(s, n)
    }

    /// Adds the input bytes [s, e) to the text run.
    @inline(__always)
    mutating func appendRun(_ s: UnsafePointer<UInt8>, _ e: UnsafePointer<UInt8>) {
        guard e > s else { return }
        if !runInScratch {
            guard let runStart else {
                runStart = s
                runEnd = e
                return
            }
            if runEnd == s {
                runEnd = e
                return
            }
            moveRunToScratch(runStart)
        }
        scratchAppend(s, e - s)
    }

    @inline(never)
    mutating func moveRunToScratch(_ s: UnsafePointer<UInt8>?) {
        runInScratch = true
        scratch.count = 0
        if let s { scratchAppend(s, runEnd.unsafelyUnwrapped - s) }
        runStart = nil
    }

    /// Adds a character that is not in the input as such (a reference, a normalized line end).
    @inline(__always)
    mutating func appendRun(scalar u: UInt32) {
        if !runInScratch { moveRunToScratch(runStart) }
        scratch.appendUTF8(u)
    }

    /// Ends the text run: pushes it as a child unless it is dropped (empty, or only literal
    /// whitespace without keep_whitespace).
    @inline(__always)
    mutating func flushText() -> Bool {
        defer {
            runStart = nil
            runInScratch = false
            runContent = false
        }
        guard runContent || keepWhitespace else { return true }
        if runInScratch {
            guard scratch.count > 0 else { return true }
            lua_pushlstring(L, UnsafeRawPointer(scratch.base.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), scratch.count)
        } else {
            guard let s = runStart else { return true }
            lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), runEnd.unsafelyUnwrapped - s)
        }
        return addChild()
    }
}
