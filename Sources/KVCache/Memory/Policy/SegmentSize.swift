/// The entries and total cost of one segment of the adaptive policy.
struct SegmentSize: Equatable {
    var count = 0
    var cost = CostTotal()

    mutating func add(_ cost: Int64) {
        count += 1
        self.cost.add(cost)
    }

    mutating func subtract(_ cost: Int64) {
        count -= 1
        self.cost.subtract(cost)
    }

}
