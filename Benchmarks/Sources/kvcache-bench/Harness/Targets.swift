import Foundation

/// The targets the benchmarks check (issues 2-5, 13, 15 and 16, docs/BENCHMARKS.md), each
/// evaluated on one run's comparisons: a ratio of two medians of the same run, or
/// for open time and the worst read beside slow work, a time. The report opens
/// with them and the console prints them last.
struct TargetCheck: Codable, Sendable, Equatable {
    enum Status: String, Codable, Sendable {
        case met
        case notMet = "not met"
        /// The run did not measure it (another subcommand, or narrowed by the environment).
        case notMeasured = "not measured"
    }

    /// "memory", "disk", "python diskcache", "facade", "concurrency", "hit ratio", "remote", "hummingbird".
    var area: String
    /// What is checked, e.g. "1 KB get-hit, KVCache mixed ÷ raw sqlite3 SELECT".
    var name: String
    /// The bound, e.g. "≤ 1.3×" or "≤ 20 ms".
    var bound: String
    /// The figure when it is a ratio (the bound then ends in ×).
    var ratio: Double?
    /// The figure when it is a time, formatted with its unit ("1.5 ms").
    var time: String?
    /// The figure when it is neither, with its unit ("32.83 %", "-8.01 points").
    var value: String?
    /// The medians the figure comes from, with their units.
    var detail: String
    var status: Status

    /// The figure as shown: "1.12×", "1.5 ms" or "32.83 %"; "–" when not measured.
    var figure: String {
        if let ratio { return Self.format(ratio: ratio) }
        return time ?? value ?? "–"
    }

    static func format(ratio: Double) -> String {
        ratio >= 100 ? String(format: "%.0f×", ratio)
            : ratio >= 10 ? String(format: "%.1f×", ratio) : String(format: "%.2f×", ratio)
    }
}

