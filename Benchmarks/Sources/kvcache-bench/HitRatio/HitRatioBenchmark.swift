import Foundation

/// Replays the shared traces (`../shared/traces`) through KVCache's MemoryCache and
/// through the reference policies of this folder at several cache sizes, and prints
/// per trace the hit ratios and each cell's gap to the best of its row.
struct HitRatioBenchmark {
    /// A policy in the tables: how to replay a trace through it.
    struct Contender: Sendable {
        var name: String
        /// The short column title.
        var column: String
        var isKVCache: Bool
        var isDefault: Bool
        var replay: @Sendable (_ keys: [Int], _ capacity: Int) -> Int

        init<P: Policy>(_ policy: P.Type, column: String, isKVCache: Bool = false, isDefault: Bool = false) {
            name = P.name
            self.column = column
            self.isKVCache = isKVCache
            self.isDefault = isDefault
            replay = { keys, capacity in P.hits(replaying: keys, capacity: capacity) }
        }
    }

    /// KVCache's policies first (the default, adaptive, then exact LRU), then the references.
    static let contenders: [Contender] = [
        Contender(KVCacheAdaptiveReplay.self, column: "KVCache", isKVCache: true, isDefault: true),
        Contender(KVCacheLRUReplay.self, column: "KVCache (LRU)", isKVCache: true),
        Contender(LRUPolicy.self, column: "LRU"),
        Contender(ClockPolicy.self, column: "CLOCK"),
        Contender(SievePolicy.self, column: "SIEVE"),
        Contender(S3FIFOPolicy.self, column: "S3-FIFO"),
        Contender(ARCPolicy.self, column: "ARC"),
        Contender(TwoQueuePolicy.self, column: "2Q"),
        Contender(WTinyLFUPolicy.self, column: "W-TinyLFU"),
    ]

    /// Where the traces are.
    var directory: URL
    /// The traces to replay, with their sizes.
    var traces: [Trace.Entry]
    /// Also replay KVCache's default policy with this many threads at once (nil: not).
    var concurrentThreads: Int?

    /// The traces as `options` scale them: `--quick` replays only gli (6,015
    /// requests), a smoke run of the code path; otherwise every trace. `only`
    /// narrows to the named traces.
    init(directory: URL, scale: CommonOptions.Scale, only: [String] = []) {
        self.directory = directory
        var traces = Trace.catalog
        if !only.isEmpty { traces = traces.filter { only.contains($0.name) } }
        if scale == .quick { traces = traces.filter { $0.name == "gli" } }
        self.traces = traces
    }

