"""The Lua tree's floors (docs/architecture.md, "The Lua tree's floors"), for scripts/check-layers.

Every module under lua/ has a floor; a module may require modules of its own floor or below,
never above, and no require cycle is allowed on any floor (a cycle hides an order of loading
that works only by accident). Requires are read as written: require "x", require("x"), with a
literal name (the composition root's lazy globals and lunet.features name the rest).

    python3 lua_floors.py ROOT      # prints one line per problem; exit 1 on any
"""
import os
import re
import sys

# First match wins: (floor, pattern on the module name).
FLOORS = [
    # The roots: what a host runs first and `require "lunet"`; they wire the floors together.
    (3, r"lunet\.(prelude|module)"),
    # Commands: the one-shot line, `test`, `load`, `api`, `grpc`, the prompt, and what only they use.
    (2, r"lunet\.cli(\..*)?"),
    (2, r"lunet\.auth\.cli"),
    (2, r"lunet\.openapi\.cli"),
    (2, r"lunet\.grpc\.(cli|complete)"),
    (2, r"lunet\.load(\.(args|collect|k8s|merge))?"),
    (2, r"lunet\.testing(\..*)?"),
    (2, r"lunet\.(repl|repl_replay|help)"),
    (2, r"lunet\.import(\..*)?"),
    # Features: what a script asks for by name, built on the core.
    (1, r"lunet\.auth(\..*)?"),
    (1, r"lunet\.session_store"),
    (1, r"lunet\.(schema|yaml|openapi|grpc|load)(\..*)?"),
    # The core: the runtime, tasks, errors, http and its sessions, responses, URLs, serializers,
    # streams, the cache's binding, downloads, and the helpers everything prints through.
    (0, r"lunet\.(runtime|task|errors|secrets|suggest|url|headers|base64|json_indent|terminal_safe|output"
        r"|traceback|core_guard|whole_file|features|pretty|image|serializers|response|body_stream|net"
        r"|queue|queue_policy|retry_policy|sse|sse_parser|websocket|cache|har|download|download_ledger"
        r"|download_progress)"),
    (0, r"lunet\.(http|task)\..*"),
    (0, r"lunet\.http"),
]
NAMES = {0: "core", 1: "features", 2: "commands", 3: "roots"}
REQUIRE = re.compile(r"""\brequire\s*\(?\s*["']([\w.]+)["']""")


def floor_of(module):
    for floor, pattern in FLOORS:
        if re.fullmatch(pattern, module):
            return floor
    return None


def modules(root):
    found = {}
    base = os.path.join(root, "lua")
    for directory, _, files in os.walk(base):
        for f in sorted(files):
            if f.endswith(".lua"):
                path = os.path.join(directory, f)
                name = os.path.relpath(path, base)[:-4].replace(os.sep, ".")
                found[name[:-5] if name.endswith(".init") else name] = path
    return found


def requires(path):
    """(line number, module) of each literal require, outside comments."""
    out, in_long_comment = [], False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if in_long_comment:
                if "]]" in line:
                    in_long_comment = False
                continue
            if line.lstrip().startswith("--[["):
                in_long_comment = "]]" not in line
                continue
            code = line.split("--", 1)[0]
            out.extend((n, m) for m in REQUIRE.findall(code))
    return out


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main(root):
    mods = modules(root)
    problems = []
    graph = {m: set() for m in mods}
    for m, path in sorted(mods.items()):
        floor = floor_of(m)
        if floor is None:
            problems.append(f"{os.path.relpath(path, root)}: module {m} has no floor (scripts/check-layers.d/lua_floors.py)")
            continue
        for n, r in requires(path):
            if r not in mods or r == m:
                continue   # lunet.core, the codecs (Swift), the standard library
            graph[m].add(r)
            rf = floor_of(r)
            if rf is not None and rf > floor:
                problems.append(f"{os.path.relpath(path, root)}:{n}: {m} ({NAMES[floor]}) requires {r} ({NAMES[rf]}), a floor above")
    for component in cycles(graph):
        problems.append("a require cycle: " + " -> ".join(component))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
