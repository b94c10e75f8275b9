/// ARC (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache",
/// FAST '03), as the paper's algorithm: T1 holds keys seen once recently, T2 keys
/// seen at least twice, both LRU; B1 and B2 remember the keys evicted from them
/// (ghosts, no values). The target size p of T1 grows on a hit in B1 and shrinks
/// on a hit in B2 (by max(1, |other ghost list| / |this one|), a real number), and
/// REPLACE evicts from T1 when it is above p, else from T2. |T1| + |T2| ≤ c and
/// |T1| + |T2| + |B1| + |B2| ≤ 2c.
struct ARCPolicy: Policy {
    static let name = "ARC"
    private static let t1 = 0, t2 = 1, b1 = 2, b2 = 3

    private let capacity: Int
    private var target = 0.0
    private var lists: KeyLists

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        lists = KeyLists(lists: 4, expectedKeys: 2 * self.capacity)
    }

    private func count(_ list: Int) -> Int { lists.count(list) }

    mutating func access(_ key: Int) -> Bool {
        let c = Double(capacity)
        switch lists.list(of: key) {
        case Self.t1, Self.t2:  // Case I
            lists.moveToHead(key, list: Self.t2)
            return true
        case Self.b1:  // Case II
            target = min(c, target + max(1, Double(count(Self.b2)) / Double(count(Self.b1))))
            replace(hitInB2: false)
            lists.moveToHead(key, list: Self.t2)
            return false
        case Self.b2:  // Case III
            target = max(0, target - max(1, Double(count(Self.b1)) / Double(count(Self.b2))))
            replace(hitInB2: true)
            lists.moveToHead(key, list: Self.t2)
            return false
        default:  // Case IV
            let l1 = count(Self.t1) + count(Self.b1)
            if l1 == capacity {
                if count(Self.t1) < capacity {
                    lists.removeTail(Self.b1)
                    replace(hitInB2: false)
                } else {
                    lists.removeTail(Self.t1)
                }
            } else {
                let total = l1 + count(Self.t2) + count(Self.b2)
                if total >= capacity {
                    if total == 2 * capacity { lists.removeTail(Self.b2) }
                    replace(hitInB2: false)
                }
            }
            lists.insertAtHead(key, list: Self.t1)
            return false
        }
    }

    /// Moves the LRU key of T1 to B1 or that of T2 to B2.
    private mutating func replace(hitInB2: Bool) {
        let t1 = Double(count(Self.t1))
        if count(Self.t1) > 0 && (t1 > target || (hitInB2 && t1 == target)) {
            if let key = lists.tail(Self.t1) { lists.moveToHead(key, list: Self.b1) }
        } else if let key = lists.tail(Self.t2) {
            lists.moveToHead(key, list: Self.b2)
        } else if let key = lists.tail(Self.t1) {
            lists.moveToHead(key, list: Self.b1)
        }
    }
}