enum Targets {
    /// Every target, in the order the report lists them.
    static func evaluate(_ comparisons: [Comparison], hitRatios: [HitRatioRow] = []) -> [TargetCheck] {
        let lookup = Lookup(comparisons: comparisons)
        var checks: [TargetCheck] = []

        // Memory level (issues 2 and 15): one thread, each of MemoryCache's policies.
        let memory = "KVCache MemoryCache", dictionary = "Dictionary+mutex"
        for subject in [memory, "KVCache MemoryCache (LRU)"] {
            for workload in ["get-hit uniform", "get-hit zipf0.9"] {
                checks.append(lookup.ratio(
                    area: "memory", name: "\(workload), \(subject) ÷ \(dictionary)", atMost: 1.3,
                    at: ("memory", "1 thread", workload), subject: subject, reference: dictionary))
            }
            checks.append(lookup.ratio(
                area: "memory", name: "set-with-eviction, \(subject) ÷ \(dictionary) insert", atMost: 2,
                at: ("memory", "1 thread", "set-with-eviction"), subject: subject, reference: dictionary))
            checks.append(lookup.ratio(
                area: "memory", name: "heap per entry, \(subject) ÷ \(dictionary)", atMost: 1.75,
                at: ("memory", "1 thread", "heap after set-fill"), subject: subject, reference: dictionary,
                unit: "bytes/entry"))
        }
        // Reads that scale: two threads' get hits against one thread's.
        for workload in ["get-hit uniform", "get-hit zipf0.9"] {
            checks.append(lookup.memoryScaling(workload: workload, subject: memory,
                                               ceiling: UnlockedReadsStrategy.name, atLeast: 1.8))
        }
        // Writes that scale: the mixed workload, beside the striped Dictionary's figure.
        checks.append(lookup.memoryScaling(workload: MemoryWorkload.mixedZipf.rawValue, subject: memory,
                                           ceiling: StripedDictionaryStrategy.name, atLeast: 1.6))
        // Convoys: 16 threads on 2 cores keep at least the striped Dictionary's share of 2 threads.
        for workload in ["get-hit uniform", "get-hit zipf0.9", MemoryWorkload.mixedZipf.rawValue] {
            checks.append(lookup.convoyScaling(workload: workload, subject: memory))
        }
        checks.append(lookup.speedup(
            area: "memory", name: "get-hit uniform, faster than NSCache", atLeast: 10,
            at: ("memory", "1 thread", "get-hit uniform"), subject: memory, slower: "NSCache", comparesFloor: true))
        checks.append(lookup.speedup(
            area: "memory", name: "set-with-eviction, faster than NSCache", atLeast: 20,
            at: ("memory", "1 thread", "set-with-eviction"), subject: memory, slower: "NSCache",
            comparesFloor: true))

        // Disk level (issue 3): the default store.
        let mixed = "KVCache mixed"
        checks.append(lookup.ratio(
            area: "disk", name: "1 KB get-hit, \(mixed) ÷ raw sqlite3 SELECT", atMost: 1.3,
            at: ("disk", "1 KB", "get-hit"), subject: mixed, reference: "raw sqlite3"))
        checks.append(lookup.ratio(
            area: "disk", name: "1 KB set, \(mixed) ÷ raw sqlite3 batched INSERT", atMost: 1.5,
            at: ("disk", "1 KB", "set"), subject: mixed, reference: "raw sqlite3"))
        checks.append(lookup.speedup(
            area: "disk", name: "1 KB set, faster than YY-style", atLeast: 4,
            at: ("disk", "1 KB", "set"), subject: mixed, slower: "YY-style (manifest)"))
        for size in ["100 KB", "1 MB"] {
            for workload in ["set", "get-hit"] {
                checks.append(lookup.ratio(
                    area: "disk", name: "\(size) \(workload), \(mixed) ÷ raw files", atMost: 1.25,
                    at: ("disk", size, workload), subject: mixed, reference: "raw files"))
            }
        }
        checks.append(lookup.trim(mixed: mixed))
        checks.append(lookup.openTime(mixed: mixed, atMostMilliseconds: 20))

        // The python peer (issue 5).
        checks.append(lookup.beatsPeerEverywhere(mixed: mixed, peer: "python-diskcache"))
        checks.append(lookup.speedup(
            area: "python diskcache", name: "1 KB set, faster than python-diskcache", atLeast: 10,
            at: ("disk", "1 KB", "set"), subject: mixed, slower: "python-diskcache"))

        // The facade (issue 4): overhead over the levels used by hand.
        for group in ["memory 10 % of the bytes", "memory holds everything"] {
            checks.append(lookup.ratio(
                area: "facade", name: "mix 90 % get (\(group)), Cache ÷ levels by hand", atMost: 1.1,
                at: ("cache", group, "mix 90 % get"), subject: "Cache", reference: "levels by hand"))
        }

        // Concurrency (issue 13).
        for size in ["1 KB", "100 KB"] {
            checks.append(lookup.scaling(size: size, atLeast: 1.8))
        }
        checks.append(lookup.worstRead(atMostMilliseconds: 5))

        // Hit ratio (issue 15): KVCache's default policy on the shared traces.
        checks.append(hitRatioGap(hitRatios, atMostPoints: 1))
        checks.append(hitRatio(hitRatios, trace: "oltp", capacity: 1_000, atLeastPercent: 40))

        // The remote level (issue 16), against raw hiredis on the same server.
        let level = RemoteBenchmark.level, floor = RemoteBenchmark.floor
        for size in ["1 KB", "100 KB"] {
            checks.append(lookup.ratio(
                area: "remote", name: "\(size) get, \(level) ÷ \(floor) GET", atMost: 1.2,
                at: ("remote", size, "get"), subject: level, reference: floor))
        }
        checks.append(lookup.roundTrips(subject: level))
        for subject in [level, RemoteBenchmark.cacheWithLevel] {
            checks.append(lookup.invalidationP99(subject: subject, atMostMilliseconds: 5))
        }
        for workload in ["memory hit", "disk hit"] {
            checks.append(lookup.unchangedWhileDown(workload: workload, atMost: 1.25))
        }

        // The Hummingbird driver (issue 39): `kvcache-bench persist`.
        let persist = PersistBenchmark.self
        checks.append(lookup.ratio(
            area: "hummingbird", name: "cached GET (router), \(persist.subject) ÷ \(persist.reference)", atMost: 1.2,
            at: (persist.suite, persist.group(keys: 1_000), persist.workload("router")),
            subject: persist.subject, reference: persist.reference))
        checks.append(lookup.ratio(
            area: "hummingbird", name: "memory entries after 1,000,000 distinct keys ÷ countLimit", atMost: 1,
            at: (persist.suite, "\(1_000_000.formatted()) \(persist.memoryGroup)", persist.memoryWorkload),
            subject: persist.subject, reference: "countLimit", unit: "entries"))
        return checks
    }

