import CLunetLua
import XCTest
@testable import LunetLua

/// The Lua states' allocator (Sources/CLunetLua/lua_heap.c): small blocks by size class, the rest
/// from malloc. Blocks that grow and shrink across the small-block limit keep their bytes, freed
/// blocks are used again, and closing gives everything back (the sanitizer run checks the last).
final class LuaHeapTests: XCTestCase {
    /// Runs `code` on a fresh state made by lunet_newstate; its result as a string.
    func run(_ code: String) -> String? {
        let L = lunet_newstate()!
        defer { lunet_closestate(L) }
        XCTAssertEqual(lunet_openlibs(L), LUA_OK)
        guard code.withCString({ lunet_loadbuffer(L, $0, strlen($0), "=heap-test", "t") }) == LUA_OK,
              lunet_pcall(L, 0, 1) == LUA_OK else { return "error: " + (LuaStack(L).string(-1) ?? "?") }
        return LuaStack(L).string(-1)
    }

    func testValuesThatGrowAndShrinkAcrossTheSmallBlockLimitKeepTheirContents() {
        // Strings of every length from 1 to 600 bytes (blocks of 25 to ~625 bytes), tables whose
        // arrays and hashes are resized through every class and past it, then shrunk by the
        // collector; every value is checked after each collection.
        let out = run("""
            local strings, tables = {}, {}
            for n = 1, 600 do strings[n] = string.rep(string.char(65 + n % 26), n) end
            for n = 1, 80 do
              local t = {}
              for i = 1, n do t[i] = i * 3; t["k" .. i] = i end
              tables[n] = t
            end
            local function check()
              for n = 1, 600 do assert(#strings[n] == n and strings[n]:byte(n) == 65 + n % 26, "string " .. n) end
              for n = 1, 80 do
                local t = tables[n]
                for i = 1, n do assert(t[i] == i * 3 and t["k" .. i] == i, "table " .. n .. " entry " .. i) end
              end
            end
            check()
            for round = 1, 3 do
              for n = 1, 600, 2 do strings[n] = nil end
              collectgarbage()
              for n = 1, 600, 2 do strings[n] = string.rep(string.char(65 + n % 26), n) end
              for n = 1, 80 do local t = tables[n]; for i = n + 1, n + 40 do t[i] = i * 3; t["k" .. i] = i end
                                for i = n + 1, n + 40 do t[i] = nil; t["k" .. i] = nil end end
              collectgarbage()
              check()
            end
            return "ok"
            """)
        XCTAssertEqual(out, "ok")
    }

    func testMemoryFreedInSmallBlocksIsUsedAgain() throws {
        // Under AddressSanitizer the state allocates with plain malloc (lua_heap.c), and the
        // sanitizer's quarantine holds freed blocks back on purpose: reuse cannot show there.
        try XCTSkipIf(ProcessInfo.processInfo.environment["LUNET_SANITIZER"] == "address",
                      "AddressSanitizer's quarantine keeps freed memory from being reused")
        // The same ~3 MB of garbage made and collected twenty times: the process's resident
        // memory stays where the first round left it (without reuse it would grow by ~60 MB).
        let out = run("""
            local function resident_mb()
              local f = assert(io.open("/proc/self/statm"))
              local pages = tonumber(f:read("a"):match("^%d+%s+(%d+)"))
              f:close()
              return pages * 4096 / 1e6
            end
            local function churn() local t = {} for i = 1, 20000 do t[i] = { i, tostring(i) } end end
            churn(); collectgarbage(); collectgarbage()
            local base = resident_mb()
            for _ = 1, 20 do churn(); collectgarbage() end
            local grown = resident_mb() - base
            return grown < 8 and "ok" or string.format("resident memory grew by %.1f MB", grown)
            """)
        XCTAssertEqual(out, "ok")
    }
}
