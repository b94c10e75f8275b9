/// Keys in a few doubly-linked lists that share one pool of nodes; a key is in at
/// most one of the lists. Each list runs from its head (newest, most recently
/// used) to its tail (oldest); each node carries a small counter for the policy
/// (a reference bit, a frequency). The reference policies build on it: LRU and
/// CLOCK use one list, 2Q and S3-FIFO three, ARC four.
struct KeyLists {
    private static let none: Int32 = -1

    private var keys: [Int] = []
    private var previous: [Int32] = []  // towards the head
    private var next: [Int32] = []  // towards the tail
    private var owner: [Int8] = []  // the list a node is in
    private var counters: [UInt8] = []
    private var freeNodes: [Int32] = []
    private var nodeOfKey: [Int: Int32] = [:]
    private var heads: [Int32]
    private var tails: [Int32]
    private var counts: [Int]

    init(lists: Int, expectedKeys: Int = 0) {
        precondition(lists > 0 && lists <= Int(Int8.max))
        heads = Array(repeating: Self.none, count: lists)
        tails = Array(repeating: Self.none, count: lists)
        counts = Array(repeating: 0, count: lists)
        nodeOfKey.reserveCapacity(expectedKeys)
    }

    /// The list holding `key`, or nil.
    func list(of key: Int) -> Int? {
        nodeOfKey[key].map { Int(owner[Int($0)]) }
    }

    func count(_ list: Int) -> Int { counts[list] }

    /// The oldest key of `list` (its LRU end), or nil when it is empty.
    func tail(_ list: Int) -> Int? {
        let node = tails[list]
        return node == Self.none ? nil : keys[Int(node)]
    }

    /// The key one step towards the head from `key` in its list, or nil at the head.
    func towardsHead(from key: Int) -> Int? {
        guard let node = nodeOfKey[key] else { return nil }
        let before = previous[Int(node)]
        return before == Self.none ? nil : keys[Int(before)]
    }

    func counter(_ key: Int) -> UInt8 {
        nodeOfKey[key].map { counters[Int($0)] } ?? 0
    }

    mutating func setCounter(_ key: Int, _ value: UInt8) {
        if let node = nodeOfKey[key] { counters[Int(node)] = value }
    }

    /// Adds `key`, which is in no list, at the head of `list`.
    mutating func insertAtHead(_ key: Int, list: Int, counter: UInt8 = 0) {
        precondition(nodeOfKey[key] == nil, "key \(key) is already in list \(self.list(of: key)!)")
        let node: Int32
        if let reused = freeNodes.popLast() {
            node = reused
            keys[Int(node)] = key
            counters[Int(node)] = counter
        } else {
            node = Int32(keys.count)
            keys.append(key)
            previous.append(Self.none)
            next.append(Self.none)
            owner.append(0)
            counters.append(counter)
        }
        nodeOfKey[key] = node
        link(node, atHeadOf: list)
    }

    /// Moves `key` to the head of `list` (its own list or another), keeping its counter.
    mutating func moveToHead(_ key: Int, list: Int) {
        guard let node = nodeOfKey[key] else { preconditionFailure("key \(key) is in no list") }
        if heads[list] == node { return }
        unlink(node)
        link(node, atHeadOf: list)
    }

    /// Removes `key` from its list; false if it was in none.
    @discardableResult
    mutating func remove(_ key: Int) -> Bool {
        guard let node = nodeOfKey.removeValue(forKey: key) else { return false }
        unlink(node)
        freeNodes.append(node)
        return true
    }

    /// Removes and returns the oldest key of `list`, or nil when it is empty.
    @discardableResult
    mutating func removeTail(_ list: Int) -> Int? {
        guard let key = tail(list) else { return nil }
        remove(key)
        return key
    }

    private mutating func link(_ node: Int32, atHeadOf list: Int) {
        let index = Int(node)
        owner[index] = Int8(list)
        previous[index] = Self.none
        next[index] = heads[list]
        if heads[list] != Self.none { previous[Int(heads[list])] = node } else { tails[list] = node }
        heads[list] = node
        counts[list] += 1
    }

    private mutating func unlink(_ node: Int32) {
        let index = Int(node)
        let list = Int(owner[index])
        let before = previous[index], after = next[index]
        if before != Self.none { next[Int(before)] = after } else { heads[list] = after }
        if after != Self.none { previous[Int(after)] = before } else { tails[list] = before }
        counts[list] -= 1
    }
}
