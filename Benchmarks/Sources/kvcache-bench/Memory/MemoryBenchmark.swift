import Foundation

/// `kvcache-bench memory`: every memory strategy on every workload, with one thread
/// and two (or the counts `--threads` gives); within each run every strategy runs
/// with each thread count in turn.
/// With several threads a figure is the wall time over all operations, so
/// 1-thread ÷ n-thread ns/op is the throughput scaling; with 1 and 2 threads,
/// `PairedScaling` then times the two counts back to back for the scaling figure (and 2
/// against 16 threads, for the convoy figure).
struct MemoryBenchmark {
    /// Add a strategy here to compare it.
    static let strategies: [Strategy] = [
        Strategy(DictionaryMutexStrategy.self),
        Strategy(StripedDictionaryStrategy.self),
        Strategy(KVCacheMemoryStrategy.self),
        Strategy(KVCacheLRUMemoryStrategy.self),
        Strategy(AutoPurgingStrategy.self),
        Strategy(NSCacheStrategy.self),
        Strategy(UnlockedReadsStrategy.self),
    ]

    /// A strategy and its runs, measured by code specialized for it. Called through
    /// `any MemoryStrategy.Type`, the loops ran unspecialized: every operation copied
    /// its key through value witnesses (a retain and a release of the key's storage,
    /// which two threads share on hot keys) and called the cache through a witness table.
    struct Strategy: Sendable {
        let type: any MemoryStrategy.Type
        let measure: @Sendable (MemoryBenchmark, MemoryWorkloadData, Int, inout [MemoryWorkload: SampleSet]) -> RunExtras
        /// A filled cache of the strategy for `PairedScaling`.
        let pairedSubject: @Sendable (MemoryWorkloadData) -> PairedScaling.Subject

        init<S: MemoryStrategy>(_ type: S.Type) {
            self.type = type
            measure = { benchmark, data, threads, samples in
                benchmark.measure(S.self, data: data, threads: threads, into: &samples)
            }
            pairedSubject = { PairedScaling.Subject(S.self, data: $0) }
        }
    }

    /// Narrowing for profiling one figure (not needed for a normal run), from the environment:
    /// `KVCACHE_BENCH_MEMORY_STRATEGIES=KVCache MemoryCache,Dictionary, 64` (names or name prefixes),
    /// `KVCACHE_BENCH_MEMORY_WORKLOADS=mixed,get-hit u` (workload name prefixes; every
    /// run still fills its cache first), `KVCACHE_BENCH_MEMORY_PARTS=runs,paired,sections`.
    struct Selection {
        var strategyPrefixes: [String]?
        var workloadPrefixes: [String]?
        var parts: Set<String> = ["runs", "paired", "sections"]

        init(environment: [String: String] = ProcessInfo.processInfo.environment) {
            func list(_ name: String) -> [String]? {
                environment[name].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            }
            strategyPrefixes = list("KVCACHE_BENCH_MEMORY_STRATEGIES")
            workloadPrefixes = list("KVCACHE_BENCH_MEMORY_WORKLOADS")
            if let parts = list("KVCACHE_BENCH_MEMORY_PARTS") { self.parts = Set(parts) }
        }

        /// A prefix that is a strategy's whole name names that strategy alone.
        func includes(strategy name: String) -> Bool {
            let names = Set(MemoryBenchmark.strategies.map { $0.type.name })
            return strategyPrefixes.map {
                $0.contains { name == $0 || !names.contains($0) && name.hasPrefix($0) }
            } ?? true
        }

        func includes(_ workload: MemoryWorkload) -> Bool {
            workloadPrefixes.map { $0.contains { workload.rawValue.hasPrefix($0) } } ?? true
        }
    }

    static let selection = Selection()

    var keyCount: Int
    var runs: Int
    var threadCounts: [Int] = [1, 2]
    /// Timed passes over the access sequence in each get workload, after one untimed.
    var getPasses = 3

