/// Scratch memory in which a drain puts a lane's reads, taken stripe by stripe, back in
/// the order the lane recorded them (by their stamps, `LaneHeader.takeStamp()`): the
/// policy settles what a use decides by which use came first. Owned by `ReadLanes`,
/// used under the cache's lock.
@usableFromInline
struct StampOrder {
    /// The reads taken, in the order of their stripes, and their stamps.
    @usableFromInline let reads: UnsafeMutablePointer<UInt64>
    @usableFromInline let stamps: UnsafeMutablePointer<UInt16>
    @usableFromInline let ordered: UnsafeMutablePointer<UInt64>
    /// Counting sort's places, one more than `capacity`.
    @usableFromInline let starts: UnsafeMutablePointer<Int32>

    /// Room for `capacity` reads: every buffer of a lane, full.
    init(capacity: Int) {
        // Stamps are 16 bits: a lane's pending reads must span fewer than 2^16 of them.
        precondition(capacity > 0 && capacity < Int(UInt16.max))
        reads = .allocate(capacity: capacity)
        stamps = .allocate(capacity: capacity)
        ordered = .allocate(capacity: capacity)
        starts = .allocate(capacity: capacity + 1)
    }

    func deallocate() {
        reads.deallocate()
        stamps.deallocate()
        ordered.deallocate()
        starts.deallocate()
    }

    /// The first `count` reads of `reads`, oldest stamp first, where `next` is the stamp
    /// the lane gives its next read (read after the reads were taken). Stamps wrap: each is
    /// placed by its distance from the newest taken. Reads with the same stamp keep their
    /// order, and a read whose stamp is further from the newest than `count` (possible only
    /// when threads share the lane) goes first: an order lost, never a read. Leaves
    /// `stamps` changed.
    @inlinable
    func order(count: Int, next: UInt16) -> UnsafeBufferPointer<UInt64> {
        // Usually the stamps are the `count` before `next`, each once (a lane that one
        // thread reads on, and no read recorded since they were taken): each read goes
        // to its place. `UInt64.max` marks an empty place: a recorded read's slot is
        // below `Int32.max`.
        let oldest = next &- UInt16(truncatingIfNeeded: count)
        ordered.update(repeating: .max, count: count)
        var placed = 0
        while placed < count {
            let place = Int(stamps[placed] &- oldest)
            guard place < count, ordered[place] == .max else { break }
            ordered[place] = reads[placed]
            placed &+= 1
        }
        if placed == count { return UnsafeBufferPointer(start: ordered, count: count) }
        var newest = UInt16.max
        for index in 0..<count {
            let age = next &- 1 &- stamps[index]
            stamps[index] = age
            newest = Swift.min(newest, age)
        }
        starts.initialize(repeating: 0, count: count &+ 1)
        for index in 0..<count {
            let fromNewest = Int(stamps[index] &- newest)
            let place = fromNewest < count ? count &- 1 &- fromNewest : 0
            stamps[index] = UInt16(truncatingIfNeeded: place)
            starts[place &+ 1] &+= 1
        }
        for place in 0..<count { starts[place &+ 1] &+= starts[place] }
        for index in 0..<count {
            let place = Int(stamps[index])
            ordered[Int(starts[place])] = reads[index]
            starts[place] &+= 1
        }
        return UnsafeBufferPointer(start: ordered, count: count)
    }
}