    static let hitRatioSubject = "KVCache MemoryCache (default policy)"

    /// In every row, KVCache's default policy at most `bound` points below the row's
    /// best reference policy: the largest gap.
    static func hitRatioGap(_ rows: [HitRatioRow], atMostPoints bound: Double) -> TargetCheck {
        let name = "every trace and size, within \(String(format: "%.1f", bound)) point of the row's best "
            + "reference policy, \(hitRatioSubject)"
        let boundText = "≥ " + String(format: "%.1f", -bound) + " points"
        let gaps = rows.compactMap { row -> (row: HitRatioRow, subject: HitRatioRow.Cell, best: HitRatioRow.Cell)? in
            guard let subject = row.kvcacheDefault, let best = row.bestReference else { return nil }
            return (row, subject, best)
        }
        guard let worst = gaps.min(by: { $0.subject.hitRatio - $0.best.hitRatio < $1.subject.hitRatio - $1.best.hitRatio })
        else {
            return TargetCheck(area: "hit ratio", name: name, bound: boundText, ratio: nil, time: nil,
                               detail: "not measured in this run", status: .notMeasured)
        }
        let gap = worst.subject.hitRatio - worst.best.hitRatio
        let within = gaps.filter { $0.subject.hitRatio - $0.best.hitRatio >= -bound }.count
        let detail = "\(within) of \(gaps.count) trace × size rows within; largest gap \(worst.row.trace) @ "
            + "\(worst.row.capacity.formatted()) entries: \(worst.subject.policy) "
            + String(format: "%.2f %%", worst.subject.hitRatio) + " · \(worst.best.policy) "
            + String(format: "%.2f %%", worst.best.hitRatio)
        return TargetCheck(area: "hit ratio", name: name, bound: boundText, ratio: nil, time: nil,
                           value: String(format: "%+.2f points", gap), detail: detail,
                           status: within == gaps.count ? .met : .notMet)
    }

    /// KVCache's default policy's hit ratio on `trace` at `capacity` entries, at least `bound` %.
    static func hitRatio(_ rows: [HitRatioRow], trace: String, capacity: Int, atLeastPercent bound: Double)
        -> TargetCheck {
        let name = "\(trace) @ \(capacity.formatted()) entries hit ratio, \(hitRatioSubject)"
        let boundText = "≥ " + String(format: "%.1f", bound) + " %"
        guard let row = rows.first(where: { $0.trace == trace && $0.capacity == capacity }),
              let subject = row.kvcacheDefault else {
            return TargetCheck(area: "hit ratio", name: name, bound: boundText, ratio: nil, time: nil,
                               detail: "not measured in this run", status: .notMeasured)
        }
        var detail = "\(subject.policy) \(subject.hits.formatted()) hits of \(row.requests.formatted()) requests"
        if let best = row.bestReference {
            detail += " · best reference policy \(best.policy) " + String(format: "%.2f %%", best.hitRatio)
        }
        return TargetCheck(area: "hit ratio", name: name, bound: boundText, ratio: nil, time: nil,
                           value: String(format: "%.2f %%", subject.hitRatio), detail: detail,
                           status: subject.hitRatio >= bound ? .met : .notMet)
    }

    /// Finds comparisons and rows, and turns them into checks.
    private struct Lookup {
        var comparisons: [Comparison]

        func comparison(_ place: (suite: String, group: String, workload: String)) -> Comparison? {
            comparisons.first { $0.suite == place.suite && $0.group == place.group && $0.workload == place.workload }
        }

        func median(_ comparison: Comparison?, _ strategy: String) -> Double? {
            comparison?.rows.first { $0.strategy == strategy }?.nanosecondsPerOperation.median
        }

        func missing(_ area: String, _ name: String, _ bound: String) -> TargetCheck {
            TargetCheck(area: area, name: name, bound: bound, ratio: nil, time: nil,
                        detail: "not measured in this run", status: .notMeasured)
        }