    func run(into report: Report) {
        Progress.log("memory: generating \(keyCount) keys and access sequences")
        var dataByCount: [Int: MemoryWorkloadData] = [keyCount: MemoryWorkloadData(keyCount: keyCount)]
        for strategy in Self.strategies.map(\.type) {
            let count = strategy.keyLimit.map { min($0, keyCount) } ?? keyCount
            if dataByCount[count] == nil { dataByCount[count] = MemoryWorkloadData(keyCount: count) }
        }
        let full = dataByCount[keyCount]!
        // Each strategy runs with every thread count back to back, so that a scaling
        // figure (1 thread ÷ n threads) compares times taken seconds apart, under the
        // same load from the machine's other tenants, not in different minutes.
        var samplesByThreads: [Int: [MemoryWorkload: SampleSet]] = [:]
        var retentionByThreads: [Int: [(String, Double)]] = [:]
        var footprintByThreads: [Int: SampleSet] = [:]
        for run in 0..<runs where Self.selection.parts.contains("runs") {
            Progress.log("memory: run \(run + 1)/\(runs)")
            for entry in Self.strategies where Self.selection.includes(strategy: entry.type.name) {
                let strategy = entry.type
                let count = strategy.keyLimit.map { min($0, keyCount) } ?? keyCount
                for threads in threadCounts {
                    let extras = entry.measure(self, dataByCount[count]!, threads, &samplesByThreads[threads, default: [:]])
                    if run == runs - 1 { retentionByThreads[threads, default: []].append((strategy.name, extras.keptRecent)) }
                    if let bytes = extras.bytesPerEntry {
                        footprintByThreads[threads, default: SampleSet()].record(
                            strategy.name, isFloor: strategy.isFloor, perOperation: bytes, operations: count)
                    }
                }
            }
        }
        for threads in threadCounts {
            let group = threads == 1 ? "1 thread" : "\(threads) threads"
            let samples = samplesByThreads[threads] ?? [:]
            let retention = retentionByThreads[threads] ?? []
            let footprint = footprintByThreads[threads] ?? SampleSet()
            for workload in MemoryWorkload.allCases where samples[workload] != nil {
                var comparison = Comparison(suite: "memory", group: group, workload: workload.rawValue,
                                            operationsPerRun: workload.isGet ? keyCount * getPasses : keyCount)
                samples[workload]?.fill(&comparison)
                if workload.isGet {
                    comparison.notes.append("each worker looks up its share once untimed, then the workers look "
                        + "every key up \(getPasses) times, timed, taking chunks of \(SharedPositions.chunk) as they go")
                }
                switch workload {
                case .getHitZipf:
                    comparison.notes.append(String(format: "the top 10 %% of keys take %.0f %% of lookups",
                                                   full.zipfTopTenPercentMass * 100))
                case .setWithEviction:
                    comparison.notes.append("count limit \(keyCount / 10) (10 % of the keys)")
                    // With two threads "most recent" depends on how the threads interleaved.
                    if threads == 1 {
                        comparison.notes.append("share of the most recently set 10 % still cached afterwards "
                            + "(an LRU keeps all): "
                            + retention.map { "\($0.0) \(Int(($0.1 * 100).rounded())) %" }.joined(separator: ", "))
                    }
                default: break
                }
                report.add(comparison)
            }
            if !footprint.order.isEmpty {
                var comparison = Comparison(suite: "memory", group: group, workload: "heap after set-fill",
                                            operationsPerRun: keyCount)
                comparison.unit = "bytes/entry"
                footprint.fill(&comparison)
                comparison.notes.append("malloc'd bytes the filled cache holds per entry (keys are shared "
                    + "with the benchmark, so not counted), from glibc mallinfo2")
                report.add(comparison)
            }
        }
        if threadCounts.contains(1) && threadCounts.contains(2) && Self.selection.parts.contains("paired") {
            PairedScaling(rounds: pairedRounds, passes: getPasses).run(data: full, into: report)
        }
        if threadCounts.contains(2) && threadCounts.contains(16) && Self.selection.parts.contains("paired") {
            PairedScaling(rounds: pairedRounds, passes: getPasses, low: 2, high: 16).run(data: full, into: report)
        }
        if Self.selection.parts.contains("sections") {
            SerialSectionsReport(threadCounts: Array(Set(threadCounts + [1, 2, 16])).sorted(), passes: getPasses)
                .run(data: full)
        }
    }

