import Foundation

/// Throughput scaling measured in pairs: each round times a strategy's operations with
/// `low` threads and at once with `high`, on the same filled cache, then does the same for
/// the next strategy. The per-thread-count tables time the two seconds apart, and on a
/// shared machine the throughput two cores give a lookup changes within seconds (the
/// other tenants' memory traffic, not the code; docs/BENCHMARKS.md, the paired scaling).
/// Pairs taken a fraction of a second apart say what the code scales to under the load
/// of that moment.
///
/// 2 threads ÷ 1 thread: each strategy's ratio in every round; the same over the rounds
/// in which the ceiling (a lookup that writes nothing) scaled by at least
/// `quietCeiling`, the rounds in which the machine gave the lookups two cores; and each
/// strategy's ratio ÷ the ceiling's in the same round. 16 threads ÷ 2 threads on 2
/// cores (convoys: a thread descheduled while others wait for it): each strategy's
/// ratio in every round, and ÷ the striped Dictionary's in the same round.
struct PairedScaling {
    /// The strategies timed in pairs, the ceiling last.
    static let subjects: [MemoryBenchmark.Strategy] = [
        MemoryBenchmark.Strategy(KVCacheMemoryStrategy.self),
        MemoryBenchmark.Strategy(KVCacheLRUMemoryStrategy.self),
        MemoryBenchmark.Strategy(DictionaryMutexStrategy.self),
        MemoryBenchmark.Strategy(StripedDictionaryStrategy.self),
        MemoryBenchmark.Strategy(UnlockedReadsStrategy.self),
    ]
    static let ceiling = UnlockedReadsStrategy.name
    /// A round counts as quiet when the ceiling's 2 ÷ 1 reaches this.
    static let quietCeiling = 1.8
    static let group = "2 threads ÷ 1 thread, paired"
    static let quietGroup = "2 threads ÷ 1 thread, paired, quiet rounds"
    static let relativeGroup = "2 threads ÷ 1 thread, paired, ÷ the ceiling's"
    /// The convoy pairs: what a strategy keeps of its 2 threads' throughput with 16.
    static let convoyGroup = "16 threads ÷ 2 threads, paired"
    static let convoyRelativeGroup = "16 threads ÷ 2 threads, paired, ÷ the striped Dictionary's"
    /// What the convoy pairs are divided by, round by round.
    static let convoyReference = StripedDictionaryStrategy.name

    var rounds: Int
    var passes: Int
    /// The thread counts of a pair: 1 and 2, or 2 and 16 (the convoy pairs).
    var low = 1
    var high = 2

    /// Whether these are the convoy pairs (2 and 16 threads) rather than 2 ÷ 1.
    var isConvoy: Bool { low != 1 }

