import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import KVCache
import KVCacheHTTP

/// `kvcache-bench http`: the HTTP cache's own cost per request, with an origin that answers
/// in process, against a `Cache<Data>` doing the storage work that request needs at least,
/// and Foundation's `URLCache` (memory only) for the fresh hit; the fresh hit also through
/// `CachingHTTPClient`, the AsyncHTTPClient wrapper.
struct HTTPBenchmark: Sendable {
    static let suite = "http"
    static let bodySize = 1_024
    /// URLs cycled through (`KVCACHE_BENCH_HTTP_URLS` overrides it for profiling: a smaller
    /// set stays in the processor's caches).
    static let urls = ProcessInfo.processInfo.environment["KVCACHE_BENCH_HTTP_URLS"].flatMap { Int($0) }
        .map { max(1, $0) } ?? 1_000

    var scale: CommonOptions.Scale
    var runCount: Int
    var workspace: Workspace

    init(options: CommonOptions, workspace: Workspace) {
        scale = options.scale
        runCount = options.runCount
        self.workspace = workspace
    }

    var operations: Int {
        switch scale {
        case .quick: return 2_000
        case .summary, .standard: return 20_000
        case .full: return 100_000
        }
    }

    static var group: String { "1 KB responses, \(urls.formatted()) URL\(urls == 1 ? "" : "s")" }

    /// Narrowing for profiling one figure, from the environment:
    /// `KVCACHE_BENCH_HTTP_WORKLOADS=fresh,miss` (prefixes of the workloads' names).
    static func includes(_ workload: String,
                         environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        named(workload, isListedIn: "KVCACHE_BENCH_HTTP_WORKLOADS", environment: environment)
    }

    /// Narrowing the fresh hit's strategies, for counting one's instructions:
    /// `KVCACHE_BENCH_HTTP_STRATEGIES=CachingHTTPClient` (prefixes of their names).
    static func timesStrategy(_ strategy: String,
                              environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        named(strategy, isListedIn: "KVCACHE_BENCH_HTTP_STRATEGIES", environment: environment)
    }

    /// Whether `name` starts with one of the comma-separated prefixes in `variable` (true
    /// when the variable is not set).
    private static func named(_ name: String, isListedIn variable: String, environment: [String: String]) -> Bool {
        guard let list = environment[variable] else { return true }
        return list.split(separator: ",").contains { name.hasPrefix($0.trimmingCharacters(in: .whitespaces)) }
    }

    func run() throws -> [Comparison] {
        try PersistBenchmark.blocking { try await measure() }
    }

    /// The URL of request `index`, which the floors are stored under.
    static func url(_ index: Int) -> String { "http://origin.test/item/\(index)" }

    /// The fresh hit's floor key: the URL a user keys a response by, built per call from the
    /// request, as the HTTP cache builds its key. Both then read the same request, from the
    /// same array: the request's lines cost both the same.
    static func url(of request: HTTPRequest) -> String {
        "\(request.scheme ?? "")://\(request.authority ?? "")\(request.path ?? "")"
    }

