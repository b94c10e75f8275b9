import KVCacheTestSupport
import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Every kind of operation at once from several threads of one process — sets of
/// inline and file values, reads (checked), removes, trims, removeAll, orphan
/// sweeps with no grace period, key paging, totals, flushes — then the store at
/// rest must be sound: no stray file, no row without its file, stats equal to a
/// recount. Short, so CI can run it under ThreadSanitizer.
@Suite(.blockingOnItsOwnThread) struct ConcurrencyMixedOperationsTests {
    @Test func allOperationsAtOnceLeaveASoundStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.groupCommitDelay = .seconds(0.001)
            $0.inlineThreshold = 2_000
            $0.countLimit = 40  // background trims race with everything else too
        })
        let failures = MutexBox<[String]>([])
        let seed = Reliability.seed(default: 11)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            for step in 0..<1_000 {
                let key = "k\(Int.random(in: 0..<48, using: &random))"
                do {
                    switch Int.random(in: 0..<100, using: &random) {
                    case 0..<35:
                        let size = Bool.random(using: &random) ? 300 : 6_000
                        let seq = UInt64(thread) << 32 | UInt64(step)
                        try cache.setValue(CheckedValue.make(key: key, seq: seq, size: size), forKey: key)
                    case 35..<70:
                        if let data = try cache.value(forKey: key), CheckedValue.seq(of: data, key: key) == nil {
                            failures.withLock { $0.append("damaged value for \(key)") }
                        }
                    case 70..<80: try cache.removeValue(forKey: key)
                    case 80..<84: try cache.trim(toCount: 20)
                    case 84..<86: try cache.removeAll()
                    case 86..<90: _ = try cache.sweepOrphans(gracePeriod: .seconds(0))
                    case 90..<94: _ = try cache.keys(after: key, limit: 5)
                    case 94..<97: _ = try cache.totalSize
                    default: try cache.flush()
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        cache.waitForBackgroundWork()
        _ = try cache.sweepOrphans(gracePeriod: .seconds(0))
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(cache.statistics.brokenEntries == 0)
        try cache.close()
        let problems = try storeProblems(dir)
        #expect(problems.isEmpty, "\(problems)")
    }
}
