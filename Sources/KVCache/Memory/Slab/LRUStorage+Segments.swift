// The adaptive policy's three lists. Only segmented storage (`isSegmented`) uses them.
extension LRUStorage {
    /// The ends of a segment's list.
    @inlinable
    func ends(of segment: Segment) -> ListEnds {
        switch segment {
        case .window: ListEnds(head: head, tail: tail)
        case .probation: probation
        case .protected: protected
        }
    }

    @inlinable
    func setEnds(_ ends: ListEnds, of segment: Segment) {
        switch segment {
        case .window: (head, tail) = (ends.head, ends.tail)
        case .probation: probation = ends
        case .protected: protected = ends
        }
    }

    /// The segment of the entry in a slot.
    @inlinable
    func segment(at index: Int32) -> Segment {
        link(at: index).pointee.segment
    }

    /// The entries and cost of a segment.
    @inlinable
    func size(of segment: Segment) -> SegmentSize {
        switch segment {
        case .window: return windowSize
        case .protected: return protectedSize
        case .probation:
            var cost = totalCost
            cost.subtract(windowSize.cost)
            cost.subtract(protectedSize.cost)
            return SegmentSize(count: count - windowSize.count - protectedSize.count, cost: cost)
        }
    }

    /// Applies `change` to the size kept for `segment` (probation's is derived from
    /// the others, so it keeps none).
    @inlinable
    func resize(_ segment: Segment, _ change: (inout SegmentSize) -> Void) {
        switch segment {
        case .window: change(&windowSize)
        case .protected: change(&protectedSize)
        case .probation: break
        }
    }

    @inlinable
    func linkAtHead(_ index: Int32, of segment: Segment) {
        var ends = ends(of: segment)
        link(at: index).pointee.previous = Self.none
        link(at: index).pointee.next = ends.head
        if ends.head != Self.none { link(at: ends.head).pointee.previous = index } else { ends.tail = index }
        ends.head = index
        setEnds(ends, of: segment)
    }

    @inlinable
    func unlink(_ index: Int32, from segment: Segment) {
        let link = link(at: index).pointee
        var ends = ends(of: segment)
        if link.previous != Self.none { self.link(at: link.previous).pointee.next = link.next } else { ends.head = link.next }
        if link.next != Self.none { self.link(at: link.next).pointee.previous = link.previous } else { ends.tail = link.previous }
        setEnds(ends, of: segment)
    }

    /// Marks an entry as its segment's most recently used.
    @inlinable
    func moveToFront(_ index: Int32, in segment: Segment) {
        guard index != ends(of: segment).head else { return }
        unlink(index, from: segment)
        linkAtHead(index, of: segment)
    }

    /// Moves an entry to the head of another segment.
    @inlinable
    func move(_ index: Int32, to segment: Segment) {
        let link = link(at: index)
        let from = link.pointee.segment
        let cost = link.pointee.smallCost ?? slot(at: index).pointee.cost
        unlink(index, from: from)
        resize(from) { $0.subtract(cost) }
        link.pointee.segment = segment
        resize(segment) { $0.add(cost) }
        linkAtHead(index, of: segment)
    }

    /// The least recently used entry of a segment, if it has any.
    @inlinable
    func tail(of segment: Segment) -> Int32? {
        let tail = ends(of: segment).tail
        return tail == Self.none ? nil : tail
    }

    /// The problems found in the storage's structure, empty when it is sound: every
    /// live slot is on exactly one list (its segment's), the lists are linked both
    /// ways, and the counts and costs match the entries.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var listed = 0
        var listedCost = CostTotal()
        let lists: [Segment] = isSegmented ? [.window, .probation, .protected] : [.window]
        for segment in lists {
            var size = SegmentSize()
            var previous = Self.none
            var index = ends(of: segment).head
            while index != Self.none, size.count <= count {
                let slot = slot(at: index).pointee
                if slot.key == nil { problems.append("free slot \(index) on the \(segment) list") }
                if isSegmented, self.segment(at: index) != segment {
                    problems.append("slot \(index) is marked \(self.segment(at: index)) but on the \(segment) list")
                }
                if let linkCost = link(at: index).pointee.smallCost, linkCost != slot.cost {
                    problems.append("slot \(index)'s link says cost \(linkCost), its slot \(slot.cost)")
                }
                if link(at: index).pointee.previous != previous { problems.append("slot \(index) has a wrong previous link") }
                size.add(slot.cost)
                listedCost.add(slot.cost)
                previous = index
                index = link(at: index).pointee.next
            }
            if ends(of: segment).tail != previous { problems.append("the \(segment) list's tail is wrong") }
            if isSegmented, size != self.size(of: segment) {
                problems.append("the \(segment) segment counts \(self.size(of: segment)), its list holds \(size)")
            }
            listed += size.count
        }
        if listed != count { problems.append("the lists hold \(listed) entries, the table \(count)") }
        for index in 0..<initializedCount where (slot(at: index).pointee.key != nil) != isLive(index) {
            problems.append("slot \(index)'s free mark disagrees with its key")
        }
        if listedCost != totalCost { problems.append("the lists' costs add up to \(listedCost.clamped), the total is \(totalCost.clamped)") }
        for (index, stripe) in stripes.enumerated() {
            problems += stripe.invariantViolations().map { "table stripe \(index): \($0)" }
        }
        return problems
    }
}
