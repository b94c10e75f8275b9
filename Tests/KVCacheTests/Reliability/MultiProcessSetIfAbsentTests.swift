import Foundation
import KVCacheTestSupport
import Testing
@testable import KVCache

/// `setValueIfAbsent` raced by real processes on one directory (the test worker's
/// `add-racer`): 2 processes x 2 threads offer a value of their own for every key, all
/// starting together. Exactly one caller stores each key, its value is the one stored,
/// and each process reads back the winner's value (through the facade, its memory level
/// holds no value of its own for a key it lost).
@Suite(.blockingOnItsOwnThread, .serialized) struct MultiProcessSetIfAbsentTests {
    /// Keys raced per run: enough for the processes to collide on many keys (atomic within one
    /// process only, 2,000 keys had hundreds stored twice), few enough for a few seconds.
    /// `KVCACHE_ADD_RACE_KEYS` overrides it (issue 38 used 20,000).
    static let keys = ProcessInfo.processInfo.environment["KVCACHE_ADD_RACE_KEYS"].flatMap(Int.init)
        ?? (Reliability.isLong ? 20_000 : 2_000)

    struct Outcome {
        /// Keys stored by more than one caller, and by none.
        var storedTwice = 0
        var storedByNone = 0
        /// Keys whose stored value is not their winner's.
        var wrongValues = 0
        /// Keys each process won.
        var won: [Int] = []
    }

    func race(level: String, processes: Int = 2, threads: Int = 2, keys: Int = keys) throws -> Outcome {
        let dir = TemporaryDirectory("add-race")
        defer { dir.remove() }
        try DiskCache(directory: dir.url, configuration: .testing()).close()
        let children = try (0..<processes).map { id in
            try ChildProcess(worker: ["add-racer", dir.path, String(id), String(threads), String(keys), level],
                             takesInput: true)
        }
        for (id, child) in children.enumerated() {
            let line = child.readLine(until: { $0 == "ready" || $0.hasPrefix("E ") })
            try #require(line == "ready", "process \(id): \(line ?? "exited")")
        }
        for child in children { child.send("go") }
        var winners = Array(repeating: [(process: Int, thread: Int)](), count: keys)
        var outcome = Outcome()
        for (id, child) in children.enumerated() {
            var errors: [String] = []
            var won: Int?
            while let line = child.readLine() {
                let parts = line.split(separator: " ")
                switch parts.first {
                case "W": winners[Int(parts[1])!].append((id, Int(parts[2])!))
                case "D": won = Int(parts[1])!
                case "E": errors.append(line)
                default: break
                }
            }
            let status = child.wait()
            #expect(errors.isEmpty, "process \(id) (\(level)): \(errors.count) errors: \(errors.prefix(5))")
            #expect(status == 0 && won != nil, "process \(id) ended with status \(status)")
            outcome.won.append(won ?? 0)
        }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for (index, callers) in winners.enumerated() {
            if callers.count > 1 { outcome.storedTwice += 1 }
            if callers.isEmpty { outcome.storedByNone += 1 }
            let stored = try cache.value(forKey: AddRace.key(index)).flatMap { AddRace.writer(of: $0, forKey: index) }
            if callers.count == 1, stored == nil || stored! != callers[0] { outcome.wrongValues += 1 }
        }
        try cache.close()
        // The losers' files are gone; the stats row matches the rows.
        let problems = try storeProblems(dir)
        #expect(problems.isEmpty, "\(problems)")
        let summary = "\(level): of \(keys) keys, \(outcome.storedTwice) stored by more than one caller, "
            + "\(outcome.storedByNone) by none, \(outcome.wrongValues) hold another value than their winner's"
        #expect(outcome.storedTwice == 0 && outcome.storedByNone == 0 && outcome.wrongValues == 0, "\(summary)")
        Reliability.report("setValueIfAbsent raced through \(level) by \(processes) processes x \(threads) threads "
            + "over \(keys) keys: won \(outcome.won), \(outcome.storedTwice) stored twice")
        return outcome
    }

    @Test func everyKeyHasOneWinnerThroughTheDiskLevel() throws {
        _ = try race(level: "disk")
    }

    @Test func everyKeyHasOneWinnerThroughTheFacade() throws {
        _ = try race(level: "cache")
    }
}
