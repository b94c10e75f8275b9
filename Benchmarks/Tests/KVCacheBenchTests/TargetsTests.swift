import Foundation
import Testing
@testable import kvcache_bench

@Suite struct TargetsTests {
    /// A comparison whose rows have the given medians (ns per operation), the first row the floor.
    func comparison(_ suite: String, _ group: String, _ workload: String,
                    _ rows: [(String, Double)], floors: Set<String>? = nil) -> Comparison {
        var comparison = Comparison(suite: suite, group: group, workload: workload, operationsPerRun: 100)
        for (index, row) in rows.enumerated() {
            comparison.add(row.0, isFloor: floors.map { $0.contains(row.0) } ?? (index == 0), samples: [row.1])
        }
        return comparison
    }

    /// Paired rounds' ratios of get-hit uniform: (strategy, one ratio per round).
    func ratios(_ group: String, _ rows: [(String, [Double])]) -> Comparison {
        var comparison = Comparison(suite: "memory", group: group, workload: "get-hit uniform", operationsPerRun: 100)
        comparison.unit = "×"
        for row in rows { comparison.add(row.0, isFloor: false, samples: row.1) }
        return comparison
    }

    func check(_ checks: [TargetCheck], _ name: String) throws -> TargetCheck {
        try #require(checks.first { $0.name.hasPrefix(name) }, "no target named \(name)")
    }

