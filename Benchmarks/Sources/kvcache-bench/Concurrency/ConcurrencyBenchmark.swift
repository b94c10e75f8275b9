import Dispatch
import Foundation
import KVCache

/// How reads fare with many callers (issue #13): disk get-hit throughput with 1, 2
/// and 4 threads as a ratio to 1 thread measured in the same run, and the latency
/// of single reads while slow work runs beside them. Printed as its own tables, and
/// recorded in the report (suites "concurrency" and "concurrency-latency").
struct ConcurrencyBenchmark {
    var options: CommonOptions
    var workspace: Workspace
    var report: Report

    var readsPerThread: Int { options.quick ? 2_000 : 40_000 }
    var keyCount: Int { options.quick ? 1_000 : 10_000 }

    func run() throws {
        Output.print("## Concurrency\n")
        Progress.log("concurrency: disk get hits, 1 KB values, 1, 2 and 4 threads")
        try throughput(valueSize: 1_024, label: "1 KB")
        Progress.log("concurrency: disk get hits, 100 KB values, 1, 2 and 4 threads")
        try throughput(valueSize: 100 * 1_024, label: "100 KB")
        Output.print("")
        Progress.log("concurrency: single reads beside slow work")
        try readsBesideSlowWork()
    }

    // MARK: Throughput