        /// "3.6 µs/op"
        static func perOperation(_ nanoseconds: Double) -> String {
            Charts.duration(nanoseconds) + "/op"
        }

        /// subject ÷ reference ≤ bound.
        /// subject ÷ reference ≤ bound; `unit` names a figure that is not a time per operation.
        func ratio(area: String, name: String, atMost bound: Double,
                   at place: (String, String, String), subject: String, reference: String,
                   unit: String? = nil) -> TargetCheck {
            let boundText = "≤ " + String(format: "%g", bound) + "×"
            let found = comparison(place)
            guard let a = median(found, subject), let b = median(found, reference), b > 0 else {
                return missing(area, name, boundText)
            }
            let ratio = a / b
            return TargetCheck(area: area, name: name, bound: boundText, ratio: ratio, time: nil,
                               detail: unit.map { "\(subject) \(Int(a.rounded())) \($0) · \(reference) \(Int(b.rounded())) \($0)" }
                                   ?? "\(subject) \(Self.perOperation(a)) · \(reference) \(Self.perOperation(b))",
                               status: ratio <= bound ? .met : .notMet)
        }

        /// slower ÷ subject ≥ bound: how many times faster the subject is. `comparesFloor`
        /// adds how much faster than `slower` the floor itself is (whether any design could meet it).
        func speedup(area: String, name: String, atLeast bound: Double, at place: (String, String, String),
                     subject: String, slower: String, comparesFloor: Bool = false) -> TargetCheck {
            let boundText = "≥ " + String(format: "%g", bound) + "×"
            let found = comparison(place)
            guard let a = median(found, subject), let b = median(found, slower), a > 0 else {
                return missing(area, name, boundText)
            }
            let speedup = b / a
            var detail = "\(subject) \(Self.perOperation(a)) · \(slower) \(Self.perOperation(b))"
            if comparesFloor, let floor = found?.rows.first(where: \.isFloor), floor.strategy != subject,
               floor.nanosecondsPerOperation.median > 0 {
                detail += " · the floor (\(floor.strategy)) is " + TargetCheck.format(ratio: b / floor
                    .nanosecondsPerOperation.median) + " faster"
            }
            return TargetCheck(area: area, name: name, bound: boundText, ratio: speedup, time: nil,
                               detail: detail, status: speedup >= bound ? .met : .notMet)
        }

        /// The file-per-key sweep as SDWebImage and Kingfisher write it (FileManager) ÷ KVCache's trim.
        func trim(mixed: String) -> TargetCheck {
            let name = "trim 10 %, faster than the file-per-key sweep (FileManager)"
            let sweep = "file-per-key, FileManager sweep"
            guard let found = comparisons.first(where: { $0.suite == "disk-trim" }),
                  let a = median(found, mixed), let b = median(found, sweep), a > 0 else {
                return missing("disk", name, "≥ 10×")
            }
            var detail = "\(mixed) \(Charts.duration(a)) · FileManager sweep \(Charts.duration(b))"
            if let syscalls = median(found, "file-per-key (MD5)") {
                detail += " · the same sweep in bare syscalls \(Charts.duration(syscalls)) ("
                    + TargetCheck.format(ratio: syscalls / a) + ")"
            }
            return TargetCheck(area: "disk", name: name, bound: "≥ 10×", ratio: b / a, time: nil,
                               detail: detail, status: b / a >= 10 ? .met : .notMet)
        }

        /// Open + first get of the largest store measured.
        func openTime(mixed: String, atMostMilliseconds bound: Double) -> TargetCheck {
            let opens = comparisons.filter { $0.suite == "disk-open" }.compactMap { comparison in
                median(comparison, mixed).map { (entries: Int(comparison.group.prefix { $0.isNumber }) ?? 0, ns: $0) }
            }.sorted { $0.entries < $1.entries }
            let boundText = "≤ \(String(format: "%g", bound)) ms"
            guard let largest = opens.last else {
                return missing("disk", "open + first get, largest store, \(mixed)", boundText)
            }
            let detail = opens.map { "\($0.entries.formatted()) entries \(Charts.duration($0.ns))" }
                .joined(separator: " · ") + " (flat in the entry count: ≤ 20 ms at 1 M entries)"
            return TargetCheck(area: "disk", name: "open + first get, \(largest.entries.formatted()) entries, \(mixed)",
                               bound: boundText, ratio: nil, time: Charts.duration(largest.ns), detail: detail,
                               status: largest.ns <= bound * 1e6 ? .met : .notMet)
        }

