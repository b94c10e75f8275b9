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

    /// Records a comparison and prints its table (unless the caller prints a summary instead).
    func add(_ comparison: Comparison, printing: Bool = true) {
        comparisons.append(comparison)
        if printing { Output.print(TablePrinter.render(comparison)) }
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

    func writeHTML(to path: String) throws {
        let html = HTMLReport.render(system: system, comparisons: comparisons, quick: quick)
        try Data(html.utf8).write(to: URL(fileURLWithPath: path))
        Progress.log("wrote \(path)")
    }
}
