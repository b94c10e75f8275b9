/// The entries and total cost of one segment of the adaptive policy.
@usableFromInline
struct SegmentSize: Equatable {
    @usableFromInline var count = 0
    @usableFromInline var cost = CostTotal()

    @usableFromInline
    init(count: Int = 0, cost: CostTotal = CostTotal()) {
        self.count = count
        self.cost = cost
    }

    @inlinable
    mutating func add(_ cost: Int64) {
        count += 1
        self.cost.add(cost)
    }

    @inlinable
    mutating func subtract(_ cost: Int64) {
        count -= 1
        self.cost.subtract(cost)
    }

}