        /// Faster than the peer in every disk table where both ran: the smallest lead.
        func beatsPeerEverywhere(mixed: String, peer: String) -> TargetCheck {
            let name = "every disk workload, faster than \(peer) (smallest lead)"
            let leads = comparisons.filter { $0.suite == "disk" }.compactMap { comparison -> (String, Double)? in
                guard let a = median(comparison, mixed), let b = median(comparison, peer), a > 0 else { return nil }
                return ("\(comparison.group) \(comparison.workload)", b / a)
            }
            guard let weakest = leads.min(by: { $0.1 < $1.1 }) else { return missing("python diskcache", name, "> 1×") }
            let behind = leads.filter { $0.1 <= 1 }.map(\.0)
            let detail = "smallest lead: \(weakest.0), of \(leads.count) workloads"
                + (behind.isEmpty ? "" : "; behind on " + behind.joined(separator: ", "))
            return TargetCheck(area: "python diskcache", name: name, bound: "> 1×", ratio: weakest.1, time: nil,
                               detail: detail, status: behind.isEmpty ? .met : .notMet)
        }

        /// 1-thread ÷ 2-thread wall time per read of DiskCache: the throughput ratio.
        func scaling(size: String, atLeast bound: Double) -> TargetCheck {
            let found = comparison(("concurrency", size, "disk get hit: DiskCache"))
            return throughputScaling(area: "concurrency", name: "\(size) get-hit, 2 threads ÷ 1 thread throughput, DiskCache",
                                     one: median(found, "1 thread"), two: median(found, "2 threads"),
                                     unit: "reads/s", atLeast: bound)
        }

        /// 2 threads ÷ 1 thread throughput of a memory workload for `subject`: the median
        /// of `PairedScaling`'s rounds when they ran (else of the two tables' medians), with
        /// the same figure of `ceiling` (a lookup that writes nothing) in the detail.
        func memoryScaling(workload: String, subject: String, ceiling: String, atLeast bound: Double) -> TargetCheck {
            let name = "\(workload), 2 threads ÷ 1 thread throughput, \(subject)"
            let paired = comparison(("memory", PairedScaling.group, workload))
            guard let rounds = paired?.rows.first(where: { $0.strategy == subject })?.nanosecondsPerOperation else {
                let one = comparison(("memory", "1 thread", workload)), two = comparison(("memory", "2 threads", workload))
                var check = throughputScaling(area: "memory", name: name, one: median(one, subject),
                                              two: median(two, subject), unit: "gets/s", atLeast: bound)
                if let oneCeiling = median(one, ceiling), let twoCeiling = median(two, ceiling), twoCeiling > 0 {
                    check.detail += " · \(ceiling): " + TargetCheck.format(ratio: oneCeiling / twoCeiling)
                }
                return check
            }
            var detail = Self.pairedRounds(rounds, of: paired)
            if let value = median(paired, ceiling) { detail += " · \(ceiling): " + TargetCheck.format(ratio: value) }
            let quiet = comparison(("memory", PairedScaling.quietGroup, workload))
            if let value = median(quiet, subject), let count = quiet?.rows.first?.samples.count {
                detail += " · the \(count) rounds where the ceiling reached "
                    + TargetCheck.format(ratio: PairedScaling.quietCeiling) + ": " + TargetCheck.format(ratio: value)
            }
            if let value = median(comparison(("memory", PairedScaling.relativeGroup, workload)), subject) {
                detail += " · ÷ the ceiling's, round by round: " + String(format: "%.2f", value)
            }
            return TargetCheck(area: "memory", name: name, bound: "≥ " + String(format: "%g", bound) + "×",
                               ratio: rounds.median, time: nil, detail: detail,
                               status: rounds.median >= bound ? .met : .notMet)
        }

