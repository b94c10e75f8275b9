import Foundation
import Testing
@testable import kvcache_bench

/// How `kvcache-bench memory` times gets with several threads.
@Suite struct MemoryScalingTests {
    final class Counts: @unchecked Sendable {
        let mutex = PthreadMutex()
        var seen: [Int]
        init(count: Int) { seen = Array(repeating: 0, count: count) }
    }

    /// Workers that take chunks as they go take every position exactly once between them.
    @Test(arguments: [1, 2, 4])
    func sharedPositionsHandOutEveryPositionOnce(threads: Int) {
        let count = SharedPositions.chunk * 10 + 7
        let positions = SharedPositions(count: count)
        let counts = Counts(count: count)
        let outcome = ParallelRunner.run(threads: threads) { _, _ in
            var taken = 0
            while let chunk = positions.claim() {
                counts.mutex.withLock { for position in chunk { counts.seen[position] += 1 } }
                taken += chunk.count
            }
            return taken
        }
        #expect(outcome.total == count)
        #expect(counts.seen.allSatisfy { $0 == 1 })
        #expect(positions.claim() == nil)
    }

    /// Two workers sharing the positions look every key up once per pass.
    @Test func getLooksEveryKeyUpOncePerPass() {
        let data = MemoryWorkloadData(keyCount: 1_000)
        let cache = DictionaryMutexStrategy(countLimit: nil)
        // Every third key present: a position looked up twice, or skipped, changes the hits.
        for index in stride(from: 0, to: data.keyCount, by: 3) { cache.setValue(SmallValue(index), forKey: data.keys[index]) }
        let keys = MemoryBenchmark.lookupKeys(DictionaryMutexStrategy.self, data.keys, threads: 2)
        let outcome = MemoryBenchmark.get(cache, keys: keys, threads: 2, passes: 3)
        #expect(outcome.total == (data.keyCount + 2) / 3 * 3)
    }

    /// Each round gives every subject a ratio; the ceiling's ratio over itself is 1.
    @Test func pairedScalingRecordsARatioPerRoundForEverySubject() throws {
        let report = Report.madeUp(quick: true)
        PairedScaling(rounds: 3, passes: 1).run(data: MemoryWorkloadData(keyCount: 2_000), into: report)
        for workload in ["get-hit uniform", "get-hit zipf0.9"] {
            let all = try #require(report.comparisons.first { $0.group == PairedScaling.group && $0.workload == workload })
            #expect(all.rows.map(\.strategy) == PairedScaling.subjects.map { $0.type.name })
            #expect(all.rows.allSatisfy { $0.samples.count == 3 && $0.samples.allSatisfy { $0 > 0 } })
            let relative = try #require(report.comparisons.first {
                $0.group == PairedScaling.relativeGroup && $0.workload == workload
            })
            #expect(relative.rows.last?.strategy == PairedScaling.ceiling)
            #expect(relative.rows.last?.samples == [1, 1, 1])
            // The quiet rounds are those where the ceiling reached the mark.
            let quietRounds = all.rows.last!.samples.filter { $0 >= PairedScaling.quietCeiling }.count
            let quiet = report.comparisons.first { $0.group == PairedScaling.quietGroup && $0.workload == workload }
            #expect((quiet?.rows.last?.samples.count ?? 0) == quietRounds)
        }
    }

    /// The convoy pairs (2 and 16 threads) give every subject a ratio per round, the
    /// striped Dictionary's included, and divide each by the striped Dictionary's.
    @Test func convoyPairsRecordSixteenOverTwoThreadsBesideTheStripedDictionary() throws {
        let report = Report.madeUp(quick: true)
        PairedScaling(rounds: 2, passes: 1, low: 2, high: 16).run(data: MemoryWorkloadData(keyCount: 2_000), into: report)
        for workload in [MemoryWorkload.getHitUniform, .getHitZipf, .mixedZipf] {
            let all = try #require(report.comparisons.first {
                $0.group == PairedScaling.convoyGroup && $0.workload == workload.rawValue
            })
            #expect(all.rows.contains { $0.strategy == PairedScaling.convoyReference })
            #expect(all.rows.allSatisfy { $0.samples.count == 2 && $0.samples.allSatisfy { $0 > 0 } })
            let relative = try #require(report.comparisons.first {
                $0.group == PairedScaling.convoyRelativeGroup && $0.workload == workload.rawValue
            })
            #expect(relative.rows.first { $0.strategy == PairedScaling.convoyReference }?.samples == [1, 1])
            // The 2 ÷ 1 groups are not these pairs'.
            #expect(!report.comparisons.contains { $0.group == PairedScaling.group })
        }
    }
}