    /// Why the traces cannot be replayed, or nil when their folder is there.
    var absence: String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return nil
        }
        return "hit ratio: skipped, the traces are not at \(directory.path) (they live beside the repository "
            + "in ../shared/traces; pass --traces DIR)"
    }

    /// Replays every trace; notes and skips the ones that are missing.
    func run(into report: Report) {
        var concurrentGaps: [ConcurrentGap] = []
        var allRows: [HitRatioRow] = []
        if let absence {
            report.note(absence)
            return
        }
        for entry in traces {
            let trace: Trace
            do {
                Progress.log("hit ratio: loading \(entry.file)")
                trace = try Trace.load(entry, from: directory)
            } catch {
                report.note("hit ratio: \(entry.name) skipped: \(error)")
                continue
            }
            var rows: [HitRatioRow] = []
            var skipped: [Int] = []
            for capacity in entry.capacities {
                // A cache as large as the trace's key set evicts nothing: every policy ties.
                guard capacity < trace.distinctKeys else {
                    skipped.append(capacity)
                    continue
                }
                Progress.log("hit ratio: \(trace.name) at \(capacity.formatted()) entries")
                rows.append(Self.measure(trace, capacity: capacity))
            }
            var notes: [String] = []
            if !skipped.isEmpty {
                let ratio = 100 * Double(trace.keys.count - trace.distinctKeys) / Double(trace.keys.count)
                notes.append(skipped.map { $0.formatted() }.joined(separator: ", ")
                    + " entries not replayed: the trace has only \(trace.distinctKeys.formatted()) distinct keys, "
                    + "so nothing is evicted and every policy hits " + String(format: "%.2f %%", ratio))
            }
            Output.print(Self.render(rows, trace: trace, notes: notes))
            report.add(hitRatios: rows)
            allRows += rows
            if let threads = concurrentThreads {
                concurrentGaps += Self.renderConcurrent(rows, trace: trace, threads: threads, into: report)
            }
        }
        if let summary = Self.worstGap(allRows) { report.note(summary) }
        if let threads = concurrentThreads, let worst = concurrentGaps.max(by: { abs($0.gap) < abs($1.gap) }),
           let worstSameOrder = concurrentGaps.max(by: { abs($0.sameOrderGap) < abs($1.sameOrderGap) }) {
            let within = concurrentGaps.filter { abs($0.sameOrderGap) <= 0.5 }.count
            report.note(String(format: "hit ratio: %d threads at once against one thread on the trace's order, worst gap "
                               + "%+.2f points (%@); against one thread in the threads' order, worst gap %+.2f points "
                               + "(%@), %d of %d cells within 0.5",
                               threads, worst.gap, worst.cell, worstSameOrder.sameOrderGap, worstSameOrder.cell,
                               within, concurrentGaps.count))
            if let worstLocked = concurrentGaps.max(by: { abs($0.lockedSameOrderGap) < abs($1.lockedSameOrderGap) }) {
                report.note(String(format: "hit ratio: %d threads whose every read takes the cache's lock (an age limit "
                                   + "no entry reaches) against one thread in their order: worst gap %+.2f points (%@), "
                                   + "%d of %d cells within 0.5",
                                   threads, worstLocked.lockedSameOrderGap, worstLocked.cell,
                                   concurrentGaps.filter { abs($0.lockedSameOrderGap) <= 0.5 }.count, concurrentGaps.count))
            }
            let moves: [(name: String, gaps: (ConcurrentGap) -> [Double])] = [
                (String(format: "%.1f %% of neighbouring requests swapped", 100 * ConcurrentReplay.swapShare),
                 { $0.swappedGaps }),
                (String(format: "%.1f %% of requests run up to %d places late", 100 * ConcurrentReplay.delayShare,
                        ConcurrentReplay.delaySpan), { $0.delayedGaps }),
            ]
            for move in moves {
                let all = concurrentGaps.flatMap { cell in move.gaps(cell).map { (cell: cell.cell, gap: $0) } }
                guard let worstMove = all.max(by: { abs($0.gap) < abs($1.gap) }) else { continue }
                let cellsOver = concurrentGaps.filter { move.gaps($0).contains { abs($0) > 0.5 } }.count
                report.note(String(format: "hit ratio: one thread, the threads' order with %@ (%d seeds): worst move "
                                   + "%+.2f points (%@), %d of %d cells move by more than 0.5 with some seed",
                                   move.name, ConcurrentReplay.swapSeeds.count, worstMove.gap, worstMove.cell,
                                   cellsOver, concurrentGaps.count))
            }
        }
    }

    /// The default policy's worst cell over every trace replayed, against the best reference
    /// policy of its row, and how many cells are within the target's 1.0 point; nil without rows.
    static func worstGap(_ rows: [HitRatioRow]) -> String? {
        let gaps = rows.compactMap { row -> (row: HitRatioRow, kvcache: HitRatioRow.Cell, best: HitRatioRow.Cell, gap: Double)? in
            guard let kvcache = row.kvcacheDefault, let best = row.bestReference else { return nil }
            return (row, kvcache, best, kvcache.hitRatio - best.hitRatio)
        }
        guard let worst = gaps.min(by: { $0.gap < $1.gap }) else { return nil }
        let within = gaps.filter { $0.gap >= -1.0 }.count
        return String(format: "hit ratio: KVCache MemoryCache (adaptive), worst gap to the best reference policy "
                      + "%+.2f points (%@ @ %@ entries: %.2f %% against %@ %.2f %%); %d of %d cells within 1.0 point",
                      worst.gap, worst.row.trace, worst.row.capacity.formatted(), worst.kvcache.hitRatio,
                      worst.best.policy, worst.best.hitRatio, within, gaps.count)
    }

    /// A cell of the concurrent replay: its gap to one thread on the trace's order, and to
    /// one thread replaying the requests in the order the threads ran them; and how far that
    /// order with neighbours swapped, or with a few requests run late, moves one thread (one
    /// move per seed); and the gap of threads whose reads take the cache's lock to one thread
    /// in their order.
    typealias ConcurrentGap = (cell: String, gap: Double, sameOrderGap: Double, swappedGaps: [Double],
                               delayedGaps: [Double], lockedSameOrderGap: Double)

    /// The default policy replayed by `threads` threads at once beside its one-thread
    /// hits of `rows`: one line per size, with the gap and the reads the policy did not see.
    private static func renderConcurrent(_ rows: [HitRatioRow], trace: Trace, threads: Int,
                                         into report: Report) -> [ConcurrentGap] {
        var gaps: [ConcurrentGap] = []
        var lines = ["hit ratio · \(trace.name) · KVCache MemoryCache (adaptive), \(threads) threads replaying "
            + "chunks of \(ConcurrentReplay.chunk) requests in turn, against one thread"]
        for row in rows {
            guard let single = row.kvcacheDefault else { continue }
            let outcome = ConcurrentReplay.replay(trace.keys, capacity: row.capacity, threads: threads)
            let percent = { (hits: Int) in 100 * Double(hits) / Double(trace.keys.count) }
            let ratio = percent(outcome.hits)
            let gap = ratio - single.hitRatio
            let sameOrder = percent(outcome.sameOrderHits)
            let swappedGaps = outcome.swappedOrderHits.map { percent($0) - sameOrder }
            let delayedGaps = outcome.delayedOrderHits.map { percent($0) - sameOrder }
            let locked = ConcurrentReplay.replay(trace.keys, capacity: row.capacity, threads: threads,
                                                 readsTakeTheCacheLock: true, perturbing: false)
            let lockedGap = percent(locked.hits) - percent(locked.sameOrderHits)
            gaps.append(("\(trace.name) at \(row.capacity)", gap, ratio - sameOrder, swappedGaps, delayedGaps, lockedGap))
            let dropped = 100 * Double(outcome.droppedReads) / Double(max(1, outcome.hits))
            lines.append(String(format: "  %@ entries: %.2f %% (one thread %.2f %%, %+.2f points; one thread in the "
                                + "threads' order %.2f %%, %+.2f points); %.2f %% of hits dropped; that order with "
                                + "%.1f %% of neighbours swapped: %@ points; with %.1f %% of requests up to %d places "
                                + "late: %@ points; every read under the cache's lock: %.2f %%, %+.2f points to one thread "
                                + "in its threads' order",
                                row.capacity.formatted(), ratio, single.hitRatio, gap, sameOrder, ratio - sameOrder,
                                dropped, 100 * ConcurrentReplay.swapShare,
                                swappedGaps.map { String(format: "%+.2f", $0) }.joined(separator: ", "),
                                100 * ConcurrentReplay.delayShare, ConcurrentReplay.delaySpan,
                                delayedGaps.map { String(format: "%+.2f", $0) }.joined(separator: ", "),
                                percent(locked.hits), lockedGap))
        }
        Output.print(lines.joined(separator: "\n") + "\n")
        return gaps
    }

    /// Every contender's hits on `trace` with `capacity` entries.
    static func measure(_ trace: Trace, capacity: Int) -> HitRatioRow {
        let hits = contenders.map { contender in
            (policy: contender.name, isKVCache: contender.isKVCache, isDefault: contender.isDefault,
             hits: contender.replay(trace.keys, capacity))
        }
        return HitRatioRow(trace: trace.name, capacity: capacity, requests: trace.keys.count,
                           distinctKeys: trace.distinctKeys, hits: hits)
    }

    /// One table per trace: sizes down, policies across; each cell the hit ratio
    /// and its gap to the row's best, the best marked `*`.
    static func render(_ rows: [HitRatioRow], trace: Trace, notes: [String] = []) -> String {
        var lines = ["hit ratio · \(trace.name) (\(trace.keys.count.formatted()) requests, "
            + "\(trace.distinctKeys.formatted()) distinct keys) · % of requests, gap to the row's best in points, "
            + "* the best"]
        let columns = contenders.map(\.column)
        let table = rows.map { row in
            [row.capacity.formatted()] + row.cells.map(cellText(row))
        }
        lines.append(ConsoleTable.render(header: ["entries"] + columns, rows: table))
        for row in rows {
            guard let kvcache = row.kvcacheDefault, let reference = row.bestReference else { continue }
            lines.append("  \(row.capacity.formatted()) entries: \(kvcache.policy) "
                + String(format: "%.2f %%, %+.2f points to the best reference policy", kvcache.hitRatio,
                         kvcache.hitRatio - reference.hitRatio)
                + " (\(reference.policy) " + String(format: "%.2f %%)", reference.hitRatio))
        }
        for note in notes { lines.append("  " + note) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func cellText(_ row: HitRatioRow) -> (HitRatioRow.Cell) -> String {
        { cell in
            row.isBest(cell) ? String(format: "%.2f *", cell.hitRatio)
                : String(format: "%.2f %+.2f", cell.hitRatio, cell.gapToBest)
        }
    }
}
