import Foundation

/// Everything one invocation measured: printed as tables while it runs and
/// optionally written as JSON at the end.
final class Report {
    let system: SystemInfo
    let quick: Bool
    private(set) var comparisons: [Comparison] = []

    init(system: SystemInfo, quick: Bool) {
        self.system = system
        self.quick = quick
    }

    func add(_ comparison: Comparison) {
        comparisons.append(comparison)
        Output.print(TablePrinter.render(comparison))
    }

    func writeJSON(to path: String) throws {
        struct Document: Encodable {
            var tool = "kvcache-bench"
            var unit = "nanoseconds per operation"
            var quick: Bool
            var system: SystemInfo
            var comparisons: [Comparison]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(Document(quick: quick, system: system, comparisons: comparisons))
        try data.write(to: URL(fileURLWithPath: path))
        Progress.log("wrote \(path)")
    }
}
