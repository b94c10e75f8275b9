import Foundation

/// Everything one invocation measured: printed as tables while it runs and
/// optionally written as JSON at the end.
final class Report {
    let system: SystemInfo
    let quick: Bool
    private(set) var comparisons: [Comparison] = []
    /// `hitratio`: each trace at each cache size, every policy's hit ratio.
    private(set) var hitRatios: [HitRatioRow] = []
    /// One-line remarks on the whole run (e.g. whether the python peer ran).
    private(set) var notes: [String] = []
    /// The inline threshold `threshold` recommends for the measured file system.
    var thresholdRecommendation: ThresholdRecommendation?

    init(system: SystemInfo, quick: Bool) {
        self.system = system
        self.quick = quick
    }

    /// Records a comparison and prints its table (unless the caller prints a summary instead).
    func add(_ comparison: Comparison, printing: Bool = true) {
        comparisons.append(comparison)
        if printing { Output.print(TablePrinter.render(comparison)) }
    }

    /// Records hit ratios (their table is printed by the caller, per trace).
    func add(hitRatios rows: [HitRatioRow]) {
        hitRatios.append(contentsOf: rows)
    }

    /// The targets, evaluated on everything this run measured.
    var targets: [TargetCheck] { Targets.evaluate(comparisons, hitRatios: hitRatios) }

    /// Records a remark on the whole run and prints it.
    func note(_ text: String) {
        notes.append(text)
        Output.print(text + "\n")
    }

    /// What `--json` writes; `kvcache-bench report` reads it back.
    struct Document: Codable {
        var tool = "kvcache-bench"
        var unit = "nanoseconds per operation"
        var quick: Bool
        var system: SystemInfo
        var notes: [String]
        var thresholdRecommendation: ThresholdRecommendation?
        /// Recomputed from the comparisons when read (absent from older files).
        var targets: [TargetCheck]?
        var comparisons: [Comparison]
        /// Absent from files written before `hitratio` existed.
        var hitRatios: [HitRatioRow]?
    }

    /// A report of a run written earlier with `--json`.
    convenience init(json path: String) throws {
        let document = try JSONDecoder().decode(Document.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        self.init(system: document.system, quick: document.quick)
        comparisons = document.comparisons
        notes = document.notes
        thresholdRecommendation = document.thresholdRecommendation
        hitRatios = document.hitRatios ?? []
    }

    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try Self.createParent(of: path)
        let data = try encoder.encode(Document(quick: quick, system: system, notes: notes,
                                                  thresholdRecommendation: thresholdRecommendation,
                                                  targets: targets, comparisons: comparisons,
                                                  hitRatios: hitRatios.isEmpty ? nil : hitRatios))
        try data.write(to: URL(fileURLWithPath: path))
        Progress.log("wrote \(path)")
    }

    func writeHTML(to path: String) throws {
        try Self.createParent(of: path)
        let html = HTMLReport.render(self)
        try Data(html.utf8).write(to: URL(fileURLWithPath: path))
        Progress.log("wrote \(path)")
    }

    /// So `--report docs/benchmarks.html` works from a fresh checkout.
    private static func createParent(of path: String) throws {
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
    }
}
