import Glibc

/// What the command line asks for. Pure: parsed from argv, tested without running anything.
struct Invocation: Equatable {
    enum Mode: Equatable {
        case repl
        case script(String)          // a path, or "-" for standard input
        case test([String])          // lunet test [paths] [options]
        case load([String])          // lunet load script.lua [options]
        case api([String])           // lunet api SPEC [OPERATION [ITEM ...]]
        case grpc([String])          // lunet grpc HOST:PORT list|describe|SERVICE/METHOD
        case importer([String])      // lunet import curl COMMAND
        case request([String])       // lunet [METHOD] URL [ITEM ...]: the one-shot command line
        case help
        case version
    }

    var mode: Mode = .repl
    /// What -e and -l ask for, run in the order given (as lua5.4 runs them).
    enum Step: Equatable {
        case code(String)                          // -e CODE
        case require(global: String, module: String)   // -l mod, -l g=mod
    }
    var steps: [Step] = []
    var ignoreEnvironment = false    // -E: no LUA_INIT, LUA_PATH or LUA_CPATH
    var warnings = false             // -W: warn() on
    var interactive = false          // -i: the REPL after the script
    var har: String?                 // --har FILE: record the run
    var scriptArguments: [String] = []
    /// argv before the script name (becomes arg[-n]...arg[-1], as lua5.4 sets them).
    var interpreterArguments: [String] = []

    enum ParseError: Error, Equatable, CustomStringConvertible {
        case missingValue(String)
        case unknownOption(String)
        var description: String {
            switch self {
            case .missingValue(let o): "option '\(o)' needs an argument"
            case .unknownOption(let o):
                "unknown option '\(o)'" + (Invocation.nearestOption(o).map { "; did you mean '\($0)'?" } ?? "")
                    + " (lunet --help lists a script run's options; lunet GET --help a request's, and docs/cli.md)"
            }
        }
    }

    /// `lunet test`, `lunet load`, `lunet api`, `lunet grpc` (unless a file of that name is
    /// there: then it is a script): the mode with the words after the subcommand.
    static func subcommand(_ argv: [String]) -> Mode? {
        guard argv.count > 1 else { return nil }
        let rest = Array(argv.dropFirst(2))
        switch argv[1] {
        case "test": return .test(rest)
        case "load": return .load(rest)
        case "api" where !fileExists("api"): return .api(rest)
        case "grpc" where !fileExists("grpc"): return .grpc(rest)
        case "import" where !fileExists("import"): return .importer(rest)
        default: return nil
        }
    }

    static func parse(_ argv: [String]) throws(ParseError) -> Invocation {
        var inv = Invocation()
        var i = 1
        inv.interpreterArguments = [argv.first ?? "lunet"]
        var sawChunk = false
        if let mode = subcommand(argv) {
            inv.mode = mode
            return inv
        }
        if isRequest(argv, fileExists: fileExists) {
            inv.mode = .request(Array(argv.dropFirst()))
            return inv
        }
        while i < argv.count {
            let a = argv[i]
            switch a {
            case "-h", "--help":
                inv.mode = .help
                return inv
            case "-v", "--version":
                inv.mode = .version
                return inv
            case "-e":
                guard i + 1 < argv.count else { throw .missingValue("-e") }
                inv.steps.append(.code(argv[i + 1]))
                inv.interpreterArguments += [a, argv[i + 1]]
                sawChunk = true
                i += 2
                continue
            case _ where a.hasPrefix("-l"):
                var spec = String(a.dropFirst(2))   // -lmod, or -l mod
                if spec.isEmpty {
                    guard i + 1 < argv.count else { throw .missingValue("-l") }
                    spec = argv[i + 1]
                    inv.interpreterArguments += [a, spec]
                    i += 2
                } else {
                    inv.interpreterArguments.append(a)
                    i += 1
                }
                inv.steps.append(requireStep(spec))
                continue
            case "-E":
                inv.ignoreEnvironment = true
                inv.interpreterArguments.append(a)
            case "-W":
                inv.warnings = true
                inv.interpreterArguments.append(a)
            case "-i":
                inv.interactive = true
                inv.interpreterArguments.append(a)
            case "--har":
                guard i + 1 < argv.count else { throw .missingValue("--har") }
                inv.har = argv[i + 1]
                inv.interpreterArguments += [a, argv[i + 1]]
                i += 2
                continue
            case "--":
                if i + 1 < argv.count { inv.runScript(argv, at: i + 1) }
                return inv
            case "-":
                inv.runScript(argv, at: i)
                return inv
            default:
                if a.hasPrefix("-") { throw .unknownOption(a) }
                inv.runScript(argv, at: i)
                return inv
            }
            i += 1
        }
        // `lunet -e CODE` alone runs the code and leaves; with -i it opens the REPL after.
        if sawChunk && !inv.interactive { inv.mode = .script("") }
        return inv
    }

