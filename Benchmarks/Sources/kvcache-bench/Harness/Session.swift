import Foundation

/// Sets up one invocation: the working directory, the system header, the
/// report, and the JSON file at the end.
struct Session {
    var options: CommonOptions

    func run(_ body: (Report, Workspace) throws -> Void) throws {
        let workspace = try Workspace(requested: options.directory)
        defer { workspace.cleanUp() }
        let cleanup = InterruptCleanup(removing: workspace.root)
        defer { withExtendedLifetime(cleanup) {} }
        let system = SystemInfo.collect(directory: workspace.root.path)
        Output.print("kvcache-bench\(options.quick ? " --quick (smoke run: figures are not meaningful)" : "")")
        Output.print(system.description + "\n")
        let report = Report(system: system, quick: options.quick)
        let start = Clock.now()
        try body(report, workspace)
        Output.print(SummaryPrinter.render(report.comparisons))
        Output.print(Targets.render(report.targets))
        Progress.log(String(format: "done in %.1f s", Double(Clock.now() - start) / 1e9))
        if let path = options.jsonPath {
            try report.writeJSON(to: path)
            Output.print("Results (JSON): \(Self.absolute(path))")
        }
        if let path = options.reportPath {
            try report.writeHTML(to: path)
            Output.print("Report (HTML): \(Self.absolute(path))")
        }
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

/// The directory the disk benchmarks write into: a fresh subdirectory of
/// `--dir`, or of the system temporary directory, removed at the end.
struct Workspace {
    let root: URL

    init(requested: String?) throws {
        let parent = requested.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        root = parent.appendingPathComponent("kvcache-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))",
                                             isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    /// A new, empty directory for one store.
    func makeDirectory(_ name: String) throws -> URL {
        let url = root.appendingPathComponent(name, isDirectory: true)
        try? FileManager.default.removeItem(at: url)
        // Not intermediate: an interrupted run has removed the root, which must stay gone.
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url
    }

    func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    /// Serializes the final removal with an interrupt's (see `InterruptCleanup`).
    static let cleanupLock = PthreadMutex()

    func cleanUp() {
        Self.cleanupLock.withLock {
            _ = try? FileManager.default.removeItem(at: root)
        }
    }
}
