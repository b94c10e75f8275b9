import KVCacheTestSupport
import Dispatch
import Foundation
import KVCache

/// One of several processes sharing a cache directory, with `threads` threads
/// doing mixed operations for a bounded time: sets of its own keys (inline and
/// file), sets of keys shared by every process, removes, checked reads of any
/// process's keys, flushes; with `chaos`, thread 0 also trims and removes all
/// during the first 60% of the run.
///
/// Protocol: `ready`; `C <start ns> <end ns>` for each trim or removeAll (monotonic
/// clock, shared by all processes); at the end, after a last flush, `K <key> <seq>`
/// (or `K <key> - <ns>` when removed) with the monotonic start time of that last
/// write, then `D <operations> <errors>`. Errors print `E <message>`.
struct MultiWriter {
    static let ownKeys = 12
    static let sharedKeys = 16
    static let processesSeen = 4

    let directory: URL
    let id: Int
    let threads: Int
    let milliseconds: Int
    let seed: UInt64
    let chaos: Bool

    func run() -> Never {
        let cache = openCacheAndReport(at: directory)
        let start = monotonicNanoseconds()
        let end = start + UInt64(milliseconds) * 1_000_000
        let chaosEnd = start + UInt64(milliseconds) * 600_000
        let totals = Totals()
        let group = DispatchGroup()
        for thread in 0..<threads {
            let work = ThreadWork(cache: cache, process: id, thread: thread, threads: threads,
                                  seed: seed &+ UInt64(thread) &* 7919, end: end,
                                  chaosEnd: chaos && thread == 0 ? chaosEnd : nil)
            group.enter()
            Thread {
                let (operations, errors) = work.run()
                totals.add(operations: operations, errors: errors)
                group.leave()
            }.start()
        }
        group.wait()
        try? cache.close()
        let (operations, errors) = totals.value
        WorkerOutput.line("D \(operations) \(errors)")
        exit(errors == 0 ? 0 : 4)
    }
}

/// Operation and error counts of all threads.
private final class Totals: @unchecked Sendable {
    private let lock = NSLock()
    private var operations = 0
    private var errors = 0

    func add(operations: Int, errors: Int) {
        lock.lock()
        self.operations += operations
        self.errors += errors
        lock.unlock()
    }

    var value: (Int, Int) {
        lock.lock()
        defer { lock.unlock() }
        return (operations, errors)
    }
}

private struct ThreadWork: Sendable {
    let cache: DiskCache
    let process: Int
    let thread: Int
    let threads: Int
    let seed: UInt64
    let end: UInt64
    let chaosEnd: UInt64?

    func run() -> (operations: Int, errors: Int) {
        var random = SeededGenerator(seed: seed)
        // Own keys: last sequence number (nil = removed) and when that write started.
        var last: [String: (seq: UInt64?, started: UInt64)] = [:]
        var counter: UInt64 = 0
        var operations = 0
        var errors = 0
        func nextSeq() -> UInt64 {
            counter += 1
            return UInt64(process) << 40 | UInt64(thread) << 32 | counter
        }
        func report(_ error: Error, _ what: String) {
            errors += 1
            WorkerOutput.line("E \(what): \(error)".replacingNewlines())
        }
        while monotonicNanoseconds() < end {
            operations += 1
            let own = "p\(process)t\(thread)k\(Int.random(in: 0..<MultiWriter.ownKeys, using: &random))"
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case 0..<35:
                    let seq = nextSeq()
                    let size = Bool.random(using: &random)
                        ? Int.random(in: CheckedValue.minimumSize(forKey: own)...3000, using: &random)
                        : Int.random(in: 20 * 1024...60_000, using: &random)
                    let started = monotonicNanoseconds()
                    try cache.setValue(CheckedValue.make(key: own, seq: seq, size: size), forKey: own)
                    last[own] = (seq, started)
                case 35..<50:
                    let key = "s\(Int.random(in: 0..<MultiWriter.sharedKeys, using: &random))"
                    let size = Int.random(in: CheckedValue.minimumSize(forKey: key)...30_000, using: &random)
                    try cache.setValue(CheckedValue.make(key: key, seq: nextSeq(), size: size), forKey: key)
                case 50..<55:
                    let started = monotonicNanoseconds()
                    try cache.removeValue(forKey: own)
                    last[own] = (nil, started)
                case 55..<92:
                    let key: String
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: key = own
                    case 1: key = "s\(Int.random(in: 0..<MultiWriter.sharedKeys, using: &random))"
                    default:
                        key = "p\(Int.random(in: 0..<MultiWriter.processesSeen, using: &random))"
                            + "t\(Int.random(in: 0..<threads, using: &random))"
                            + "k\(Int.random(in: 0..<MultiWriter.ownKeys, using: &random))"
                    }
                    if let data = try cache.value(forKey: key), CheckedValue.seq(of: data, key: key) == nil {
                        errors += 1
                        WorkerOutput.line("E damaged value read for \(key): \(data.count) bytes")
                    }
                case 92..<97:
                    try cache.flush()
                default:
                    guard let chaosEnd, monotonicNanoseconds() < chaosEnd else { continue }
                    let started = monotonicNanoseconds()
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: try cache.removeAll()
                    case 1: _ = try cache.sweepOrphans()
                    case 2: _ = try cache.keys(after: nil, limit: 100)
                    default: try cache.trim(toCount: 60)
                    }
                    WorkerOutput.line("C \(started) \(monotonicNanoseconds())")
                }
            } catch {
                report(error, "operation \(roll)")
            }
        }
        do {
            try cache.flush()
        } catch {
            report(error, "final flush")
        }
        for (key, entry) in last.sorted(by: { $0.key < $1.key }) {
            WorkerOutput.line("K \(key) \(entry.seq.map(String.init) ?? "-") \(entry.started)")
        }
        return (operations, errors)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
