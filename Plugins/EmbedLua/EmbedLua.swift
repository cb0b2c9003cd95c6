import Foundation
import PackagePlugin

/// Compiles every file under lua/ to Lua bytecode at build time and hands the target a Swift
/// file holding it (and the source, for a runtime whose bytecode format differs).
///
/// The target reaches lua/ through a symlink (Sources/LunetLua/lua), so SwiftPM itself sees
/// the files: a new file re-plans the build, and an edited one re-runs the tool. The tool
/// rewrites its output only when the content changed.
@main
struct EmbedLua: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let source = target.sourceModule else { return [] }
        let files = source.sourceFiles(withSuffix: "lua").map(\.url).sorted { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedLua.swift")
        // Chunk names are the paths from the target's lua/ link, so errors read lua/lunet/x.lua:LINE.
        return [.buildCommand(
            displayName: "Compiling lua/ to bytecode",
            executable: try context.tool(named: "lunet-luac").url,
            arguments: [output.path, source.directoryURL.path] + files.map(\.path),
            inputFiles: files,
            outputFiles: [output]
        )]
    }
}
