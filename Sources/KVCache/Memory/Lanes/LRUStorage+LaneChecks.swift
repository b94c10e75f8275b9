// The invariants of the table and the read lanes, which a checking build verifies.
extension LRUStorage {
    /// The problems found in the table and the read lanes, empty when they are sound:
    /// every table entry names a live slot that holds its key and cost, and every read buffer
    /// within its capacity is marked pending in its lane's header, and its lane used, when it
    /// holds reads.
    /// Called with the cache's lock held (readers may be recording: each buffer is read
    /// under its own lock, and one whose lock is busy is skipped, so a check never waits
    /// for a reader or for a test that holds a lane).
    func laneViolations() -> [String] {
        var problems: [String] = []
        for (stripeIndex, stripe) in stripes.enumerated() {
            // In-place writers hold the stripe's write lock (a check never waits for one).
            guard stripe.writeLock.tryLock() else { continue }
            var entries = 0
            stripe.forEach { key, entry in
                entries += 1
                if !isLive(entry.index) {
                    problems.append("stripe \(stripeIndex) names free slot \(entry.index)")
                } else if slot(at: entry.index).pointee.key != key {
                    problems.append("stripe \(stripeIndex)'s entry names slot \(entry.index), which holds another key")
                } else if entry.cost != Entry.smallCost(slot(at: entry.index).pointee.cost) {
                    problems.append("stripe \(stripeIndex)'s entry says cost \(entry.cost), its slot \(slot(at: entry.index).pointee.cost)")
                }
                if isStriped, self.stripeIndex(for: key) != stripeIndex {
                    problems.append("an entry of stripe \(self.stripeIndex(for: key)) is in stripe \(stripeIndex)")
                }
            }
            if entries != stripe.count { problems.append("stripe \(stripeIndex) links \(entries) entries, counts \(stripe.count)") }
            stripe.writeLock.unlock()
        }
        guard isSegmented else { return problems }
        for lane in 0..<lanes.count {
            for stripe in 0..<lanes.stripeCount {
                let part = lanes[lane: lane, stripe: stripe]
                guard part.tryLock() else { continue }
                let buffered = part.buffered
                let pending = laneHeader(lane).pendingStripes & 1 << UInt64(stripe) != 0
                part.unlock()
                if buffered > LaneStripe.bufferCapacity { problems.append("lane \(lane) stripe \(stripe) holds \(buffered) reads") }
                if buffered > 0 && !pending { problems.append("lane \(lane) stripe \(stripe) holds reads, unmarked") }
                // A reader marks its lane used before it takes the lane's lock, and no mark is
                // cleared: a grace period that skipped this lane could free a node under it.
                if buffered > 0 && lanes.usedLanes & 1 << UInt64(lane) == 0 {
                    problems.append("lane \(lane) holds reads but is not marked used")
                }
            }
        }
        return problems
    }
}