    /// -l mod, -l g=mod: require("mod") into the global mod (or g).
    static func requireStep(_ spec: String) -> Step {
        let parts = spec.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let module = String(parts.last!)
        // lua5.4 names the global after the module up to its first '-' (luaopen_ rules).
        let global = parts.count == 2 ? String(parts[0]) : String(module.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)[0])
        return .require(global: global, module: module)
    }

    /// The script at argv[index] runs, with the words after it as its arguments.
    mutating func runScript(_ argv: [String], at index: Int) {
        mode = .script(argv[index])
        scriptArguments = Array(argv[(index + 1)...])
    }

    // MARK: which command line is this?

    // Lists, not sets: a Set<String> made at start-up cost ~40% of the time main() takes before
    // Lua starts (String hashing and Set's generic metadata set up on first use), and these
    // are searched once each.

    /// The one-shot command line's options that take a value (lua/lunet/cli/args.lua has the
    /// full table): skipped with their value when looking for the first positional argument.
    static let requestValueOptions: [String] = [
        "--print", "-p", "--raw", "--pretty", "--output", "-o", "--max-redirects", "--timeout", "--verify",
        "--cert", "--cert-key", "--cert-key-pass", "--proxy", "--auth", "-a", "--auth-type", "-A", "--aws-sigv4",
        "--session", "--session-read-only", "--har",
    ]
    /// Options only a Lua run has: with one of them first, the line is not a request.
    static let luaOnlyOptions: [String] = ["-e", "-l", "-i", "-E", "-W", "--", "-"]
    static let methods: [String] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"]

    /// True when the first positional argument is an HTTP method (with a URL after it) or looks
    /// like a URL, and is not a file that exists (a file is always a script).
    static func isRequest(_ argv: [String], fileExists: (String) -> Bool) -> Bool {
        var i = 1
        while i < argv.count {
            let a = argv[i]
            if luaOnlyOptions.contains(a) || a.hasPrefix("-l") && a.count > 2 && !a.hasPrefix("--") { return false }
            if a.hasPrefix("-") {
                // An option lunet does not know, with a URL after it: a request with a typo
                // (`--timout 5 GET :8080/x`), which the request parser names and suggests for.
                if a.hasPrefix("--") && !requestValueOptions.contains(a) && !knownRunOptions.contains(a),
                   argv[(i + 1)...].contains(where: { looksLikeURL($0) && !fileExists($0) }) { return true }
                i += requestValueOptions.contains(a) ? 2 : 1
                continue
            }
            if fileExists(a) { return false }
            if looksLikeURL(a) || looksLikeHost(a) { return true }
            // A method alone is a request too: the command line then says the URL is missing.
            if methods.contains(a) { return true }
            let hasMore = argv[(i + 1)...].contains { !$0.hasPrefix("-") }
            return hasMore && (methods.contains(a) || methods.contains(a.uppercased()) && a == a.lowercased()
                               || a.allSatisfy { $0.isASCII && $0.isUppercase } && !a.isEmpty)
        }
        return false
    }

    /// A scheme ("http://", "wss://"), or HTTPie's shorthands: ":3000/x", ":/x", "localhost...",
    /// "host:port" with a numeric port.
    static func looksLikeURL(_ a: String) -> Bool {
        if a.hasPrefix(":") || a.hasPrefix("localhost") { return true }
        if let colon = a.firstIndex(of: ":"), colon > a.startIndex, a[colon...].hasPrefix("://"),
           a[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) { return true }
        // host:port[/...]
        let hostPort = a.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = hostPort.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && parts[1].allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// HTTPie's URL without a scheme or port: a dotted host name or address before the first
    /// '/', '?' or '#' ("127.0.0.1/get", "example.org"), or an IPv6 literal ("[::1]/x"). Asked
    /// only once no file of that name exists; a name ending ".lua" stays a (missing) script.
    static func looksLikeHost(_ a: String) -> Bool {
        if a.hasPrefix("[") { return true }
        let host = a.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard host.contains("."), host.first != ".", host.last != ".", host.first != "-",
              !a.lowercased().hasSuffix(".lua") else { return false }
        return host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }
    }

    static func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The long options of a script run (parse's), for suggestions and for telling a typo in
    /// a request from one in a script run.
    static let knownRunOptions: [String] = ["--help", "--version", "--har", "--"]

    /// The option nearest a misspelled one, among a run's and the request options this file
    /// knows (their full list is lua/lunet/cli/args.lua's, which suggests in its turn): at most
    /// 1 edit for names up to 4 characters, 2 up to 8, else 3, as lua/lunet/suggest.lua.
    static func nearestOption(_ word: String) -> String? {
        let typed = String(word.prefix(while: { $0 != "=" }))
        guard typed.hasPrefix("--"), typed.count > 3 else { return nil }
        let limit = typed.count - 2 <= 4 ? 1 : typed.count - 2 <= 8 ? 2 : 3
        var best: (String, Int)?
        for candidate in (knownRunOptions + requestValueOptions).filter({ $0.hasPrefix("--") && $0.count > 2 }).sorted() {
            let d = editDistance(Array(typed.utf8), Array(candidate.utf8))
            if d <= limit, best == nil || d < best!.1 { best = (candidate, d) }
        }
        return best?.0
    }

    /// Levenshtein distance (insertions, deletions, substitutions), two rows.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count), current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            current[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    static let usage = """
    usage: lunet [options] [script [args...]]
      lunet                    open the REPL
      lunet script.lua a b     run a script; `arg` and `...` hold its arguments
      lunet -                  run the script on standard input
      lunet -e CODE            run CODE (may be given several times, before a script)
      lunet -l mod / -l g=mod  require("mod") into the global mod (or g), in order with -e
      lunet -E                 ignore LUA_INIT, LUA_PATH and LUA_CPATH
      lunet -W                 turn warnings on
      lunet -i script.lua      run the script, then open the REPL in its state
      lunet --har FILE ...     record every request and response as a HAR 1.2 file
      lunet [METHOD] URL [ITEM ...]
                               send one request, as HTTPie does (lunet GET --help for its options)
      lunet test [paths]       run *_test.lua files (see lunet test --help)
      lunet load script.lua    run a load test (see lunet load --help, docs/load.md)
      lunet api SPEC [OP ...]  an API's operations from its OpenAPI document (docs/openapi.md)
      lunet grpc HOST:PORT ... gRPC as grpcurl: list, describe, call (docs/grpc.md)
      lunet import curl|har|postman ...  a curl line, a HAR file, a Postman collection as lunet (docs/import.md)
      lunet --version          print the versions of lunet, Lua and libcurl
      lunet --help             this text

    The first argument decides: a file that exists is a script; an HTTP method followed by a URL,
    or a URL (http://..., :PORT/path, host:PORT/path, localhost...), is a request.
    """
}
