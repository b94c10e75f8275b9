import Foundation
import Synchronization
@testable import KVCache

/// A memory-pressure target that records the trims it is asked for.
final class TrimRecorder: MemoryPressureTrimmable {
    struct Trim: Equatable, Sendable {
        var fraction: Double
        var reason: EvictionReason
    }

    private let recorded = Mutex<[Trim]>([])
    /// Every trim, as it happens; lets tests await background trims without sleeping.
    let events: AsyncStream<Trim>
    private let continuation: AsyncStream<Trim>.Continuation

    init() { (events, continuation) = AsyncStream.makeStream() }

    var trims: [Trim] { recorded.withLock { $0 } }

    func trim(toFraction fraction: Double, reason: EvictionReason) {
        let trim = Trim(fraction: fraction, reason: reason)
        recorded.withLock { $0.append(trim) }
        continuation.yield(trim)
    }
}

/// A stand-in PSI file in a fresh temporary directory.
struct FakePressureFile {
    let directory: URL
    var path: String { directory.appendingPathComponent("memory.pressure").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvcache-pressure-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Writes a PSI reading with the given `avg10` values, atomically so a
    /// concurrent reader never sees half of it.
    func write(some: Double, full: Double) throws {
        let text = """
            some avg10=\(String(format: "%.2f", some)) avg60=1.00 avg300=0.50 total=123456
            full avg10=\(String(format: "%.2f", full)) avg60=0.50 avg300=0.10 total=4567

            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