    static func request(_ index: Int) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "http", authority: "origin.test", path: "/item/\(index)")
    }

    func measure() async throws -> [Comparison] {
        let directory = try workspace.makeDirectory("http")
        defer { workspace.remove(directory) }
        let body = Data(repeating: 0x61, count: Self.bodySize)
        let fresh: HTTPFields = [.cacheControl: "max-age=86400", .contentType: "application/octet-stream"]
        let validated: HTTPFields = [.cacheControl: "max-age=0", .eTag: "\"v1\""]
        let storage = try Cache(directory: directory.appendingPathComponent("http"), coder: HTTPCacheRecordCoder())
        let floor = try Cache<Data>(directory: directory.appendingPathComponent("floor"), coder: DataCoder())
        defer {
            try? storage.close()
            try? floor.close()
        }
        let http = try HTTPCache(storage: storage, configuration: .init(mode: .shared))
        // Its fresh hits never reach the network: the responses below are stored first.
        let client = try CachingHTTPClient(cache: http)
        let freshOrigin: HTTPCache.Transport = { _, _ in (HTTPResponse(status: .ok, headerFields: fresh), body) }
        let validatingOrigin: HTTPCache.Transport = { request, _ in
            request.headerFields[.ifNoneMatch] == "\"v1\""
                ? (HTTPResponse(status: .notModified, headerFields: validated), Data())
                : (HTTPResponse(status: .ok, headerFields: validated), body)
        }
        let urlCache = URLCache(memoryCapacity: 256 << 20, diskCapacity: 0, diskPath: nil)
        for index in 0..<Self.urls {
            _ = try await http.response(for: Self.request(index), transport: freshOrigin)
            _ = try await http.response(for: Self.request(Self.urls + index), transport: validatingOrigin)
            try await floor.setValue(body, forKey: Self.url(index))
            let url = URL(string: "http://origin.test/item/\(index)")!
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                           headerFields: ["Cache-Control": "max-age=86400"])!
            urlCache.storeCachedResponse(CachedURLResponse(response: response, data: body), for: URLRequest(url: url))
        }
        let requests = (0..<Self.urls).map(Self.request)
        let revalidations = (0..<Self.urls).map { Self.request(Self.urls + $0) }
        let urlRequests = (0..<Self.urls).map { URLRequest(url: URL(string: "http://origin.test/item/\($0)")!) }
        let count = operations
        Progress.log("http: \(count) requests per run and strategy, \(runCount) runs")

        var hits = SampleSet(), revalidated = SampleSet(), misses = SampleSet()
        var missBase = 2 * Self.urls
        let (timesHits, timesRevalidations, timesMisses) =
            (Self.includes("fresh hit"), Self.includes("revalidated hit"), Self.includes("miss, stored"))
        for _ in 0..<runCount {
            if timesHits {
                // The same get keyed from the index alone: a program that keeps no request.
                if Self.timesStrategy("Cache<Data> get (key from an index)") {
                    hits.record("Cache<Data> get (key from an index)", isFloor: false, nanoseconds: try await time(count) { index in
                        _ = try await floor.value(forKey: Self.url(index % Self.urls))
                    }, operations: count)
                }
                if Self.timesStrategy("Cache<Data> get (key from the request)") {
                    hits.record("Cache<Data> get (key from the request)", isFloor: true, nanoseconds: try await time(count) { index in
                        _ = try await floor.value(forKey: Self.url(of: requests[index % Self.urls]))
                    }, operations: count)
                }
                if Self.timesStrategy("HTTPCache") {
                    hits.record("HTTPCache", isFloor: false, nanoseconds: try await time(count) { index in
                        _ = try await http.response(for: requests[index % Self.urls], transport: freshOrigin)
                    }, operations: count)
                }
                if Self.timesStrategy("CachingHTTPClient") {
                    hits.record("CachingHTTPClient", isFloor: false, nanoseconds: try await time(count) { index in
                        _ = try await client.execute(requests[index % Self.urls])
                    }, operations: count)
                }
                if Self.timesStrategy("URLCache (memory)") {
                    hits.record("URLCache (memory)", isFloor: false, nanoseconds: try await time(count) { index in
                        _ = urlCache.cachedResponse(for: urlRequests[index % Self.urls])
                    }, operations: count)
                }
            }
            if timesRevalidations {
                revalidated.record("Cache<Data> get + set", isFloor: true, nanoseconds: try await time(count) { index in
                    let key = Self.url(index % Self.urls)
                    if let value = try await floor.value(forKey: key) { try await floor.setValue(value, forKey: key) }
                }, operations: count)
                revalidated.record("HTTPCache", isFloor: false, nanoseconds: try await time(count) { index in
                    _ = try await http.response(for: revalidations[index % Self.urls], transport: validatingOrigin)
                }, operations: count)
            }
            if timesMisses {
                let base = missBase
                misses.record("Cache<Data> get + set", isFloor: true, nanoseconds: try await time(count) { index in
                    let key = "miss-\(base + index)"
                    if try await floor.value(forKey: key) == nil { try await floor.setValue(body, forKey: key) }
                }, operations: count)
                misses.record("HTTPCache", isFloor: false, nanoseconds: try await time(count) { index in
                    _ = try await http.response(for: Self.request(base + index), transport: freshOrigin)
                }, operations: count)
                missBase += count
            }
        }
        try await client.shutdown()
        var comparisons: [Comparison] = []
        for (samples, workload, note) in [
            (hits, "fresh hit", "Served from the memory level; the origin is not asked. The floor's key is the URL, built per call from the request each strategy is given."),
            (revalidated, "revalidated hit (304)", "Stale (max-age=0, an ETag): a conditional request, a 304 from the in-process origin, the stored record updated."),
            (misses, "miss, stored", "A new URL each time: the origin's 200 (max-age) is stored; the floor checks for the key and sets it."),
        ] where Self.includes(workload) {
            var comparison = Comparison(suite: Self.suite, group: Self.group, workload: workload, operationsPerRun: count)
            samples.fill(&comparison)
            comparison.notes.append(note)
            if workload == "fresh hit" { comparison.notes += Self.pairedRatios(in: samples) }
            comparisons.append(comparison)
        }
        comparisons += try await HTTPStreamingBenchmark(runCount: runCount, workspace: workspace).measure()
        comparisons += try await HTTPProxyBenchmark(runCount: runCount, operations: max(1_000, count / 10),
                                                    workspace: workspace).measure()
        return comparisons
    }

    /// For each strategy, the median and range of its ratios to the floor run by run.
    static func pairedRatios(in samples: SampleSet) -> [String] {
        samples.order.compactMap { strategy in
            let ratios = samples.ratiosToFloorPerRun(of: strategy).sorted()
            guard ratios.count > 1, ratios.contains(where: { $0 != 1 }) else { return nil }
            return String(format: "%@ ÷ floor run by run: median %.2f, %.2f-%.2f", strategy,
                          ratios[ratios.count / 2], ratios[0], ratios[ratios.count - 1])
        }
    }

    /// Nanoseconds for `count` calls of `body` with the call's index.
    func time(_ count: Int, _ body: (Int) async throws -> Void) async throws -> UInt64 {
        let start = Clock.now()
        for index in 0..<count { try await body(index) }
        return Clock.now() - start
    }
}
