/// Last-access times recorded by reads and not yet written to the manifest.
///
/// A read must not become a write (SELECT ≈ 6 µs, SELECT plus an UPDATE ≈ 17 µs),
/// so gets record here and the store writes the times in one transaction: with
/// the next group commit, on an interval, when the buffer is large, before a
/// trim (so LRU order is right), and on close.
struct AccessTimeBuffer {
    /// Keyed byte-wise, like the manifest (see ByteWiseKey).
    private(set) var times: [ByteWiseKey: Double] = [:]

    var count: Int { times.count }
    var isEmpty: Bool { times.isEmpty }

    mutating func record(_ key: String, at time: Double) {
        times[ByteWiseKey(key)] = time
    }

    /// Forgets `key` (it was rewritten or removed; the row carries its own time).
    mutating func remove(_ key: String) {
        if !times.isEmpty { times.removeValue(forKey: ByteWiseKey(key)) }
    }

    func time(for key: String) -> Double? {
        times.isEmpty ? nil : times[ByteWiseKey(key)]
    }

    /// Empties the buffer, keeping room for as many times as it held: the next
    /// batch is usually as large, and regrowing rehashes every key several times.
    mutating func removeAll() {
        times = Dictionary(minimumCapacity: times.count)
    }
}
