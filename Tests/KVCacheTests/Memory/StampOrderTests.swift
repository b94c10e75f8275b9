import Testing
@testable import KVCache

/// A drain puts a lane's reads, taken stripe by stripe, back in the order of their stamps.
@Suite struct StampOrderTests {
    func ordered(_ reads: [(read: UInt64, stamp: UInt16)], next: UInt16) -> [UInt64] {
        let order = StampOrder(capacity: 16)
        defer { order.deallocate() }
        for (index, (read, stamp)) in reads.enumerated() {
            order.reads[index] = read
            order.stamps[index] = stamp
        }
        return Array(order.order(count: reads.count, next: next))
    }

    @Test func readsGoBackInTheOrderTheyWereRecorded() {
        // Two stripes' buffers, each in order, taken one after the other.
        #expect(ordered([(10, 0), (12, 2), (13, 3), (11, 1), (14, 4)], next: 5) == [10, 11, 12, 13, 14])
        // Stamps wrap: 65,534 and 65,535 came before 0 and 1.
        #expect(ordered([(3, 1), (0, 65_534), (2, 0), (1, 65_535)], next: 2) == [0, 1, 2, 3])
        // Reads recorded after the drain took its reads (the next stamp moved on) change nothing.
        #expect(ordered([(1, 7), (0, 6)], next: 20) == [0, 1])
        #expect(ordered([], next: 0) == [])
    }

    /// Threads that share a lane may take the same stamp, or leave a gap: an order lost,
    /// never a read.
    @Test func sharedStampsAndGapsKeepEveryRead() {
        // The same stamp twice: both kept, in the order taken.
        #expect(ordered([(1, 4), (2, 5), (3, 4)], next: 6) == [1, 3, 2])
        // A stamp further from the newest than there are reads goes first.
        #expect(ordered([(2, 9), (1, 1), (3, 10)], next: 11) == [1, 2, 3])
        #expect(ordered([(1, 5), (2, 60_000)], next: 6).sorted() == [1, 2])
    }
}
