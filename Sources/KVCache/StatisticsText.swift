/// The parts of the levels' and the facade's statistics descriptions they share.
enum StatisticsText {
    /// "90 hits, 10 misses (90.0 %), 20 sets".
    static func reads(hits: Int, misses: Int, sets: Int) -> String {
        let reads = hits + misses
        let ratio = reads == 0 ? "" : " (" + percent(Double(hits) / Double(reads)) + ")"
        return "\(hits) \(hits == 1 ? "hit" : "hits"), \(misses) \(misses == 1 ? "miss" : "misses")\(ratio), "
            + "\(sets) \(sets == 1 ? "set" : "sets")"
    }

    /// "; evicted: 8 count, 2 removed", or "" when nothing left.
    static func evictions(_ evictions: [EvictionReason: Int]) -> String {
        let parts = EvictionReason.allCases.compactMap { reason in
            evictions[reason].flatMap { $0 > 0 ? "\($0) \(reason)" : nil }
        }
        return parts.isEmpty ? "" : "; evicted: " + parts.joined(separator: ", ")
    }

    /// "90.0 %".
    static func percent(_ ratio: Double) -> String {
        let tenths = Int((ratio * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }
}
