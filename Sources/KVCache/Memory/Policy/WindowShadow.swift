/// A key-only simulation of the adaptive policy with the window at a fixed share, over a
/// sample of the keys: it answers how many of the sample's requests would have hit with
/// that window. `WindowGradient` runs two side by side to find which way the window should move.
///
/// It follows `MemoryCache.admitAdaptively` and `recordAdaptiveUse`: a window, then a
/// probation and a protected segment (80 % of the main space). A candidate leaving the window
/// enters a full main space only if the sketch counts it `lead` more uses than the victim.
/// Keys are their policy hashes (two sampled keys with one hash count as one), and
/// frequencies are the cache's own sketch's, which counts every request.
///
/// A small cache has every request sampled, so a request must cost little: nodes and an
/// open-addressing index (linear probing on the hash's low bits, which the sample leaves
/// uniform) in buffers allocated once, no hashing beyond the policy's.
final class WindowShadow {
    enum Segment: UInt8 { case window, probation, protected }

    struct Node {
        var hash: UInt32
        var previous: Int32
        var next: Int32
        var segment: Segment
    }

    /// A segment's most recent and oldest node (-1: none), and its count.
    struct List {
        var head: Int32 = -1
        var tail: Int32 = -1
        var count = 0
    }

    /// The entries it holds at most (2 or more).
    let capacity: Int
    /// The window's size in entries, fractional (whole entries count).
    private(set) var window: Double = 1
    /// `capacity + 1` nodes: an insertion links its node before the eviction it causes.
    private let nodes: UnsafeMutablePointer<Node>
    private var nodesUsed: Int32 = 0
    /// Nodes evicted, to reuse.
    private let free: UnsafeMutablePointer<Int32>
    private var freeCount = 0
    /// Node per slot (-1: empty), a power of two of at least twice the capacity.
    private let slots: UnsafeMutablePointer<Int32>
    private let slotMask: Int
    private var lists = (window: List(), probation: List(), protected: List())
    /// The entries it holds.
    private(set) var count = 0
    /// Hits since the last `takeHits()`.
    private(set) var hits = 0
    private var windowMaximum = 1
    private var protectedMaximum = 0