    private func throughput(valueSize: Int, label: String) throws {
        let directory = try workspace.makeDirectory("concurrency-\(valueSize)")
        defer { workspace.remove(directory) }
        var configuration = DiskCache.Configuration()
        configuration.autoTrimInterval = nil
        let cache = try DiskCache(directory: directory, configuration: configuration)
        defer { try? cache.close() }
        let keys = min(keyCount, valueSize > 10_000 ? 2_000 : keyCount)
        let value = Data((0..<valueSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for index in 0..<keys { try cache.setValue(value, forKey: "k\(index)") }
        try cache.flush()
        let reads = readsPerThread / (valueSize > 10_000 ? 8 : 1)
        let threadCounts = [1, 2, 4]
        var rows: [(name: String, rates: [Double])] = []
        var runs: [(name: String, samples: [[Double]])] = []
        func measure(_ name: String, _ read: @escaping @Sendable (Int, inout SplitMix64) -> Bool) {
            let samples = threadCounts.map { rates(threads: $0, reads: reads, read) }
            rows.append((name, samples.map { $0.sorted()[$0.count / 2] }))
            runs.append((name, samples))
        }
        measure("DiskCache") { _, random in
            (try? cache.value(forKey: "k\(random.next() % UInt64(keys))")) != nil
        }
        // The floors, in the same process (SQLite's memory statistics off, as KVCache
        // sets them): a table of the same rows and page size, a connection per thread.
        if valueSize <= 10_000 {
            let floor = try RawReadFloor(directory: directory, keys: keys, value: value,
                                         connections: threadCounts.max()!)
            for keepsTransaction in [false, true] {
                measure(keepsTransaction ? "raw SELECT, one read transaction" : "raw SELECT, a transaction each") {
                    worker, random in
                    floor.read(worker: worker, key: "k\(random.next() % UInt64(keys))",
                               keepsTransaction: keepsTransaction)
                }
            }
        }
        let peer = options.noPeer ? nil : DiskcacheReadScaling.run(
            directory: try workspace.makeDirectory("concurrency-peer-\(valueSize)"),
            valueSize: valueSize, keys: keys, reads: reads, runs: options.runCount)
        Output.print("Disk get hit, \(label), \(keys) keys (median of \(options.runCount) runs; "
            + "ratios to 1 thread of the same row)")
        Output.print("  " + "reader".padding(toLength: 36, withPad: " ", startingAt: 0)
            + "1 thread/s   2 threads/s  4 threads/s  | ×1: 2 threads  4 threads")
        for row in rows {
            Output.print("  " + row.name.padding(toLength: 36, withPad: " ", startingAt: 0) + String(
                format: "%-11.0f  %-11.0f  %-11.0f  |     %.2f       %.2f",
                row.rates[0], row.rates[1], row.rates[2], row.rates[1] / row.rates[0], row.rates[2] / row.rates[0]))
        }
        switch peer {
        case .success(let peer):
            Output.print("  " + "python-diskcache \(peer.version), processes".padding(toLength: 36, withPad: " ",
                                                                                     startingAt: 0)
                + String(format: "%-11.0f  %-11.0f  -            |     %.2f", peer.oneProcess, peer.twoProcesses,
                         peer.twoProcesses / peer.oneProcess))
        case .failure(let reason):
            Output.print("  (\(reason))")
        case nil:
            break
        }
        if let single = rows.first?.rates.first, rows.count > 1 {
            Output.print(String(format: "  DiskCache 1 thread ÷ raw SELECT with a transaction each, 1 thread: %.2f",
                                single / rows[1].rates[0]))
        }
        // In the report: nanoseconds of wall time per read, all threads together, against
        // the same reader's 1 thread (a ratio of 0.5 is twice the 1-thread throughput).
        for (name, samples) in runs {
            var comparison = Comparison(suite: "concurrency", group: label, workload: "disk get hit: \(name)",
                                        operationsPerRun: reads)
            comparison.valueSize = valueSize
            comparison.notes.append("ns of wall time per read over all threads; the floor is 1 thread of the "
                + "same reader, so 0.5 means twice its throughput")
            var set = SampleSet()
            for (index, threads) in threadCounts.enumerated() {
                for rate in samples[index] {
                    set.record("\(threads) thread\(threads == 1 ? "" : "s")", isFloor: threads == 1,
                               perOperation: 1e9 / rate, operations: reads * threads)
                }
            }
            set.fill(&comparison)
            report.add(comparison, printing: false)
        }
        if case .success(let peer) = peer {
            var comparison = Comparison(suite: "concurrency", group: label,
                                        workload: "disk get hit: python-diskcache \(peer.version) (peer)",
                                        operationsPerRun: reads)
            comparison.valueSize = valueSize
            comparison.notes.append("processes instead of threads; medians only")
            comparison.add("1 process", isFloor: true, samples: [1e9 / peer.oneProcess])
            comparison.add("2 processes", isFloor: false, samples: [1e9 / peer.twoProcesses])
            report.add(comparison, printing: false)
        }
    }

    /// Reads per second of each run with `threads` threads, each doing `reads` calls of
    /// `read` (which returns whether it hit).
    private func rates(threads: Int, reads: Int,
                       _ read: @escaping @Sendable (Int, inout SplitMix64) -> Bool) -> [Double] {
        var samples: [Double] = []
        for _ in 0..<options.runCount {
            let outcome = ParallelRunner.run(threads: threads) { worker, _ in
                var random = SplitMix64(seed: UInt64(worker + 1))
                var hits = 0
                for _ in 0..<reads where read(worker, &random) { hits += 1 }
                return hits
            }
            samples.append(Double(reads * threads) / (Double(outcome.nanoseconds) / 1e9))
        }
        return samples
    }

    // MARK: Reads beside slow work

    /// Reads key A in a loop on one thread while `work` runs on another; reports
    /// the latency of those reads and of the same loop with nothing beside it.
    private func readLatency(_ read: @escaping @Sendable () -> Void,
                             beside work: @escaping @Sendable () -> Void) -> (idle: [UInt64], busy: [UInt64]) {
        func sample(while isRunning: @Sendable () -> Bool, atLeast minimum: Int) -> [UInt64] {
            var latencies: [UInt64] = []
            while isRunning() || latencies.count < minimum {
                let start = Clock.now()
                read()
                latencies.append(Clock.now() - start)
                if latencies.count >= 200_000 { break }
            }
            return latencies
        }
        let idle = sample(while: { false }, atLeast: 2_000)
        let running = MutexFlag(true)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            started.signal()
            work()
            running.set(false)
        }
        thread.start()
        started.wait()
        let busy = sample(while: { running.value }, atLeast: 1)
        while running.value { usleep(1_000) }  // the work's own end, not a timing
        return (idle, busy)
    }

    private func readsBesideSlowWork() throws {
        Output.print("Single reads (rows e, f: sets) of another key while slow work runs (µs; \"idle\": the same calls alone)")
        Output.print("  scenario                                          idle p50  p99      max      | busy p50  p99      p999     max      calls")
        func line(_ name: String, _ result: (idle: [UInt64], busy: [UInt64])) {
            guard let idle = Latency(result.idle), let busy = Latency(result.busy) else { return }
            // In the report: the same calls alone are the floor.
            var comparison = Comparison(suite: "concurrency-latency", group: "beside slow work", workload: name,
                                        operationsPerRun: busy.samples)
            comparison.add("alone", isFloor: true, samples: [idle.p50], latencies: result.idle)
            comparison.add("beside the work", isFloor: false, samples: [busy.p50], latencies: result.busy)
            comparison.notes.append("figures are single-call latencies (ns); the medians are p50")
            report.add(comparison, printing: false)
            Output.print("  " + name.padding(toLength: 48, withPad: " ", startingAt: 0) + String(
                format: "  %-8.1f  %-8.1f %-8.1f | %-8.1f  %-8.1f %-8.1f %-8.1f %d", idle.p50 / 1e3, idle.p99 / 1e3,
                                idle.max / 1e3, busy.p50 / 1e3, busy.p99 / 1e3, busy.p999 / 1e3, busy.max / 1e3,
                                busy.samples))
        }
        let big = options.quick ? 16 << 20 : 256 << 20

        // (a) The facade: a disk hit of A while B's large value is set.
        do {
            let directory = try workspace.makeDirectory("concurrency-facade")
            defer { workspace.remove(directory) }
            var configuration = KVCache.Cache<Data>.Configuration()
            configuration.disk.autoTrimInterval = nil
            let cache = try KVCache.Cache<Data>(directory: directory, configuration: configuration)
            try cache.setValue(Data(count: 1_024), forKey: "A")
            let large = Data(count: big)
            line("(a) Cache: disk hit of A, B's \(big >> 20) MiB set", readLatency({
                cache.memory.removeValue(forKey: "A")
                _ = try? cache.value(forKey: "A")
            }, beside: {
                try? cache.setValue(large, forKey: "B")
            }))
            try cache.close()
        }

        // (b)-(e) The disk level, then the facade over it.
        let entries = options.quick ? 5_000 : 100_000
        do {
            let directory = try workspace.makeDirectory("concurrency-disk")
            defer { workspace.remove(directory) }
            var configuration = DiskCache.Configuration()
            configuration.autoTrimInterval = nil
            configuration.busyTimeout = .seconds(10)
            let cache = try DiskCache(directory: directory, configuration: configuration)
            defer { try? cache.close() }
            try cache.setValue(Data(count: 1_024), forKey: "A")
            for index in 0..<entries { try cache.setValue(Data(count: 100), forKey: "e\(index)") }
            try cache.flush()
            try slowWorkScenarios(level: "DiskCache", directory: directory, entries: entries, line: line,
                                  read: { _ = try? cache.value(forKey: "A") },
                                  set: { try? cache.setValue($1, forKey: $0) },
                                  flush: { try? cache.flush(durability: $0) },
                                  verify: { _ = try? cache.verify(orphanGracePeriod: .seconds(0)) },
                                  trim: {
                                      try? cache.setValue(Data(count: 1_024), forKey: "t")
                                      _ = try? cache.trim(toCount: entries + 10)
                                  },
                                  trimHalf: { _ = try? cache.trim(toCount: entries / 2) })
        }
        do {
            let directory = try workspace.makeDirectory("concurrency-facade-disk")
            defer { workspace.remove(directory) }
            var configuration = KVCache.Cache<Data>.Configuration()
            configuration.disk.autoTrimInterval = nil
            configuration.disk.busyTimeout = .seconds(10)
            let cache = try KVCache.Cache<Data>(directory: directory, configuration: configuration)
            defer { try? cache.close() }
            try cache.setValue(Data(count: 1_024), forKey: "A")
            for index in 0..<entries { try cache.disk.setValue(Data(count: 100), forKey: "e\(index)") }
            try cache.flush()
            try slowWorkScenarios(level: "Cache", directory: directory, entries: entries, line: line,
                                  read: {
                                      cache.memory.removeValue(forKey: "A")
                                      _ = try? cache.value(forKey: "A")
                                  },
                                  set: { try? cache.setValue($1, forKey: $0) },
                                  flush: { _ in try? cache.flush() },
                                  verify: { _ = try? cache.disk.verify(orphanGracePeriod: .seconds(0)) },
                                  trim: {
                                      try? cache.disk.setValue(Data(count: 1_024), forKey: "t")
                                      _ = try? cache.disk.trim(toCount: entries + 10)
                                  },
                                  trimHalf: { _ = try? cache.disk.trim(toCount: entries / 2) })
        }
    }

    /// (b)-(f) for one level: `read` is a disk hit of A, `set` stores a value, `trim`
    /// sets a value on the disk level and trims (removing nothing: it waits to commit),
    /// `trimHalf` trims away half the entries (last: the store is smaller afterwards).
    private func slowWorkScenarios(level: String, directory: URL, entries: Int,
                                   line: (String, (idle: [UInt64], busy: [UInt64])) -> Void,
                                   read: @escaping @Sendable () -> Void,
                                   set: @escaping @Sendable (String, Data) -> Void,
                                   flush: @escaping @Sendable (DiskCache.Durability) -> Void,
                                   verify: @escaping @Sendable () -> Void,
                                   trim: @escaping @Sendable () -> Void,
                                   trimHalf: @escaping @Sendable () -> Void) throws {
        let megabyte = Data(count: 1 << 20)
        let rounds = options.quick ? 20 : 200
        line("(b) \(level): 1 MB sets + flush in a loop", readLatency(read, beside: {
            for index in 0..<rounds {
                set("m\(index % 20)", megabyte)
                if index % 4 == 3 { flush(.synced) }
            }
        }))
        line("(c) \(level): verify of \(entries) entries", readLatency(read, beside: verify))
        // (d) Another connection holds the write lock for a second while this process
        // commits a write (a flush): the commit waits in SQLite's busy handler.
        let manifest = directory.appendingPathComponent("manifest.sqlite").path
        let hold = options.quick ? 200_000 : 1_000_000
        func holdingTheWriteLock(_ work: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
            {
                // The lock must be held for the row to mean anything: wait for it if a
                // commit of this process has it.
                guard let other = try? SQLiteDatabase(path: manifest),
                      (try? other.execute("PRAGMA busy_timeout = 10000")) != nil,
                      (try? other.execute("BEGIN IMMEDIATE")) != nil else {
                    Output.print("  (could not take the write lock: the next row is not valid)")
                    return
                }
                let holder = Thread { [other = UncheckedBox(other)] in
                    usleep(useconds_t(hold))  // the other process's work, held on purpose
                    try? other.value.execute("COMMIT")
                }
                holder.start()
                work()
            }
        }
        line("(d) \(level): flush while another holds the lock \(hold / 1_000) ms", readLatency(read, beside:
            holdingTheWriteLock {
                set("d", Data(count: 100))
                flush(.committed)
            }))
        // (e) A writer beside the same wait: 1 KB sets of another key while a trim waits.
        let small = Data(count: 1_024)
        line("(e) \(level): 1 KB set while a trim waits \(hold / 1_000) ms", readLatency({ set("s", small) },
            beside: holdingTheWriteLock(trim)))
        // (f) A writer beside a trim that removes rows: each trim step's DELETE (up to
        // 4,096 rows) commits on the store's connection under the store's lock.
        line("(f) \(level): 1 KB set during a trim of \(entries - entries / 2)", readLatency({ set("s", small) },
            beside: trimHalf))
    }
}

/// Hands a value to another thread that alone uses it from then on.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A flag read by one thread and set by another.
private final class MutexFlag: @unchecked Sendable {
    private let mutex = PthreadMutex()
    private var flag: Bool
    init(_ flag: Bool) { self.flag = flag }
    var value: Bool { mutex.withLock { flag } }
    func set(_ newValue: Bool) { mutex.withLock { flag = newValue } }
}

