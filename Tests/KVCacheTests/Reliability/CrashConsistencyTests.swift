import KVCacheTestSupport
import Foundation
import Testing
@testable import KVCache

/// A real child process writes in a loop and is killed with SIGKILL at random
/// moments; after each kill the parent reopens the directory and checks that
/// every key holds an intact value that was written for it, or nothing; that
/// values flushed before the kill are there; and that the store has no stray
/// files, a correct stats row and a sound database. 50 cycles by default, 500
/// with KVCACHE_LONG_TESTS=1.
@Suite(.blockingOnItsOwnThread) struct CrashConsistencyTests {
    @Test func killedWritersNeverLeaveTornValuesOrLoseFlushedOnes() throws {
        let seed = Reliability.seed(default: 0x5eed_c4a5)
        let cycles = Reliability.isLong ? 500 : 50
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var random = SeededGenerator(seed: seed)
        var model = CrashModel()
        var totals = (operations: 0, flushes: 0, protected: 0, killedBeforeReady: 0)
        for cycle in 0..<cycles {
            let child = try ChildProcess(worker: ["crash-writer", dir.path, String(random.next() >> 1),
                                                  String(model.nextSeq)])
            var errors: [String] = []
            let feed: (String) -> Void = { line in
                if line.hasPrefix("E ") { errors.append(line) } else { model.apply(line) }
            }
            if Int.random(in: 0..<10, using: &random) == 0 {
                // Sometimes during start-up or open.
                usleep(UInt32.random(in: 0...40_000, using: &random))
                totals.killedBeforeReady += 1
            } else {
                var intents = Int.random(in: 1...400, using: &random)
                _ = child.readLine(until: { line in
                    if line.hasPrefix("w ") { intents -= 1 }
                    return intents <= 0 || line.hasPrefix("E ")
                }, seen: feed)
                usleep(UInt32.random(in: 0...3_000, using: &random))
            }
            child.kill()
            while let line = child.readLine() { feed(line) }
            let status = child.wait()
            #expect(errors.isEmpty, "cycle \(cycle) (seed \(seed)): the child failed: \(errors)")
            #expect(status == 128 + SIGKILL, "cycle \(cycle): the child ended with \(status) before it was killed")
            totals.operations += model.operationsThisCycle
            totals.flushes += model.flushesThisCycle

            let cache = try DiskCache(directory: dir.url, configuration: .testing())
            _ = try cache.sweepOrphans(gracePeriod: .seconds(0))
            cache.waitForBackgroundWork()
            var observed: [String: UInt64?] = [:]
            for key in CrashModel.keys {
                let data = try cache.value(forKey: key)
                let seq = data.flatMap { CheckedValue.seq(of: $0, key: key) }
                if let data, seq == nil {
                    Issue.record("cycle \(cycle) (seed \(seed)): torn or foreign value for \(key), \(data.count) bytes")
                    continue
                }
                if let problem = model.check(key: key, seq: seq) {
                    Issue.record("cycle \(cycle) (seed \(seed)): \(problem)")
                }
                observed[key] = seq
            }
            totals.protected += model.protectedKeys
            #expect(cache.statistics.brokenEntries == 0, "cycle \(cycle): rows whose file was missing or short")
            #expect(cache.statistics.rebuilds == 0, "cycle \(cycle): the manifest was found corrupt")
            try cache.close()
            let problems = try storeProblems(dir)
            #expect(problems.isEmpty, "cycle \(cycle) (seed \(seed)): \(problems)")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/trash"))?.isEmpty ?? true, "\((try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/trash")) ?? [])")
            model.restart(from: observed)
            if !errors.isEmpty || !problems.isEmpty { break }
        }
        Reliability.report("crash: \(cycles) cycles, \(totals.operations) mutations logged, \(totals.flushes) flushes, "
            + "\(totals.protected) flushed values checked present, \(totals.killedBeforeReady) kills during start-up, seed \(seed)")
    }
}

/// What the parent knows from the child's log: every value that may exist (the
/// intents) and, per key, the last operation before the last flush (the floor a
/// crash cannot go below).
struct CrashModel {
    static let keys = (0..<48).map { "k\($0)" }

    enum Operation { case set, remove }

    /// Sequence numbers of every set attempted per key.
    var possible: [String: Set<UInt64>] = [:]
    /// Last attempted operation per key.
    var last: [String: (seq: UInt64, operation: Operation)] = [:]
    /// The last operation per key when the latest flush returned.
    var floor: [String: (seq: UInt64, operation: Operation)] = [:]
    /// Latest trim or removeAll attempted (may remove any key).
    var lastVanish: UInt64 = 0
    var lastRemove: [String: UInt64] = [:]
    var maxSeq: UInt64 = 0
    var operationsThisCycle = 0
    var flushesThisCycle = 0
    var protectedKeys = 0

    var nextSeq: UInt64 { maxSeq + 1 }

    mutating func apply(_ line: String) {
        let parts = line.split(separator: " ").map(String.init)
        guard let seq = parts.count >= 2 ? UInt64(parts[1]) : nil else { return }
        maxSeq = max(maxSeq, seq)
        switch (parts[0], parts.count > 2 ? parts[2] : "") {
        case ("w", "S"):
            possible[parts[3], default: []].insert(seq)
            last[parts[3]] = (seq, .set)
        case ("w", "R"):
            last[parts[3]] = (seq, .remove)
            lastRemove[parts[3]] = seq
        case ("w", "T"):
            lastVanish = seq
        case ("w", "A"):
            lastVanish = seq
            for key in Self.keys { last[key] = (seq, .remove) }
        case ("F", _):
            floor = last
            flushesThisCycle += 1
        default:
            return
        }
        if parts[0] == "w" { operationsThisCycle += 1 }
    }

    /// Nil if `seq` (the intact value read for `key`, nil for none) is allowed.
    mutating func check(key: String, seq: UInt64?) -> String? {
        let floor = floor[key]
        guard let seq else {
            guard let floor, floor.operation == .set else { return nil }
            if lastVanish > floor.seq || (lastRemove[key] ?? 0) > floor.seq { return nil }
            return "\(key): the value \(floor.seq) was flushed and is gone"
        }
        guard possible[key]?.contains(seq) == true else { return "\(key): value \(seq) was never written for it" }
        if let floor, seq < floor.seq {
            return "\(key): value \(seq) is older than the flushed \(floor.operation) \(floor.seq)"
        }
        if floor?.operation == .set { protectedKeys += 1 }
        return nil
    }

    /// The state read after a reopen becomes the floor of the next cycle.
    mutating func restart(from observed: [String: UInt64?]) {
        possible = [:]
        last = [:]
        for key in Self.keys {
            if let seq = observed[key] ?? nil {
                possible[key] = [seq]
                last[key] = (seq, .set)
            } else {
                last[key] = (maxSeq, .remove)
            }
        }
        floor = last
        lastVanish = 0
        lastRemove = [:]
        maxSeq += 1
        operationsThisCycle = 0
        flushesThisCycle = 0
        protectedKeys = 0
    }
}