        /// "median of 9 paired rounds (1.50×–1.90×)": the rounds' spread, for a detail.
        static func pairedRounds(_ rounds: Summary, of paired: Comparison?) -> String {
            "median of \(paired?.rows.first?.samples.count ?? 0) paired rounds ("
                + TargetCheck.format(ratio: rounds.min) + "–" + TargetCheck.format(ratio: rounds.max) + ")"
        }

        /// 16 threads ÷ 2 threads throughput of a memory workload for `subject`, ÷ the
        /// striped Dictionary's: the median over `PairedScaling`'s convoy rounds of the
        /// ratio in each round (else from the two tables' medians). At least 1: a thread
        /// descheduled while others wait for it costs no more than it does the Dictionary.
        func convoyScaling(workload: String, subject: String) -> TargetCheck {
            let reference = PairedScaling.convoyReference
            let name = "\(workload), 16 threads ÷ 2 threads on 2 cores, \(subject) ÷ \(reference)"
            let bound = "≥ 1×"
            let paired = comparison(("memory", PairedScaling.convoyGroup, workload))
            if let rounds = comparison(("memory", PairedScaling.convoyRelativeGroup, workload))?
                .rows.first(where: { $0.strategy == subject })?.nanosecondsPerOperation {
                var detail = Self.pairedRounds(rounds, of: paired)
                if let mine = median(paired, subject), let theirs = median(paired, reference) {
                    detail += " · 16 ÷ 2 threads: \(subject) " + TargetCheck.format(ratio: mine)
                        + ", \(reference) " + TargetCheck.format(ratio: theirs)
                }
                return TargetCheck(area: "memory", name: name, bound: bound, ratio: rounds.median, time: nil,
                                   detail: detail, status: rounds.median >= 1 ? .met : .notMet)
            }
            let two = comparison(("memory", "2 threads", workload)), sixteen = comparison(("memory", "16 threads", workload))
            guard let mineTwo = median(two, subject), let mineSixteen = median(sixteen, subject),
                  let theirTwo = median(two, reference), let theirSixteen = median(sixteen, reference),
                  mineSixteen > 0, theirSixteen > 0 else { return missing("memory", name, bound) }
            let mine = mineTwo / mineSixteen, theirs = theirTwo / theirSixteen
            return TargetCheck(area: "memory", name: name, bound: bound, ratio: mine / theirs, time: nil,
                               detail: "from the tables' medians · 16 ÷ 2 threads: \(subject) "
                                   + TargetCheck.format(ratio: mine) + ", \(reference) " + TargetCheck.format(ratio: theirs),
                               status: mine / theirs >= 1 ? .met : .notMet)
        }

        /// One thread's ns per operation over two threads' (wall time over all operations).
        private func throughputScaling(area: String, name: String, one: Double?, two: Double?, unit: String,
                                       atLeast bound: Double) -> TargetCheck {
            let boundText = "≥ " + String(format: "%g", bound) + "×"
            guard let one, let two, two > 0 else { return missing(area, name, boundText) }
            let ratio = one / two
            return TargetCheck(area: area, name: name, bound: boundText, ratio: ratio, time: nil,
                               detail: "1 thread " + TablePrinter.rate(perSecond: 1e9 / one) + " \(unit) · 2 threads "
                                   + TablePrinter.rate(perSecond: 1e9 / two) + " \(unit)",
                               status: ratio >= bound ? .met : .notMet)
        }

        /// Round trips of a batch of 100 gets through the remote level: exactly one.
        func roundTrips(subject: String) -> TargetCheck {
            let name = "batch of 100 gets, \(subject) round trips per batch"
            let found = comparison(("remote", RemoteBenchmark.batchGroup, "round trips per batch"))
            guard let trips = median(found, subject) else { return missing("remote", name, "1") }
            var detail = "\(subject) " + String(format: "%g", trips) + " per batch"
            if let each = median(found, RemoteBenchmark.rawGets) {
                detail += " · \(RemoteBenchmark.rawGets) " + String(format: "%g", each)
            }
            return TargetCheck(area: "remote", name: name, bound: "1", ratio: nil, time: nil,
                               value: trips == 1 ? "1 round trip" : String(format: "%g round trips", trips),
                               detail: detail, status: trips == 1 ? .met : .notMet)
        }

