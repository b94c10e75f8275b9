import KVCache

/// `verify` results: JSON for scripts, a summary for people.
struct VerifyOutput: Encodable {
    struct Entry: Encodable {
        var key: String
        var fileName: String
        var expectedSize: Int64
        /// Null when the file is missing.
        var actualSize: Int64?

        enum CodingKeys: String, CodingKey { case key, fileName, expectedSize, actualSize }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(key, forKey: .key)
            try container.encode(fileName, forKey: .fileName)
            try container.encode(expectedSize, forKey: .expectedSize)
            try container.encode(actualSize, forKey: .actualSize)
        }
    }

    struct Repairs: Encodable {
        var reindexed: Bool
        var rebuiltManifest: Bool
        var removedEntries: Int
        var removedOrphanFiles: Int
        var recountedSummary: Bool
    }

    /// Nothing was wrong before any repair.
    var healthy: Bool
    var problemCount: Int
    var integrityErrors: [String]
    var manifestRebuiltAtOpen: Bool
    var checkedFiles: Int
    var missingFiles: [Entry]
    var wrongSizeFiles: [Entry]
    var damagedInlineEntries: [Entry]
    var orphanFiles: [String]
    var recentUnreferencedFiles: [String]
    var summaryIsAccurate: Bool
    /// Null unless --repair.
    var repairs: Repairs?

    enum CodingKeys: String, CodingKey {
        case healthy, problemCount, integrityErrors, manifestRebuiltAtOpen, checkedFiles, missingFiles
        case wrongSizeFiles, damagedInlineEntries, orphanFiles, recentUnreferencedFiles, summaryIsAccurate, repairs
    }

    init(_ report: DiskCache.VerificationReport, rebuiltAtOpen: Bool) {
        func entry(_ damaged: DiskCache.DamagedEntry) -> Entry {
            Entry(key: damaged.key, fileName: damaged.fileName, expectedSize: damaged.expectedSize,
                  actualSize: damaged.actualSize)
        }
        healthy = report.isHealthy && !rebuiltAtOpen
        problemCount = report.problemCount + (rebuiltAtOpen ? 1 : 0)
        integrityErrors = report.integrityErrors
        manifestRebuiltAtOpen = rebuiltAtOpen
        checkedFiles = report.checkedFiles
        missingFiles = report.missingFiles.map(entry)
        wrongSizeFiles = report.wrongSizeFiles.map(entry)
        damagedInlineEntries = report.damagedInlineEntries.map(entry)
        orphanFiles = report.orphanFiles
        recentUnreferencedFiles = report.recentUnreferencedFiles
        summaryIsAccurate = report.summaryIsAccurate
        repairs = report.repairs.map {
            Repairs(reindexed: $0.reindexed, rebuiltManifest: $0.rebuiltManifest, removedEntries: $0.removedEntries,
                    removedOrphanFiles: $0.removedOrphanFiles, recountedSummary: $0.recountedSummary)
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(healthy, forKey: .healthy)
        try container.encode(problemCount, forKey: .problemCount)
        try container.encode(integrityErrors, forKey: .integrityErrors)
        try container.encode(manifestRebuiltAtOpen, forKey: .manifestRebuiltAtOpen)
        try container.encode(checkedFiles, forKey: .checkedFiles)
        try container.encode(missingFiles, forKey: .missingFiles)
        try container.encode(wrongSizeFiles, forKey: .wrongSizeFiles)
        try container.encode(damagedInlineEntries, forKey: .damagedInlineEntries)
        try container.encode(orphanFiles, forKey: .orphanFiles)
        try container.encode(recentUnreferencedFiles, forKey: .recentUnreferencedFiles)
        try container.encode(summaryIsAccurate, forKey: .summaryIsAccurate)
        try container.encode(repairs, forKey: .repairs)  // null rather than absent
    }

    /// Lists in the human summary stop after this many items.
    private static let listLimit = 20

    static func printSummary(_ report: DiskCache.VerificationReport, rebuiltAtOpen: Bool, gracePeriod: DurationArgument) {
        func list<Item>(_ title: String, _ items: [Item], _ describe: (Item) -> String) {
            Console.write("\(title): \(items.count)")
            for item in items.prefix(listLimit) { Console.write("  " + describe(item)) }
            if items.count > listLimit { Console.write("  ... and \(items.count - listLimit) more (see --json)") }
        }
        if rebuiltAtOpen { Console.write("manifest: was corrupt; moved to corrupt/ and rebuilt empty at open") }
        if report.integrityErrors.isEmpty {
            Console.write("integrity check: ok")
        } else {
            list("integrity errors", report.integrityErrors) { $0 }
        }
        Console.write("files checked: \(report.checkedFiles)")
        list("missing files", report.missingFiles) { "\($0.key)  data/\($0.fileName), \($0.expectedSize) bytes expected" }
        list("wrong-size files", report.wrongSizeFiles) {
            "\($0.key)  data/\($0.fileName), \($0.expectedSize) bytes expected, \($0.actualSize ?? 0) found"
        }
        list("damaged inline values", report.damagedInlineEntries) {
            "\($0.key)  \($0.expectedSize) bytes expected, " + ($0.actualSize.map { "\($0) found" } ?? "none stored")
        }
        list("orphan files", report.orphanFiles) { "data/" + $0 }
        if !report.recentUnreferencedFiles.isEmpty {
            Console.write("unreferenced files younger than \(Console.duration(gracePeriod.duration)) (kept): \(report.recentUnreferencedFiles.count)")
        }
        Console.write("summary: " + (report.summaryIsAccurate ? "accurate" : "does not match the entries"))
        let problems = report.problemCount + (rebuiltAtOpen ? 1 : 0)
        guard let repairs = report.repairs else {
            Console.write(problems == 0 ? "result: healthy"
                : "result: \(Console.count(problems, "problem")); run with --repair to fix")
            return
        }
        var done: [String] = []
        if repairs.reindexed { done.append("reindexed") }
        if repairs.rebuiltManifest { done.append("moved the manifest to corrupt/ and started empty") }
        if repairs.removedEntries > 0 {
            done.append("removed \(Console.count(repairs.removedEntries, "damaged entry", "damaged entries"))")
        }
        if repairs.removedOrphanFiles > 0 { done.append("deleted \(Console.count(repairs.removedOrphanFiles, "orphan file"))") }
        if repairs.recountedSummary { done.append("recounted the summary") }
        Console.write("repairs: " + (done.isEmpty ? "none" : done.joined(separator: "; ")))
        Console.write(problems == 0 ? "result: healthy" : "result: \(Console.count(problems, "problem")) repaired")
    }
}