    /// The mixed workload's one set in this many operations (90 % gets).
    static let mixedSetInterval = 10

    /// Rounds of `PairedScaling`: 3 per run.
    var pairedRounds: Int { runs * 3 }

    /// What a run measures besides time.
    struct RunExtras {
        /// Share of the most recently set 10 % of keys still in the bounded cache.
        var keptRecent: Double
        /// Heap bytes per entry after the single-thread fill (nil with threads).
        var bytesPerEntry: Double?
    }

    /// One run of every workload for one strategy.
    private func measure<S: MemoryStrategy>(_ type: S.Type, data: MemoryWorkloadData, threads: Int,
                                        into samples: inout [MemoryWorkload: SampleSet]) -> RunExtras {
        let keys = data.keys.map(S.makeKey)
        let missing = Self.lookupKeys(S.self, data.missingKeys, threads: threads)
        let n = data.keyCount
        func record(_ workload: MemoryWorkload, _ outcome: ParallelRunner.Outcome, expectedHits: Int?,
                    operations: Int? = nil) {
            if let expectedHits, outcome.total != expectedHits {
                Progress.log("warning: \(S.name) \(workload.rawValue): \(outcome.total) hits, expected \(expectedHits)")
            }
            samples[workload, default: SampleSet()].record(
                S.name, isFloor: S.isFloor, nanoseconds: outcome.nanoseconds, operations: operations ?? n,
                latencies: outcome.latencies)
        }

        // Only allocations on this thread show in mallinfo2: measure the single-thread fill.
        let heapBefore = threads == 1 ? HeapUsage.allocatedBytes() : nil
        // Bounded at exactly the keys it gets: every get hits, and a policy that
        // counts uses (KVCache's adaptive one) does so, as it would in production.
        let cache = S(countLimit: n)
        record(.setFill, Self.set(cache, keys: keys, threads: threads), expectedHits: nil)
        var bytesPerEntry: Double?
        if let heapBefore, let heapAfter = HeapUsage.allocatedBytes() {
            bytesPerEntry = Double(heapAfter - heapBefore) / Double(n)
        }
        let passes = getPasses
        let selection = Self.selection
        if selection.includes(.getHitUniform) {
            record(.getHitUniform, Self.get(cache, keys: Self.lookupKeys(S.self, data.uniformKeys, threads: threads),
                                            threads: threads, passes: passes),
                   expectedHits: n * passes, operations: n * passes)
        }
        if selection.includes(.getHitZipf) {
            record(.getHitZipf, Self.get(cache, keys: Self.lookupKeys(S.self, data.zipfKeys, threads: threads),
                                         threads: threads, passes: passes),
                   expectedHits: n * passes, operations: n * passes)
        }
        if selection.includes(.getMiss) {
            record(.getMiss, Self.get(cache, keys: missing, threads: threads, passes: passes),
                   expectedHits: 0, operations: n * passes)
        }
        // Every tenth operation a set: hits are the other nine.
        if S.allowsWritesBesideReads && selection.includes(.mixedZipf) {
            record(.mixedZipf, Self.get(cache, keys: Self.lookupKeys(S.self, data.zipfKeys, threads: threads),
                                        threads: threads, passes: passes, setEvery: Self.mixedSetInterval),
                   expectedHits: (n - n / Self.mixedSetInterval) * passes, operations: n * passes)
        }

        let limit = max(1, n / 10)
        let bounded = S(countLimit: limit)
        if selection.includes(.setWithEviction) {
            record(.setWithEviction, Self.set(bounded, keys: keys, threads: threads), expectedHits: nil)
        }
        // With two threads the "most recent" keys are the tail of each half.
        var kept = 0
        for worker in 0..<threads {
            let slice = ParallelRunner.slice(n, worker: worker, parts: threads)
            let recent = slice.suffix(limit / threads)
            kept += recent.reduce(0) { $0 + (bounded.value(forKey: keys[$1]) != nil ? 1 : 0) }
        }
        cache.drain()
        bounded.drain()
        return RunExtras(keptRecent: Double(kept) / Double(max(1, limit / threads * threads)),
                         bytesPerEntry: bytesPerEntry)
    }