    func run(data: MemoryWorkloadData, into report: Report) {
        // The ceiling (and for the convoy pairs the striped Dictionary) stays whatever the
        // selection: each round divides by it.
        let allSubjects = Self.subjects
            .filter {
                $0.type.name == Self.ceiling || isConvoy && $0.type.name == Self.convoyReference
                    || MemoryBenchmark.selection.includes(strategy: $0.type.name)
            }
            .map { $0.pairedSubject(data) }
        for workload in [MemoryWorkload.getHitUniform, .getHitZipf, .mixedZipf] where MemoryBenchmark.selection.includes(workload) {
            // The mixed workload's sets run beside gets: not for the ceiling, whose gets take no lock.
            let mixed = workload == .mixedZipf
            let subjects = mixed ? allSubjects.filter(\.allowsWrites) : allSubjects
            Progress.log("memory: \(workload.rawValue), \(low) and \(high) threads in pairs, \(rounds) rounds")
            // The workers' copies of the keys in lookup order, shared by the subjects.
            let copies = MemoryBenchmark.keyCopies(workload == .getHitUniform ? data.uniformKeys : data.zipfKeys,
                                                   threads: high)
            let pairs = subjects.map { $0.pairs(copies, mixed ? MemoryBenchmark.mixedSetInterval : nil, low, high) }
            var ratios = [[Double]](repeating: [], count: subjects.count)
            for _ in 0..<rounds {
                for (index, pair) in pairs.enumerated() { ratios[index].append(pair(passes)) }
            }
            func add(_ group: String, _ note: String, _ samples: (Int) -> [Double]) {
                var comparison = Comparison(suite: "memory", group: group, workload: workload.rawValue,
                                            operationsPerRun: data.keyCount * passes)
                comparison.unit = "×"
                for index in subjects.indices {
                    comparison.add(subjects[index].name, isFloor: false, samples: samples(index))
                }
                comparison.notes.append(note)
                report.add(comparison)
            }
            let what = mixed ? "operations" : "gets"
            if isConvoy {
                add(Self.convoyGroup, "each round: \(low) threads' time ÷ \(high) threads' (wall) for the same "
                    + "\(what), back to back, on \(ProcessInfo.processInfo.activeProcessorCount) cores; \(rounds) rounds",
                    { ratios[$0] })
                guard let reference = subjects.firstIndex(where: { $0.name == Self.convoyReference }) else { continue }
                add(Self.convoyRelativeGroup, "each round: the strategy's \(high) ÷ \(low) over that of "
                    + "\(Self.convoyReference) in the same round",
                    { index in ratios[index].indices.map { ratios[index][$0] / ratios[reference][$0] } })
                continue
            }
            add(Self.group, "each round: 1 thread's time ÷ 2 threads' (wall) for the same "
                + "\(what), back to back; \(rounds) rounds", { ratios[$0] })
            guard !mixed else { continue }
            let ceiling = ratios[subjects.count - 1]
            let quiet = ceiling.indices.filter { ceiling[$0] >= Self.quietCeiling }
            if !quiet.isEmpty {
                add(Self.quietGroup, "rounds in which the ceiling scaled ≥ \(Self.quietCeiling)×: \(quiet.count) of \(rounds)",
                    { index in quiet.map { ratios[index][$0] } })
            }
            add(Self.relativeGroup, "each round: the strategy's 2 ÷ 1 over the ceiling's in the same round",
                { index in ratios[index].indices.map { ratios[index][$0] / ceiling[$0] } })
        }
        for subject in allSubjects { subject.drain() }
    }

    /// A filled cache, behind closures so that the rounds run code specialized for
    /// the strategy.
    struct Subject {
        let name: String
        let allowsWrites: Bool
        /// Given the workers' keys in lookup order (and the mixed workload's set interval)
        /// and the two thread counts: one pair, the fewer threads' ns per operation ÷ the more's.
        let pairs: (_ keys: [[String]], _ setEvery: Int?, _ low: Int, _ high: Int) -> (_ passes: Int) -> Double
        let drain: () -> Void

        init<S: MemoryStrategy>(_ type: S.Type, data: MemoryWorkloadData) {
            let cache = S(countLimit: data.keyCount)
            for (index, key) in data.keys.map(S.makeKey).enumerated() { cache.setValue(SmallValue(index), forKey: key) }
            name = S.name
            allowsWrites = S.allowsWritesBesideReads
            pairs = { strings, setEvery, low, high in
                let keys = strings.map { $0.map(S.makeKey) }
                return { passes in
                    let fewer = MemoryBenchmark.get(cache, keys: keys, threads: low, passes: passes, setEvery: setEvery)
                    let more = MemoryBenchmark.get(cache, keys: keys, threads: high, passes: passes, setEvery: setEvery)
                    let count = keys[0].count
                    let expected = (count - (setEvery.map { count / $0 } ?? 0)) * passes
                    if fewer.total != expected || more.total != expected {
                        Progress.log("warning: \(S.name) paired gets: \(fewer.total) and \(more.total) hits, "
                            + "expected \(expected)")
                    }
                    return Double(fewer.nanoseconds) / Double(max(more.nanoseconds, 1))
                }
            }
            drain = { cache.drain() }
        }
    }
}
