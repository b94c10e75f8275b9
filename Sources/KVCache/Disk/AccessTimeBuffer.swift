/// Last-access times recorded by reads and not yet written to the manifest.
///
/// A read must not become a write (SELECT ≈ 6 µs, SELECT plus an UPDATE ≈ 17 µs),
/// so gets record here and the store writes the times in one transaction: with
/// the next group commit, on an interval, when the buffer is large, before a
/// trim (so LRU order is right), and on close.
struct AccessTimeBuffer {
    private(set) var times: [String: Double] = [:]

    var count: Int { times.count }
    var isEmpty: Bool { times.isEmpty }

    mutating func record(_ key: String, at time: Double) {
        times[key] = time
    }

    /// Forgets `key` (it was rewritten or removed; the row carries its own time).
    mutating func remove(_ key: String) {
        if !times.isEmpty { times.removeValue(forKey: key) }
    }

    func time(for key: String) -> Double? {
        times.isEmpty ? nil : times[key]
    }

    /// Returns every buffered time and empties the buffer.
    mutating func drain() -> [String: Double] {
        defer { times = [:] }
        return times
    }

    mutating func removeAll() {
        times = [:]
    }
}
