/// A running sum of non-negative 64-bit costs that cannot overflow.
///
/// Costs come from callers and may be close to `Int64.max`, so the sum is kept
/// in 128 bits (two words); it is reported clamped to `Int64.max`.
@usableFromInline
struct CostTotal: Sendable, Equatable {
    @usableFromInline var high: UInt64 = 0
    @usableFromInline var low: UInt64 = 0

    @inlinable
    init() {}

    /// Adds a cost; `cost` must not be negative.
    @inlinable
    mutating func add(_ cost: Int64) {
        let (sum, overflow) = low.addingReportingOverflow(UInt64(cost))
        low = sum
        if overflow { high &+= 1 }
    }

    /// Subtracts a cost that was added before.
    @inlinable
    mutating func subtract(_ cost: Int64) {
        let (difference, borrow) = low.subtractingReportingOverflow(UInt64(cost))
        low = difference
        if borrow { high &-= 1 }
    }

    /// Adds another sum.
    @inlinable
    mutating func add(_ other: CostTotal) {
        let (sum, overflow) = low.addingReportingOverflow(other.low)
        low = sum
        high &+= other.high &+ (overflow ? 1 : 0)
    }

    /// Subtracts a sum that is part of this one.
    @inlinable
    mutating func subtract(_ other: CostTotal) {
        let (difference, borrow) = low.subtractingReportingOverflow(other.low)
        low = difference
        high &-= other.high &+ (borrow ? 1 : 0)
    }

    /// The sum, or `Int64.max` if it is larger.
    @inlinable
    var clamped: Int64 {
        high == 0 && low <= UInt64(Int64.max) ? Int64(low) : .max
    }

    /// Whether the sum is strictly greater than `limit`. A limit of
    /// `Int64.max` means no limit; a negative one counts as zero.
    @inlinable
    func exceeds(_ limit: Int64) -> Bool {
        limit != .max && (high != 0 || low > UInt64(max(limit, 0)))
    }

    /// The sum as a `Double` (rounded above 2^53).
    @inlinable
    var asDouble: Double {
        Double(high) * 18_446_744_073_709_551_616.0 + Double(low)
    }

    /// The sum scaled by `fraction` (0...1), rounded down and clamped to `Int64.max`.
    func scaled(by fraction: Double) -> Int64 {
        let value = asDouble * fraction
        return value >= 9_223_372_036_854_775_807.0 ? .max : Int64(max(value, 0))
    }
}

extension Int64 {
    /// `self + other` for non-negative costs, `Int64.max` where it would overflow: for sums
    /// that only decide when a batch is full.
    @inlinable
    func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