        /// p99 of the time from a write in this process to the other process's handler.
        func invalidationP99(subject: String, atMostMilliseconds bound: Double) -> TargetCheck {
            let name = "invalidation p99 to another process, \(subject)"
            let boundText = "< \(String(format: "%g", bound)) ms"
            let found = comparison(("remote", RemoteBenchmark.invalidationGroup, "invalidation"))
            guard let latency = found?.rows.first(where: { $0.strategy == subject })?.latency else {
                return missing("remote", name, boundText)
            }
            var detail = "p50 \(Charts.duration(latency.p50)) · p99 \(Charts.duration(latency.p99)) · max "
                + "\(Charts.duration(latency.max)) of \(latency.samples.formatted())"
            if let floor = found?.rows.first(where: \.isFloor), let floorLatency = floor.latency {
                detail += " · \(floor.strategy) p50 \(Charts.duration(floorLatency.p50)), p99 "
                    + Charts.duration(floorLatency.p99)
            }
            return TargetCheck(area: "remote", name: name, bound: boundText, ratio: nil,
                               time: Charts.duration(latency.p99), detail: detail,
                               status: latency.p99 < bound * 1e6 ? .met : .notMet)
        }

        /// The worse of p99 with the server stopped and killed, over p99 with it up: each the
        /// median of the runs' p99.
        func unchangedWhileDown(workload: String, atMost bound: Double) -> TargetCheck {
            let name = "\(workload) p99 while Redis is stopped or killed ÷ while it is up, Cache with RedisLevel"
            let boundText = "≤ " + String(format: "%g", bound) + "×"
            let found = comparison(("remote-down", RemoteBenchmark.hitsGroup, "\(workload) p99 per run"))
            let p99 = { (state: String) in median(found, state) }
            guard let up = p99(RemoteBenchmark.up), up > 0 else { return missing("remote", name, boundText) }
            let down = [RemoteBenchmark.stopped, RemoteBenchmark.killed].compactMap { state in p99(state).map { (state, $0) } }
            guard let worst = down.max(by: { $0.1 < $1.1 }) else { return missing("remote", name, boundText) }
            let ratio = worst.1 / up
            let detail = "median of the runs' p99: up \(Charts.duration(up))"
                + down.map { " · \($0.0) \(Charts.duration($0.1))" }.joined()
            return TargetCheck(area: "remote", name: name, bound: boundText, ratio: ratio, time: nil, detail: detail,
                               status: ratio <= bound ? .met : .notMet)
        }

        /// The slowest single read beside slow work, scenarios (a)-(d).
        func worstRead(atMostMilliseconds bound: Double) -> TargetCheck {
            let name = "worst single read beside slow work, (a)–(d)"
            let boundText = "≤ \(String(format: "%g", bound)) ms"
            let scenarios = comparisons.filter { comparison in
                comparison.suite == "concurrency-latency" && ["(a)", "(b)", "(c)", "(d)"].contains {
                    comparison.workload.hasPrefix($0)
                }
            }.compactMap { comparison -> (String, Double)? in
                guard let worst = comparison.rows.first(where: { !$0.isFloor })?.latency?.max else { return nil }
                return (comparison.workload, worst)
            }
            guard let worst = scenarios.max(by: { $0.1 < $1.1 }) else {
                return missing("concurrency", name, boundText)
            }
            return TargetCheck(area: "concurrency", name: name, bound: boundText, ratio: nil,
                               time: Charts.duration(worst.1),
                               detail: "slowest in \(worst.0), of \(scenarios.count) scenarios",
                               status: worst.1 <= bound * 1e6 ? .met : .notMet)
        }
    }

    /// The console version: one line per target.
    static func render(_ checks: [TargetCheck]) -> String {
        let met = checks.filter { $0.status == .met }.count
        let measured = checks.filter { $0.status != .notMeasured }.count
        var text = "targets: \(met) of \(measured) measured met"
            + (measured < checks.count ? " (\(checks.count - measured) not measured in this run)" : "") + "\n"
        text += ConsoleTable.render(
            header: ["area", "target", "figure", "bound", "status"],
            rows: checks.map { [$0.area, $0.name, $0.figure, $0.bound, $0.status.rawValue] }, leftAligned: 2)
        return text + "\n"
    }
}
