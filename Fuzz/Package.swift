// swift-tools-version:6.1
// lunet's fuzzers: one libFuzzer executable per decoder of bytes that come from the network.
// A separate package so that the main package's builds and tests never see -sanitize=fuzzer.
//
//   scripts/fuzz [SECONDS]            # build them all, run each for SECONDS (docs/reliability.md)
//
// Built by scripts/fuzz with
//   swift build -c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address \
//     -Xswiftc -enable-testing -Xlinker -fuse-ld=lld
// (-enable-testing lets the header and cache-entry fuzzers `@testable import LunetCore` to
// reach the transfer's header-line parser and the disk tier's entry reader, which are internal.)
// Each fuzzer is an executable target without top-level code: it defines
// @_cdecl("LLVMFuzzerTestOneInput") and the entry SwiftPM links as `main` (`<module>_main`,
// e.g. fuzz_json_main), which hands both to libFuzzer's driver (Sources/CFuzzDriver).
import PackageDescription

// A path dependency's package identity is the last component of its directory, lower-cased
// (the main package's checkout is usually .../main or .../lunet): derive it, don't guess it.
let rootIdentity = Context.packageDirectory
    .split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "lunet"

let lunet: Target.Dependency = .product(name: "Lunet", package: rootIdentity)
// The codec fuzzers reach the codecs through their own module (FuzzSupport brings the Lua runtime).
let codecs: Target.Dependency = .product(name: "LunetCodecs", package: rootIdentity)
let codecFuzzers: Set = ["fuzz-json", "fuzz-xml", "fuzz-protobuf"]

let fuzzers = [
    "fuzz-json", "fuzz-xml", "fuzz-protobuf", "fuzz-charset",
    "fuzz-headers", "fuzz-cache-entry", "fuzz-url",
]

let package = Package(
    name: "lunet-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // What the fuzzers share: a bare Lua state, checks that trap with a message.
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver", lunet]),
        // libFuzzer's driver behind the `<module>_main` entry SwiftPM gives executables.
        .target(name: "CFuzzDriver"),
    ] + fuzzers.map { name in
        // -parse-as-library: the file is not top-level code (libFuzzer owns main), so its
        // globals are initialised lazily on first use, not by a main that never runs.
        .executableTarget(name: name, dependencies: ["FuzzSupport", lunet] + (codecFuzzers.contains(name) ? [codecs] : []),
                          path: "Sources/\(name)",
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    }
)
