/// What the command line asks for. Pure: parsed from argv, tested without running anything.
struct Invocation: Equatable {
    enum Mode: Equatable {
        case repl
        case script(String)          // a path, or "-" for standard input
        case test([String])          // lunet test [paths] [options]
        case help
        case version
    }

    var mode: Mode = .repl
    var chunks: [String] = []        // -e CODE, in order
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
            case .unknownOption(let o): "unknown option '\(o)' (see lunet --help)"
            }
        }
    }

    static func parse(_ argv: [String]) throws(ParseError) -> Invocation {
        var inv = Invocation()
        var i = 1
        inv.interpreterArguments = [argv.first ?? "lunet"]
        var sawChunk = false
        if argv.count > 1 && argv[1] == "test" {
            inv.mode = .test(Array(argv.dropFirst(2)))
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
                inv.chunks.append(argv[i + 1])
                inv.interpreterArguments += [a, argv[i + 1]]
                sawChunk = true
                i += 2
                continue
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
                i += 1
                if i < argv.count {
                    inv.mode = .script(argv[i])
                    inv.scriptArguments = Array(argv[(i + 1)...])
                }
                return inv
            case "-":
                inv.mode = .script("-")
                inv.scriptArguments = Array(argv[(i + 1)...])
                return inv
            default:
                if a.hasPrefix("-") { throw .unknownOption(a) }
                inv.mode = .script(a)
                inv.scriptArguments = Array(argv[(i + 1)...])
                return inv
            }
            i += 1
        }
        // `lunet -e CODE` alone runs the code and leaves; with -i it opens the REPL after.
        if sawChunk && !inv.interactive { inv.mode = .script("") }
        return inv
    }

    static let usage = """
    usage: lunet [options] [script [args...]]
      lunet                    open the REPL
      lunet script.lua a b     run a script; `arg` and `...` hold its arguments
      lunet -                  run the script on standard input
      lunet -e CODE            run CODE (may be given several times, before a script)
      lunet -i script.lua      run the script, then open the REPL in its state
      lunet --har FILE ...     record every request and response as a HAR 1.2 file
      lunet test [paths]       run *_test.lua files (see lunet test --help)
      lunet --version          print the versions of lunet, Lua and libcurl
      lunet --help             this text
    """
}
