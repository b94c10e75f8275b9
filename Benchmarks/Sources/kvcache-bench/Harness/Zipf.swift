#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Zipf-distributed indices with exponent `s` over `0..<population`,
/// drawn by inverting a precomputed CDF (binary search) with a fixed seed.
///
/// Ranks are scattered over the population by a seeded permutation so the hot
/// keys are not simply the first ones inserted (which would flatter FIFO-like
/// eviction and warm the earliest allocations).
struct Zipf {
    let population: Int
    let exponent: Double
    private let cdf: [Double]
    private let rankToIndex: [Int]

    init(population: Int, exponent: Double, seed: UInt64) {
        precondition(population > 0)
        self.population = population
        self.exponent = exponent
        var cdf = [Double](repeating: 0, count: population)
        var total = 0.0
        for rank in 0..<population {
            total += 1.0 / pow(Double(rank + 1), exponent)
            cdf[rank] = total
        }
        for rank in 0..<population { cdf[rank] /= total }
        self.cdf = cdf
        rankToIndex = AccessPattern.shuffled(count: population, seed: seed ^ 0x5A5A)
    }

    /// `count` indices following the distribution.
    func indices(count: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in rankToIndex[rank(for: random.nextUnit())] }
    }

    /// The smallest rank whose cumulative probability exceeds `u`.
    private func rank(for u: Double) -> Int {
        var low = 0
        var high = population - 1
        while low < high {
            let mid = (low + high) / 2
            if cdf[mid] > u { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// The probability mass of the `top` most popular keys (for the report).
    func mass(ofTop top: Int) -> Double {
        top <= 0 ? 0 : cdf[min(top, population) - 1]
    }
}