    /// Each worker sets its own contiguous slice of the keys.
    private static func set<S: MemoryStrategy>(_ cache: S, keys: [S.Key], threads: Int) -> ParallelRunner.Outcome {
        ParallelRunner.run(threads: threads, expectedOperations: keys.count) { worker, sampler in
            for index in ParallelRunner.slice(keys.count, worker: worker, parts: threads) {
                sampler.measure { cache.setValue(SmallValue(index), forKey: keys[index]) }
            }
            return 0
        }
    }

    /// Workers look up `keys[worker]` in order, each worker by its own copies: once
    /// untimed, each its own slice on its own thread, then `passes` times, timed,
    /// taking chunks of positions as they go (`SharedPositions`), so a worker the
    /// machine slows does fewer and the wall time is the workers' throughput together,
    /// not the slowest one's share. The untimed pass brings each core's caches (and a
    /// policy's counts) to the state a cache serving reads is in; several timed passes
    /// keep thread wake-ups and the first misses of a core a small share of the time.
    /// With `setEvery`, the operation at every position that is a multiple of it minus
    /// one sets the key (an existing one, so the cache stays filled) instead.
    static func get<S: MemoryStrategy>(_ cache: S, keys workerKeys: [[S.Key]], threads: Int,
                                       passes: Int, setEvery: Int? = nil) -> ParallelRunner.Outcome {
        let count = workerKeys[0].count
        @Sendable func lookUp(_ keys: [S.Key], _ positions: Range<Int>, sampler: inout LatencySampler) -> Int {
            var hits = 0
            if let setEvery {
                for position in positions {
                    if position % setEvery == setEvery - 1 {
                        sampler.measure { cache.setValue(SmallValue(position), forKey: keys[position]) }
                    } else if sampler.measure({ cache.value(forKey: keys[position]) }) != nil {
                        hits &+= 1
                    }
                }
                return hits
            }
            for position in positions {
                if sampler.measure({ cache.value(forKey: keys[position]) }) != nil { hits &+= 1 }
            }
            return hits
        }
        let shared = (0..<passes).map { _ in SharedPositions(count: count) }
        return ParallelRunner.run(threads: threads, expectedOperations: count * passes, warmUp: { worker in
            var untimed = LatencySampler(expectedOperations: 0)
            _ = lookUp(workerKeys[worker], ParallelRunner.slice(count, worker: worker, parts: threads), sampler: &untimed)
        }) { worker, sampler in
            let keys = workerKeys[worker]
            var hits = 0
            for pass in shared {
                while let chunk = pass.claim() { hits &+= lookUp(keys, chunk, sampler: &sampler) }
            }
            return hits
        }
    }

    /// Each of `threads` workers' own copies of `keys`, which list the keys in the
    /// order the worker looks them up. As a server looks up keys it has just read
    /// from requests: had the workers shared the key objects, each get would retain
    /// and release the same hot keys' storage on every core (its reference count's
    /// line moving between them), whatever the cache; had the copies been in key
    /// order, each get would first fetch its key from a random place in memory, a
    /// miss that is not the cache's work, and two workers' copies would double it.
    static func lookupKeys<S: MemoryStrategy>(_ type: S.Type, _ keys: [String], threads: Int) -> [[S.Key]] {
        keyCopies(keys, threads: threads).map { $0.map(S.makeKey) }
    }

    /// `threads` copies of `keys`, each string in storage of its own.
    static func keyCopies(_ keys: [String], threads: Int) -> [[String]] {
        (0..<threads).map { _ in keys.map(copy) }
    }

    /// The same string in storage of its own.
    private static func copy(_ string: String) -> String {
        String(decoding: Array(string.utf8), as: UTF8.self)
    }
}
