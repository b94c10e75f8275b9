/// 2 threads ÷ 1 thread throughput of get hits and of the mixed workload, measured in
/// pairs: each round times a strategy's operations with one thread and at once with two, on the same filled cache,
/// then does the same for the next strategy. The per-thread-count tables time the
/// two seconds apart, and on a shared machine the throughput two cores give a
/// lookup changes within seconds (the other tenants' memory traffic, not the code;
/// docs/BENCHMARKS.md, the paired scaling). Pairs taken a fraction of a second apart,
/// beside the ceiling's pair, say what the code scales to under the load of that
/// moment.
///
/// The figures: each strategy's ratio in every round; the same over the rounds in
/// which the ceiling (a lookup that writes nothing) scaled by at least
/// `quietCeiling`, the rounds in which the machine gave the lookups two cores; and
/// each strategy's ratio ÷ the ceiling's in the same round.
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

    var rounds: Int
    var passes: Int

    func run(data: MemoryWorkloadData, into report: Report) {
        // The ceiling stays whatever the selection: each round divides by it.
        let allSubjects = Self.subjects
            .filter { $0.type.name == Self.ceiling || MemoryBenchmark.selection.includes(strategy: $0.type.name) }
            .map { $0.pairedSubject(data) }
        for workload in [MemoryWorkload.getHitUniform, .getHitZipf, .mixedZipf] where MemoryBenchmark.selection.includes(workload) {
            // The mixed workload's sets run beside gets: not for the ceiling, whose gets take no lock.
            let mixed = workload == .mixedZipf
            let subjects = mixed ? allSubjects.filter(\.allowsWrites) : allSubjects
            Progress.log("memory: \(workload.rawValue), 1 and 2 threads in pairs, \(rounds) rounds")
            // Two workers' copies of the keys in lookup order, shared by the subjects.
            let copies = MemoryBenchmark.keyCopies(workload == .getHitUniform ? data.uniformKeys : data.zipfKeys,
                                                   threads: 2)
            let pairs = subjects.map { $0.pairs(copies, mixed ? MemoryBenchmark.mixedSetInterval : nil) }
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
            add(Self.group, "each round: 1 thread's time ÷ 2 threads' (wall) for the same "
                + (mixed ? "operations" : "gets") + ", back to back; \(rounds) rounds", { ratios[$0] })
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
        /// Given the workers' keys in lookup order (and the mixed workload's set interval):
        /// one pair, 1 thread's ns per operation ÷ 2 threads'.
        let pairs: (_ keys: [[String]], _ setEvery: Int?) -> (_ passes: Int) -> Double
        let drain: () -> Void

        init<S: MemoryStrategy>(_ type: S.Type, data: MemoryWorkloadData) {
            let cache = S(countLimit: data.keyCount)
            for (index, key) in data.keys.map(S.makeKey).enumerated() { cache.setValue(SmallValue(index), forKey: key) }
            name = S.name
            allowsWrites = S.allowsWritesBesideReads
            pairs = { strings, setEvery in
                let keys = strings.map { $0.map(S.makeKey) }
                return { passes in
                    let one = MemoryBenchmark.get(cache, keys: keys, threads: 1, passes: passes, setEvery: setEvery)
                    let two = MemoryBenchmark.get(cache, keys: keys, threads: 2, passes: passes, setEvery: setEvery)
                    let count = keys[0].count
                    let expected = (count - (setEvery.map { count / $0 } ?? 0)) * passes
                    if one.total != expected || two.total != expected {
                        Progress.log("warning: \(S.name) paired gets: \(one.total) and \(two.total) hits, "
                            + "expected \(expected)")
                    }
                    return Double(one.nanoseconds) / Double(max(two.nanoseconds, 1))
                }
            }
            drain = { cache.drain() }
        }
    }
}
