import Foundation
import Hummingbird
import HummingbirdTesting
import KVCache
import KVCacheHummingbird
#if canImport(Glibc)
import Glibc
#endif

/// `kvcache-bench persist`: one Hummingbird app served with KVCachePersistDriver and with
/// Hummingbird's MemoryPersistDriver, cached GETs of 1,000 keys through Hummingbird's test
/// client (the router, and a live server on loopback), the two drivers alternating within
/// each run; then a million distinct keys through a driver whose memory level is bounded.
struct PersistBenchmark: Sendable {
    static let subject = "KVCachePersistDriver"
    static let reference = "MemoryPersistDriver"
    static let suite = "persist"

    var scale: CommonOptions.Scale
    var runCount: Int
    var workspace: Workspace
    var keys: Int
    var distinctKeys: Int

    init(options: CommonOptions, workspace: Workspace, keys: Int, distinctKeys: Int) {
        scale = options.scale
        runCount = options.runCount
        self.workspace = workspace
        self.keys = keys
        self.distinctKeys = distinctKeys
    }

    static func group(keys: Int) -> String { "\(keys.formatted()) keys" }
    static func workload(_ transport: String) -> String { "cached GET (\(transport))" }
    static let memoryGroup = "distinct keys"
    static let memoryWorkload = "memory entries (most seen)"

    func run(into report: Report) throws {
        for comparison in try Self.blocking({ try await runGets() }) { report.add(comparison) }
        report.add(try Self.blocking { try await runDistinctKeys() })
    }

    // MARK: - Cached GETs

    func runGets() async throws -> [Comparison] {
        let directory = try workspace.makeDirectory("persist-gets")
        defer { workspace.remove(directory) }
        let kvcache = try KVCachePersistDriver(directory: directory)
        let memory = MemoryPersistDriver()
        // ~100-byte values, as a session or a rate-limit record.
        let padding = String(repeating: "x", count: 90)
        for index in 0..<keys {
            try await kvcache.set(key: "key-\(index)", value: "\(index)-\(padding)", expires: nil)
            try await memory.set(key: "key-\(index)", value: "\(index)-\(padding)", expires: nil)
        }
        let apps = [(Self.subject, Application(router: PersistBenchRoutes.router(kvcache))),
                    (Self.reference, Application(router: PersistBenchRoutes.router(memory)))]
        var comparisons: [Comparison] = []
        for (transport, setup, perRun) in [("router", TestingSetup.router, requests(router: true)),
                                           ("live", TestingSetup.live, requests(router: false))] {
            Progress.log("persist: cached GET (\(transport)), \(perRun) requests per run and driver, \(runCount) runs")
            let (samples, notes) = try await apps[0].1.test(setup) { first in
                try await apps[1].1.test(setup) { second in
                    try await measure(clients: [(apps[0].0, first), (apps[1].0, second)], requests: perRun)
                }
            }
            var comparison = Comparison(suite: Self.suite, group: Self.group(keys: keys),
                                        workload: Self.workload(transport), operationsPerRun: perRun)
            samples.fill(&comparison)
            comparison.notes.append("The same app and routes; values ~100 bytes, all cached; one request in flight.")
            comparison.notes += notes
            comparisons.append(comparison)
        }
        try await kvcache.shutdown()
        return comparisons
    }

    func requests(router: Bool) -> Int {
        switch scale {
        case .quick: return router ? 2_000 : 500
        case .summary, .standard: return router ? 50_000 : 10_000
        case .full: return router ? 200_000 : 40_000
        }
    }

    /// One untimed pass per driver, then `runCount` runs, each timing every driver once,
    /// the first driver of a run alternating.
    func measure(clients: [(String, any TestClientProtocol)], requests: Int) async throws -> (SampleSet, [String]) {
        var samples = SampleSet()
        for (_, client) in clients { try await getAll(client, requests: keys) }
        // How much the resident set grew during each driver's runs, to see leaks per request.
        var growth: [String: Int] = [:]
        for run in 0..<runCount {
            let order = run % 2 == 0 ? clients : clients.reversed()
            for (name, client) in order {
                let before = Self.residentBytes() ?? 0
                let start = Clock.now()
                try await getAll(client, requests: requests)
                samples.record(name, isFloor: name == Self.reference, nanoseconds: Clock.now() - start,
                               operations: requests)
                growth[name, default: 0] += (Self.residentBytes() ?? 0) - before
            }
        }
        let notes = clients.map { name, _ in
            "resident memory grew " + String(format: "%.1f", Double(growth[name] ?? 0) / 1_048_576) + " MiB during \(name)'s runs"
        }
        return (samples, notes)
    }

    func getAll(_ client: any TestClientProtocol, requests: Int) async throws {
        for index in 0..<requests {
            let response = try await client.executeRequest(uri: "/persist/key-\(index % keys)", method: .get,
                                                           headers: [:], body: nil)
            guard response.status == .ok else { throw PersistBenchError.unexpectedStatus(response.status.code) }
        }
    }

    // MARK: - A million distinct keys

    /// Sets `distinctKeys` distinct keys through a driver whose memory level holds at most
    /// 10,000 entries and 16 MiB, sampling the memory level's count as it goes.
    func runDistinctKeys() async throws -> Comparison {
        let directory = try workspace.makeDirectory("persist-distinct")
        defer { workspace.remove(directory) }
        let countLimit = 10_000
        var configuration = KVCachePersistDriver.defaultConfiguration
        configuration.memory.countLimit = countLimit
        configuration.memory.costLimit = 16 << 20
        configuration.disk.sizeLimit = 4 << 30
        let persist = try KVCachePersistDriver(directory: directory, configuration: configuration)
        let total = distinctKeys
        Progress.log("persist: \(total.formatted()) distinct keys, memory level limited to \(countLimit.formatted()) entries")
        let residentBefore = Self.residentBytes()
        let start = Clock.now()
        let tasks = 8
        let mostSeen = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var most = 0
                    var index = task
                    while index < total {
                        try await persist.set(key: "distinct-\(index)", value: index, expires: nil)
                        if index % 1_000 < tasks { most = max(most, persist.cache.memory.count) }
                        index += tasks
                    }
                    return most
                }
            }
            return try await group.reduce(0) { max($0, $1) }
        }
        let elapsed = Clock.now() - start
        let finalCount = persist.cache.memory.count
        let residentAfter = Self.residentBytes()
        let onDisk = try persist.cache.disk.totalCount
        try await persist.shutdown()

        var comparison = Comparison(suite: Self.suite, group: "\(total.formatted()) \(Self.memoryGroup)",
                                    workload: Self.memoryWorkload, operationsPerRun: total)
        comparison.unit = "entries"
        comparison.add("countLimit", isFloor: true, samples: [Double(countLimit)])
        comparison.add(Self.subject, isFloor: false, samples: [Double(max(mostSeen, finalCount))])
        comparison.notes.append(String(format: "%d sets in %.1f s; %d entries in memory at the end, %d on disk",
                                       total, Double(elapsed) / 1e9, finalCount, onDisk))
        if let residentBefore, let residentAfter {
            comparison.notes.append(String(format: "resident memory %.0f MiB before, %.0f MiB after",
                                           Double(residentBefore) / 1_048_576, Double(residentAfter) / 1_048_576))
        }
        return comparison
    }

    /// The process's resident set size (Linux: /proc/self/statm), or nil.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Runs async work from the synchronous command and waits for its result.
    static func blocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        let outcome = BlockingOutcome<Value>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let result: Result<Value, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.result.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.result.withLock { $0 }!.get()
    }
}