    /// An empty shadow of `capacity` entries (at least 2) with a window of `window` entries.
    init(capacity: Int, window: Double) {
        self.capacity = max(2, capacity)
        nodes = .allocate(capacity: self.capacity + 1)
        free = .allocate(capacity: self.capacity + 1)
        var slotCount = 4
        while slotCount < 2 * self.capacity { slotCount *= 2 }
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: -1, count: slotCount)
        slotMask = slotCount - 1
        setWindow(window)
    }

    deinit {
        nodes.deallocate()
        free.deallocate()
        slots.deallocate()
    }

    /// Sets the window's size; the segments reach it as requests come.
    func setWindow(_ entries: Double) {
        window = entries
        windowMaximum = min(capacity - 1, max(1, Int(entries)))
        protectedMaximum = Int((Double(capacity - windowMaximum) * 0.8).rounded(.down))
    }

    /// Returns the hits counted since the last call, and starts counting again.
    func takeHits() -> Int {
        defer { hits = 0 }
        return hits
    }

    /// Records a request of the key of policy hash `hash`: a hit, or an insertion through
    /// the window. `frequency` is the sketch's estimate for a hash.
    func record(_ hash: UInt32, lead: UInt8, frequency: (UInt32) -> UInt8) {
        let slot = self.slot(of: hash)
        let node = slots[slot]
        if node >= 0 {
            hits &+= 1
            use(node)
        } else {
            insert(hash, at: slot, lead: lead, frequency: frequency)
        }
    }

    /// The slot that holds `hash`'s node, or the empty slot where it would go.
    private func slot(of hash: UInt32) -> Int {
        var slot = Int(hash) & slotMask
        while true {
            let node = slots[slot]
            if node < 0 || nodes[Int(node)].hash == hash { return slot }
            slot = (slot &+ 1) & slotMask
        }
    }

    private func use(_ node: Int32) {
        let segment = nodes[Int(node)].segment
        unlink(node)
        switch segment {
        case .window, .protected:
            pushFront(node, segment)
        case .probation:
            pushFront(node, .protected)
            while lists.protected.count > protectedMaximum {
                let demoted = lists.protected.tail
                unlink(demoted)
                pushFront(demoted, .probation)
            }
        }
    }

    private func insert(_ hash: UInt32, at slot: Int, lead: UInt8, frequency: (UInt32) -> UInt8) {
        let node: Int32
        if freeCount > 0 {
            freeCount -= 1
            node = free[freeCount]
        } else {
            node = nodesUsed
            nodesUsed += 1
        }
        (nodes + Int(node)).initialize(to: Node(hash: hash, previous: -1, next: -1, segment: .window))
        slots[slot] = node
        count += 1
        pushFront(node, .window)
        while lists.window.count > windowMaximum {
            let candidate = lists.window.tail
            guard lists.probation.count + lists.protected.count >= capacity - windowMaximum else {
                unlink(candidate)
                pushFront(candidate, .probation)
                continue
            }
            let victim = lists.probation.tail >= 0 ? lists.probation.tail : lists.protected.tail
            guard victim >= 0 else {
                evict(candidate)
                continue
            }
            if frequency(nodes[Int(candidate)].hash) >= frequency(nodes[Int(victim)].hash) &+ lead {
                evict(victim)
                unlink(candidate)
                pushFront(candidate, .probation)
            } else {
                evict(candidate)
                // The cache's second chance under lead 1 (`admitAdaptively`).
                if lead == 1 {
                    let segment = nodes[Int(victim)].segment
                    unlink(victim)
                    pushFront(victim, segment)
                }
            }
        }
        // A window that grew leaves the main space over its share: the limit evicts, as the cache's does.
        while count > capacity {
            let victim = lists.probation.tail >= 0 ? lists.probation.tail
                : lists.protected.tail >= 0 ? lists.protected.tail : lists.window.tail
            evict(victim)
        }
    }

    private func evict(_ node: Int32) {
        unlink(node)
        removeFromIndex(node)
        free[freeCount] = node
        freeCount += 1
        count -= 1
    }

    /// Empties `node`'s slot and moves back the nodes after it that probed past it
    /// (linear probing's deletion without markers).
    private func removeFromIndex(_ node: Int32) {
        var hole = slot(of: nodes[Int(node)].hash)
        slots[hole] = -1
        var next = hole
        while true {
            next = (next &+ 1) & slotMask
            let moved = slots[next]
            if moved < 0 { return }
            let home = Int(nodes[Int(moved)].hash) & slotMask
            // Stays if its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if stays { continue }
            slots[hole] = moved
            slots[next] = -1
            hole = next
        }
    }

    private func unlink(_ node: Int32) {
        let entry = nodes[Int(node)]
        var list = self.list(entry.segment)
        if entry.previous >= 0 { nodes[Int(entry.previous)].next = entry.next } else { list.head = entry.next }
        if entry.next >= 0 { nodes[Int(entry.next)].previous = entry.previous } else { list.tail = entry.previous }
        list.count -= 1
        setList(list, of: entry.segment)
    }

    private func pushFront(_ node: Int32, _ segment: Segment) {
        var list = self.list(segment)
        let head = list.head
        nodes[Int(node)].segment = segment
        nodes[Int(node)].previous = -1
        nodes[Int(node)].next = head
        if head >= 0 { nodes[Int(head)].previous = node } else { list.tail = node }
        list.head = node
        list.count += 1
        setList(list, of: segment)
    }

    private func list(_ segment: Segment) -> List {
        switch segment {
        case .window: lists.window
        case .probation: lists.probation
        case .protected: lists.protected
        }
    }

    private func setList(_ list: List, of segment: Segment) {
        switch segment {
        case .window: lists.window = list
        case .probation: lists.probation = list
        case .protected: lists.protected = list
        }
    }

    /// What breaks the shadow's invariants: each segment a well-linked list of its own nodes,
    /// the index naming every listed node by its hash (and nothing else), and the entries
    /// within the capacity. (A window just shrunk may hold more than its share until the
    /// next insertion, as the cache's.)
    func invariantViolations() -> [String] {
        var violations: [String] = []
        var listed = 0
        for (segment, list) in [(Segment.window, lists.window), (.probation, lists.probation), (.protected, lists.protected)] {
            var node = list.head, previous: Int32 = -1, seen = 0
            while node >= 0, seen <= Int(nodesUsed) {
                let entry = nodes[Int(node)]
                if entry.segment != segment { violations.append("shadow node \(node) in \(segment)'s list says \(entry.segment)") }
                if entry.previous != previous { violations.append("shadow node \(node) links back to \(entry.previous), not \(previous)") }
                if slots[slot(of: entry.hash)] != node { violations.append("shadow node \(node) is not indexed by its hash") }
                previous = node
                node = entry.next
                seen += 1
            }
            if list.tail != previous { violations.append("shadow \(segment) ends at \(list.tail), its last node is \(previous)") }
            if seen != list.count { violations.append("shadow \(segment) counts \(list.count), links \(seen)") }
            listed += seen
        }
        let indexed = (0...slotMask).filter { slots[$0] >= 0 }.count
        if listed != count || indexed != count { violations.append("shadow counts \(count), lists \(listed), indexes \(indexed)") }
        if count + freeCount != Int(nodesUsed) { violations.append("shadow: \(count) held + \(freeCount) free != \(nodesUsed)") }
        if count > capacity { violations.append("shadow holds \(count) of \(capacity)") }
        return violations
    }
}
