import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import KVCache
import KVCacheHTTP

/// `kvcache-bench http`, large bodies: a stored 100 MB body served through
/// `HTTPCache.streamingResponse` (read from its file in pieces), against reading a file of the
/// same bytes with read(2) in 64 KB pieces, and the resident memory either one adds at its peak.
struct HTTPStreamingBenchmark: Sendable {
    static let bodySize = 100 << 20
    static let group = "100 MB body"

    var runCount: Int
    var workspace: Workspace

    func measure() async throws -> [Comparison] {
        guard HTTPBenchmark.includes("streamed hit") else { return [] }
        let directory = try workspace.makeDirectory("http-streaming")
        defer { workspace.remove(directory) }
        let storage = try Cache(directory: directory.appendingPathComponent("http"), coder: HTTPCacheRecordCoder())
        defer { try? storage.close() }
        let http = try HTTPCache(storage: storage, configuration: .init(mode: .shared, maximumBodySize: 128 << 20))
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let body = (0..<(Self.bodySize >> 20)).reduce(into: Data()) { data, _ in data.append(piece) }
        let request = HTTPRequest(method: .get, scheme: "http", authority: "origin.test", path: "/large")
        let origin: HTTPCache.Transport = { _, _ in (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=86400"]), body) }
        _ = try await http.response(for: request, transport: origin)
        let floorPath = directory.appendingPathComponent("floor.bin").path
        guard FileManager.default.createFile(atPath: floorPath, contents: body) else {
            throw KVCacheError.invalidArgument("cannot write \(floorPath)")
        }
        Progress.log("http: a \(Self.bodySize >> 20) MB body, \(runCount) runs")

        var samples = SampleSet(), memory: [String: Int] = [:]
        for _ in 0..<runCount {
            var (nanoseconds, growth) = await Self.measured {
                let fd = open(floorPath, O_RDONLY)
                defer { close(fd) }
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                var total = 0
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    total += count
                }
                precondition(total == Self.bodySize)
            }
            samples.record("read(2), 64 KB pieces", isFloor: true, nanoseconds: nanoseconds, operations: 1)
            memory["read(2), 64 KB pieces"] = max(memory["read(2), 64 KB pieces"] ?? 0, growth)
            (nanoseconds, growth) = try await Self.measured {
                let answer = try await http.streamingResponse(for: request) { _, _ in
                    preconditionFailure("the stored body was not served")
                }
                var total = 0
                for try await chunk in answer.body { total += chunk.count }
                precondition(total == Self.bodySize && answer.outcome == .hit)
            }
            samples.record("HTTPCache.streamingResponse", isFloor: false, nanoseconds: nanoseconds, operations: 1)
            memory["HTTPCache.streamingResponse"] = max(memory["HTTPCache.streamingResponse"] ?? 0, growth)
        }
        var comparison = Comparison(suite: HTTPBenchmark.suite, group: Self.group, workload: "streamed hit",
                                    operationsPerRun: 1)
        samples.fill(&comparison)
        comparison.notes.append("A stored body read from its file in 64 KB pieces; the floor reads a file of the same bytes. Peak resident memory added, most of any run: "
            + memory.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value >> 10) KB" }.joined(separator: ", ") + ".")
        return [comparison]
    }

    /// Nanoseconds `body` takes, and how far resident memory rose above where it started
    /// (the kernel's peak, reset first).
    static func measured(_ body: () async throws -> Void) async rethrows -> (UInt64, Int) {
        resetPeakResident()
        let before = residentKB("VmRSS")
        let start = Clock.now()
        try await body()
        let elapsed = Clock.now() - start
        return (elapsed, max(0, residentKB("VmHWM") - before) << 10)
    }

    /// Writing 5 to clear_refs resets the process's peak resident size (Linux 4.0+).
    static func resetPeakResident() {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return }
        _ = write(fd, "5", 1)
        close(fd)
    }

    static func residentKB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}
