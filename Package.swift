// swift-tools-version:6.1
// lunet: a networking shell. Swift hosts Lua 5.4; libcurl moves the bytes.
// Layers (each imports only those below it): C libraries -> CLunetCurl, CLunetLinux, CLunetCodings (the shims) ->
// LunetCore -> LunetLuaStack (the Lua stack from Swift, error objects) -> LunetCodecs (JSON, XML,
// protobuf) -> LunetLua (the Lua host) -> front ends (the `lunet` executable, the `Lunet` library).
// The Lua bridge, CLunetLua, sits beside the shims but only the Lua layers (LunetLuaStack and
// above, lunet-luac) depend on it: the core cannot import Lua, so "the core knows nothing of Lua"
// is checked by the compiler (and scripts/check-layers, run by scripts/test, keeps it so).
import PackageDescription

// Debug builds (the tests) keep Swift's run-time exclusivity checks, so a violation traps there;
// release builds of the core and host leave them out: they cost ~3% of the instructions of a
// request (every access to a class's stored property is checked).
let optimisedAlways: [SwiftSetting] = [
    .unsafeFlags(["-O"], .when(configuration: .debug)),
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "lunet",
    products: [
        .executable(name: "lunet", targets: ["lunet"]),
        // For Swift tools that embed lunet. It links Lua but never readline (GPL-3).
        .library(name: "Lunet", targets: ["Lunet"]),
        // The codecs alone (the fuzzers use it). It names no Lua runtime: link one beside it.
        .library(name: "LunetCodecs", targets: ["LunetCodecs"]),
        // `require "lunet"` from a stock lua5.4 (installed as lunet.so by scripts/install-lua-module).
        .library(name: "LunetLuaModule", type: .dynamic, targets: ["LunetLuaModule", "CLunetModule"]),
    ],
    targets: [
        // C libraries from Debian. CLua names no library to link: the Lua module loaded by a
        // stock lua5.4 must use that interpreter's copy of the runtime, so only front ends link it.
        .systemLibrary(name: "CLua", path: "Sources/CLua"),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),

        // The shims the core stands on, one concern each (as swift-nio names its C shims), no Lua
        // header in either: the curl shim (libcurl's functions through typed wrappers;
        // curl_loader.c opens it on first network use, it is not linked; libcurl's memory
        // functions) and the Linux shim (the calls Swift's Glibc lacks: eventfd, netlink,
        // getrandom, sync_file_range, glibc's malloc tuning).
        .target(name: "CLunetCurl", dependencies: ["CCurl"], path: "Sources/CLunetCurl"),
        .target(name: "CLunetLinux", path: "Sources/CLunetLinux"),
        // The codings shim: gzip, deflate, br and zstd through the system's libraries, opened with
        // dlopen on first use (lunet removes a response's content codings itself: libcurl's
        // handling of them differs between versions). No curl or Lua header.
        .target(name: "CLunetCodings", path: "Sources/CLunetCodings"),
        // The Lua bridge: the trampoline Swift functions are called through, Lua macros as
        // functions, the state's allocator, protected calls and chunk loading (what the embedded
        // lua/ files are loaded with), the interrupt and deadline hooks. No curl header.
        .target(name: "CLunetLua", dependencies: ["CLua"], path: "Sources/CLunetLua"),
        // `lunet load`'s HDR histograms: a Lua C function, feature code above the bridge (it
        // takes only the bridge's BEFORE_RAISE), which LunetLua hands to Lua as core.hdr_open.
        .target(name: "CLunetHistogram", dependencies: ["CLua", "CLunetLua"], path: "Sources/CLunetHistogram"),
        // The core: loop, transfers, sessions. Knows nothing of Lua: it cannot import CLunetLua.
        // Optimised in debug builds too: hashing 200 MB or decoding big JSON takes 30x longer
        // unoptimised, and the tests do both.
        .target(name: "LunetCore", dependencies: ["CLunetCurl", "CLunetLinux", "CLunetCodings"], swiftSettings: optimisedAlways),
        // Reading and writing the Lua stack from Swift without raising, and lunet's error objects:
        // what the codecs and the host share. It was part of LunetLua; it is a module of its own so
        // that the codecs can use it without importing the host. Small on purpose. LunetLua
        // re-exports it, so to everything above the host nothing moved.
        .target(name: "LunetLuaStack", dependencies: ["LunetCore", "CLunetLua"], swiftSettings: optimisedAlways),
        // The codecs: JSON, XML and protobuf, each between bytes and the Lua stack, with its Lua
        // module table (json, xml, protobuf). One module, not one per codec: they share the byte
        // writer, the UTF-8 checks, the line/column error reporting and the option checks, and
        // their hot loops call those helpers, which the optimiser inlines only inside a module
        // (across modules each would need @inlinable). Folders keep the codecs apart:
        // Sources/LunetCodecs/{JSON,XML,Protobuf,Shared}. They know the stack helpers and the
        // core's byte buffer and error type, never the host.
        .target(name: "LunetCodecs", dependencies: ["LunetLuaStack", "LunetCore", "CLunetLua"], swiftSettings: optimisedAlways),
        // The Lua host: the state, values, bindings, prelude; registers the codecs' modules.
        // Knows nothing of readline or argv. lua/ is compiled into it as bytecode by the EmbedLua plugin.
        .target(name: "LunetLua", dependencies: ["LunetCodecs", "LunetLuaStack", "LunetCore", "CLunetLua", "CLunetHistogram", "CLunetCurl"],
                swiftSettings: optimisedAlways, plugins: ["EmbedLua"]),
        .plugin(name: "EmbedLua", capability: .buildTool(), dependencies: ["lunet-luac"]),
        // The Lua module: the host without liblua (the interpreter that loads it has its own) and
        // never unloaded by lua_close (Swift code must not be unmapped).
        .target(name: "CLunetModule", dependencies: ["CLua"], path: "Sources/CLunetModule"),
        .target(
            name: "LunetLuaModule",
            dependencies: ["LunetLua", "CLunetLua", "CLunetModule"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "nodelete"])]
        ),
        .executableTarget(name: "lunet-luac", dependencies: ["CLunetLua"], linkerSettings: [.linkedLibrary("lua5.4")]),
        // The embedding library: the host plus the Lua runtime it links.
        .target(
            name: "Lunet",
            dependencies: ["LunetLua", "LunetCodecs", "LunetCore"],
            linkerSettings: [.linkedLibrary("lua5.4")]
        ),
        // GNU readline for the REPL, opened with dlopen when the prompt first starts: scripts and
        // `-e` never load it (nor its terminfo library), which is measurable in every start-up.
        .target(name: "CLineEditor", path: "Sources/CLineEditor"),
        // What the executable does before Swift's main (an ELF constructor): malloc tuning, and
        // the libcurl preload when the arguments make a request certain. Linked by `lunet` only.
        .target(name: "CLunetLaunch", dependencies: ["CLunetCurl", "CLunetLinux"], path: "Sources/CLunetLaunch"),
        // The front end. It runs on the loop's one thread and keeps the REPL in globals for
        // readline's C callbacks, so it is built in Swift 5 mode.
        .executableTarget(name: "lunet", dependencies: ["LunetLua", "LunetCore", "CLunetLua", "CLunetCurl", "CLunetLinux", "CLineEditor", "CLunetLaunch"],
                          swiftSettings: [.swiftLanguageMode(.v5)],
                          linkerSettings: [.linkedLibrary("lua5.4")]),

        // An example tool that embeds lunet (built and run by the tests).
        .executableTarget(name: "lunet-embed-example", dependencies: ["Lunet"], path: "Examples/embed-tool"),

        .testTarget(name: "LunetCoreTests", dependencies: ["LunetCore", "CLunetCurl", "CLunetLinux", "CLunetCodings"]),
        // The codecs on bare Lua states: no host, so the runtime is linked here.
        .testTarget(name: "LunetCodecsTests", dependencies: ["LunetCodecs", "LunetLuaStack", "LunetCore", "CLunetLua"],
                    linkerSettings: [.linkedLibrary("lua5.4")]),
        .testTarget(name: "LunetLuaTests", dependencies: ["Lunet", "LunetLuaModule"]),
        .testTarget(name: "LunetTests", dependencies: ["Lunet"]),
    ]
)
