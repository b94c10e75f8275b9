/// The median of repeated runs with its spread.
struct Summary: Codable, Sendable {
    var median: Double
    var min: Double
    var max: Double
    /// First and third quartiles (linear interpolation between order statistics).
    var q1: Double
    var q3: Double
    var runs: Int

    init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "a summary needs at least one sample")
        let sorted = samples.sorted()
        func quantile(_ q: Double) -> Double {
            let position = q * Double(sorted.count - 1)
            let lower = Int(position.rounded(.down))
            let upper = Swift.min(lower + 1, sorted.count - 1)
            let fraction = position - Double(lower)
            return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
        }
        median = quantile(0.5)
        min = sorted[0]
        max = sorted[sorted.count - 1]
        q1 = quantile(0.25)
        q3 = quantile(0.75)
        runs = sorted.count
    }
}