    @Test func everyTargetIsListedAndNotMeasuredWithoutComparisons() {
        let checks = Targets.evaluate([])
        #expect(checks.count == 43)
        #expect(checks.allSatisfy { $0.status == .notMeasured && $0.figure == "–" })
        #expect(Set(checks.map(\.area)) == ["memory", "disk", "python diskcache", "facade", "concurrency",
                                            "hit ratio", "remote", "hummingbird"])
    }

    @Test func ratioTargetsAreMetAtOrUnderTheirBound() throws {
        let checks = Targets.evaluate([
            comparison("disk", "1 KB", "get-hit", [("raw sqlite3", 1_000), ("raw files", 900), ("KVCache mixed", 1_300)],
                       floors: ["raw sqlite3", "raw files"]),
            comparison("disk", "1 KB", "set", [("raw sqlite3", 1_000), ("KVCache mixed", 1_600),
                                               ("YY-style (manifest)", 8_000), ("python-diskcache", 20_000)]),
        ])
        // Against the raw SELECT by name, not the faster floor (raw files) of the table.
        let get = try check(checks, "1 KB get-hit")
        #expect(get.status == .met)
        #expect(abs(try #require(get.ratio) - 1.3) < 1e-9)
        #expect(get.figure == "1.30×")
        #expect(get.bound == "≤ 1.3×")
        #expect(get.detail.contains("1.3 µs/op"))

        let set = try check(checks, "1 KB set, KVCache mixed ÷ raw sqlite3")
        #expect(set.status == .notMet)
        #expect(set.figure == "1.60×")

        // Speed-ups: the slower strategy's median over KVCache's.
        let yy = try check(checks, "1 KB set, faster than YY-style")
        #expect(yy.status == .met)
        #expect(yy.figure == "5.00×")
        let peer = try check(checks, "1 KB set, faster than python-diskcache")
        #expect(peer.status == .met)
        #expect(peer.figure == "12.5×")
        #expect(try check(checks, "100 KB set").status == .notMeasured)
    }

    @Test func theNSCacheTargetsSayHowFastTheFloorItselfIs() throws {
        let checks = Targets.evaluate([
            comparison("memory", "1 thread", "get-hit uniform",
                       [("Dictionary+mutex", 80), ("KVCache MemoryCache", 90), ("NSCache", 440)]),
        ])
        let speedup = try check(checks, "get-hit uniform, faster than NSCache")
        #expect(speedup.status == .notMet)
        #expect(speedup.figure == "4.89×")
        #expect(speedup.detail.contains("the floor (Dictionary+mutex) is 5.50× faster"))
        #expect(try check(checks, "get-hit uniform, KVCache MemoryCache").status == .met)
    }

    /// Issue 15: a memory get hit with two threads against one, as throughput.
    @Test func memoryScalingIsOneThreadsTimeOverTwoThreads() throws {
        let checks = Targets.evaluate([
            comparison("memory", "1 thread", "get-hit uniform", [("Dictionary+mutex", 80), ("KVCache MemoryCache", 100)]),
            comparison("memory", "2 threads", "get-hit uniform", [("Dictionary+mutex", 70), ("KVCache MemoryCache", 92)]),
            comparison("memory", "1 thread", "get-hit zipf0.9", [("Dictionary+mutex", 80), ("KVCache MemoryCache", 100),
                                                                 (UnlockedReadsStrategy.name, 60)]),
            comparison("memory", "2 threads", "get-hit zipf0.9", [("Dictionary+mutex", 70), ("KVCache MemoryCache", 50),
                                                                  (UnlockedReadsStrategy.name, 40)]),
        ])
        let uniform = try check(checks, "get-hit uniform, 2 threads ÷ 1 thread")
        #expect(uniform.status == .notMet)
        #expect(uniform.figure == "1.09×")
        #expect(uniform.bound == "≥ 1.8×")
        let zipf = try check(checks, "get-hit zipf0.9, 2 threads ÷ 1 thread")
        #expect(zipf.status == .met)
        #expect(zipf.figure == "2.00×")
        // The ceiling's scaling in the same run, beside (not part of) the figure.
        #expect(zipf.detail.hasSuffix("\(UnlockedReadsStrategy.name): 1.50×"))
        #expect(!uniform.detail.contains(UnlockedReadsStrategy.name))
    }

    /// When the run timed 1 and 2 threads in pairs, the figure is the median of the
    /// pairs, not of the two tables.
    @Test func memoryScalingIsThePairedRoundsMedianWhenTheyRan() throws {
        let checks = Targets.evaluate([
            comparison("memory", "1 thread", "get-hit uniform", [("Dictionary+mutex", 80), ("KVCache MemoryCache", 100)]),
            comparison("memory", "2 threads", "get-hit uniform", [("Dictionary+mutex", 70), ("KVCache MemoryCache", 92)]),
            ratios(PairedScaling.group, [("KVCache MemoryCache", [1.5, 1.9, 1.85]),
                                         (UnlockedReadsStrategy.name, [1.6, 2.0, 1.95])]),
            ratios(PairedScaling.quietGroup, [("KVCache MemoryCache", [1.9, 1.85]),
                                              (UnlockedReadsStrategy.name, [2.0, 1.95])]),
            ratios(PairedScaling.relativeGroup, [("KVCache MemoryCache", [0.94, 0.95, 0.95]),
                                                 (UnlockedReadsStrategy.name, [1, 1, 1])]),
        ])
        let uniform = try check(checks, "get-hit uniform, 2 threads ÷ 1 thread")
        #expect(uniform.status == .met)
        #expect(uniform.figure == "1.85×")
        #expect(uniform.detail.hasPrefix("median of 3 paired rounds (1.50×–1.90×)"))
        #expect(uniform.detail.contains("\(UnlockedReadsStrategy.name): 1.95×"))
        #expect(uniform.detail.contains("the 2 rounds where the ceiling reached 1.80×: 1.88×"))
        #expect(uniform.detail.hasSuffix("÷ the ceiling's, round by round: 0.95"))
    }

    /// The mixed workload's scaling comes from its paired rounds, beside the striped
    /// Dictionary's (it has no ceiling: the unlocked Dictionary takes no writes).
    @Test func mixedScalingIsPairedBesideTheStripedDictionary() throws {
        var paired = Comparison(suite: "memory", group: PairedScaling.group,
                                workload: MemoryWorkload.mixedZipf.rawValue, operationsPerRun: 100)
        paired.unit = "×"
        paired.add("KVCache MemoryCache", isFloor: false, samples: [1.5, 1.7, 1.65])
        paired.add(StripedDictionaryStrategy.name, isFloor: false, samples: [1.4, 1.5, 1.45])
        let mixed = try check(Targets.evaluate([paired]), "mixed 90/10 zipf0.9, 2 threads ÷ 1 thread")
        #expect(mixed.status == .met)
        #expect(mixed.figure == "1.65×")
        #expect(mixed.detail.contains("\(StripedDictionaryStrategy.name): 1.45×"))
        let slower = try check(Targets.evaluate([]), "mixed 90/10 zipf0.9, 2 threads ÷ 1 thread")
        #expect(slower.status == .notMeasured)
    }

    /// Convoys: KVCache's 16 ÷ 2 threads over the striped Dictionary's, from the paired
    /// rounds when they ran, else from the two tables' medians.
    @Test func convoyScalingIsOverTheStripedDictionarysInTheSameRound() throws {
        let name = "get-hit uniform, 16 threads ÷ 2 threads on 2 cores"
        let paired = try check(Targets.evaluate([
            ratios(PairedScaling.convoyGroup, [("KVCache MemoryCache", [0.9, 1.0, 0.8]),
                                               (StripedDictionaryStrategy.name, [1.0, 0.9, 0.9])]),
            ratios(PairedScaling.convoyRelativeGroup, [("KVCache MemoryCache", [0.9, 1.11, 0.89]),
                                                       (StripedDictionaryStrategy.name, [1, 1, 1])]),
        ]), name)
        #expect(paired.status == .notMet)
        #expect(paired.figure == "0.90×")
        #expect(paired.bound == "≥ 1×")
        #expect(paired.detail.hasPrefix("median of 3 paired rounds (0.89×–1.11×)"))
        #expect(paired.detail.hasSuffix("KVCache MemoryCache 0.90×, \(StripedDictionaryStrategy.name) 0.90×"))
        // From the tables: KVCache 2 ÷ 16 threads' ns/op = 100 ÷ 80, the Dictionary's 50 ÷ 50.
        let tables = try check(Targets.evaluate([
            comparison("memory", "2 threads", "get-hit uniform", [("KVCache MemoryCache", 100), (StripedDictionaryStrategy.name, 50)]),
            comparison("memory", "16 threads", "get-hit uniform", [("KVCache MemoryCache", 80), (StripedDictionaryStrategy.name, 50)]),
        ]), name)
        #expect(tables.status == .met)
        #expect(tables.figure == "1.25×")
        #expect(try check(Targets.evaluate([]), name).status == .notMeasured)
    }

    @Test func timeTargetsCompareTheTimeItself() throws {
        var slow = comparison("concurrency-latency", "beside slow work", "(b) DiskCache: 1 MB sets", [])
        slow.add("alone", isFloor: true, samples: [1_000], latencies: [1_000, 2_000])
        slow.add("beside the work", isFloor: false, samples: [2_000], latencies: [1_500, 6_000_000])
        var ignored = comparison("concurrency-latency", "beside slow work", "(e) DiskCache: 1 KB set", [])
        ignored.add("alone", isFloor: true, samples: [1_000], latencies: [1_000])
        ignored.add("beside the work", isFloor: false, samples: [2_000], latencies: [90_000_000])
        let checks = Targets.evaluate([
            slow, ignored,
            comparison("disk-open", "10000 entries", "open + first get", [("raw sqlite3", 400_000),
                                                                          ("KVCache mixed", 1_500_000)]),
            comparison("disk-open", "100000 entries", "open + first get", [("raw sqlite3", 450_000),
                                                                           ("KVCache mixed", 21_000_000)]),
        ])
        let worst = try check(checks, "worst single read")
        #expect(worst.status == .notMet)  // 6 ms in (b); (e) is a set, not one of (a)-(d)
        #expect(worst.ratio == nil)
        #expect(worst.time == "6 ms")
        let open = try check(checks, "open + first get")
        #expect(open.name.contains("100,000 entries"))
        #expect(open.status == .notMet)
        #expect(open.time == "21 ms")
    }

    @Test func thePeerMustLoseEveryDiskWorkload() throws {
        let checks = Targets.evaluate([
            comparison("disk", "1 KB", "set", [("raw sqlite3", 1_000), ("KVCache mixed", 1_000),
                                               ("python-diskcache", 30_000)]),
            comparison("disk", "20 KB", "set", [("raw files", 1_000), ("KVCache mixed", 2_000),
                                                ("python-diskcache", 1_500)]),
        ])
        let peer = try check(checks, "every disk workload")
        #expect(peer.status == .notMet)
        #expect(peer.figure == "0.75×")
        #expect(peer.detail.contains("behind on 20 KB set"))
    }

    @Test func concurrencyScalingIsOneThreadOverTwo() throws {
        let checks = Targets.evaluate([
            comparison("concurrency", "1 KB", "disk get hit: DiskCache",
                       [("1 thread", 1_000), ("2 threads", 500), ("4 threads", 480)]),
        ])
        let scaling = try check(checks, "1 KB get-hit, 2 threads")
        #expect(scaling.status == .met)
        #expect(scaling.figure == "2.00×")
        #expect(try check(checks, "100 KB get-hit, 2 threads").status == .notMeasured)
    }

    @Test func theConsoleSummaryCountsWhatWasMeasured() {
        let text = Targets.render(Targets.evaluate([
            comparison("cache", "memory holds everything", "mix 90 % get", [("levels by hand", 1_000), ("Cache", 1_200)]),
        ]))
        #expect(text.hasPrefix("targets: 0 of 1 measured met (42 not measured in this run)"))
        #expect(text.contains("not met"))
    }

    /// A row of hit ratios: (policy, is KVCache, hits) out of 1,000 requests.
    func hitRatios(_ trace: String, _ capacity: Int, _ cells: [(String, Bool, Int)]) -> HitRatioRow {
        HitRatioRow(trace: trace, capacity: capacity, requests: 1_000, distinctKeys: 500,
                    hits: cells.map { (policy: $0.0, isKVCache: $0.1, isDefault: $0.1, hits: $0.2) })
    }

    @Test func hitRatioTargetsCompareKVCacheWithTheBestReferencePolicyOfEachRow() throws {
        let rows = [
            hitRatios("oltp", 1_000, [("KVCache MemoryCache (LRU)", true, 395), ("LRU", false, 395),
                                      ("S3-FIFO", false, 404)]),
            hitRatios("gli", 250, [("KVCache MemoryCache (LRU)", true, 150), ("LRU", false, 9),
                                   ("W-TinyLFU (1%)", false, 153)]),
        ]
        #expect(zip(rows[0].cells.map(\.gapToBest), [-0.9, -0.9, 0]).allSatisfy { abs($0 - $1) < 1e-9 })
        let checks = Targets.evaluate([], hitRatios: rows)
        let gap = try check(checks, "every trace and size, within 1.0 point")
        #expect(gap.status == .met)
        #expect(gap.figure == "-0.90 points")
        #expect(gap.detail.contains("2 of 2 trace × size rows within; largest gap oltp @ 1,000 entries"))
        let oltp = try check(checks, "oltp @ 1,000 entries hit ratio")
        #expect(oltp.status == .notMet)
        #expect(oltp.figure == "39.50 %")
        #expect(oltp.bound == "≥ 40.0 %")

        // More than a point behind in one row: not met.
        let behind = Targets.evaluate([], hitRatios: [rows[0], hitRatios("gli", 1_000, [
            ("KVCache MemoryCache (LRU)", true, 112), ("W-TinyLFU (1%)", false, 507),
        ])])
        #expect(try check(behind, "every trace and size").status == .notMet)
        #expect(try check(behind, "every trace and size").figure == "-39.50 points")
    }

    /// Issue 16: the remote level's targets from the `remote` suites.
    @Test func remoteTargetsReadRatiosRoundTripsAndPercentiles() throws {
        var trips = comparison("remote", RemoteBenchmark.batchGroup, "round trips per batch",
                               [("raw hiredis", 1), ("RedisLevel", 1), ("raw hiredis, 100 GETs", 100)])
        trips.unit = "round trips"
        var invalidation = comparison("remote", RemoteBenchmark.invalidationGroup, "invalidation", [])
        invalidation.add("raw hiredis", isFloor: true, samples: [30_000], latencies: [30_000, 60_000])
        invalidation.add("RedisLevel", isFloor: false, samples: [40_000], latencies: [40_000, 4_000_000])
        invalidation.add("Cache with RedisLevel", isFloor: false, samples: [50_000], latencies: [50_000, 9_000_000])
        // Each run's p99 as the samples: the median of runs is the figure.
        var memory = comparison("remote-down", RemoteBenchmark.hitsGroup, "memory hit p99 per run", [])
        memory.add("Redis up", isFloor: true, samples: [1_000, 900, 5_000])
        memory.add("Redis stopped (SIGSTOP)", isFloor: false, samples: [1_100, 1_000, 1_200])
        memory.add("Redis killed", isFloor: false, samples: [2_000, 1_800, 2_100])
        let checks = Targets.evaluate([
            comparison("remote", "1 KB", "get", [("raw hiredis", 20_000), ("RedisLevel", 23_000)]),
            comparison("remote", "100 KB", "get", [("raw hiredis", 100_000), ("RedisLevel", 125_000)]),
            trips, invalidation, memory,
        ])
        let small = try check(checks, "1 KB get, RedisLevel ÷ raw hiredis GET")
        #expect(small.status == .met)
        #expect(small.figure == "1.15×")
        #expect(try check(checks, "100 KB get, RedisLevel").status == .notMet)
        let batch = try check(checks, "batch of 100 gets")
        #expect(batch.status == .met)
        #expect(batch.figure == "1 round trip")
        #expect(batch.detail.contains("raw hiredis, 100 GETs 100"))
        let level = try check(checks, "invalidation p99 to another process, RedisLevel")
        #expect(level.status == .met)
        #expect(level.bound == "< 5 ms")
        let cache = try check(checks, "invalidation p99 to another process, Cache with RedisLevel")
        #expect(cache.status == .notMet)
        #expect(cache.detail.contains("raw hiredis p50"))
        // Medians of the runs' p99: 1 µs up, 1.1 µs stopped, 2 µs killed (the worse one counts).
        let hits = try check(checks, "memory hit p99 while Redis is stopped or killed")
        #expect(hits.status == .notMet)
        #expect(hits.figure == "2.00×")
        #expect(try check(checks, "disk hit p99").status == .notMeasured)

        var twoTrips = trips
        twoTrips.rows[1].nanosecondsPerOperation = Summary([2])
        #expect(try check(Targets.evaluate([twoTrips]), "batch of 100 gets").status == .notMet)
    }

    @Test func commandStatsAreParsedFromInfo() {
        let info = "# Commandstats\r\ncmdstat_get:calls=1200,usec=900,usec_per_call=0.75,rejected_calls=0,failed_calls=0\r\n"
            + "cmdstat_MGET:calls=12,usec=80,usec_per_call=6.67\r\ncmdstat_info:calls=3,usec=1\r\n"
        #expect(RawRedis.parseCommandStats(info) == ["get": 1_200, "mget": 12, "info": 3])
        #expect(RawRedis.parseCommandStats("") == [:])
    }
}
