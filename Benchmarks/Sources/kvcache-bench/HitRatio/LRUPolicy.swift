/// Least recently used: a hit moves the key to the head; a miss evicts the tail.
struct LRUPolicy: Policy {
    static let name = "LRU"
    private let capacity: Int
    private var entries: KeyLists

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        entries = KeyLists(lists: 1, expectedKeys: self.capacity)
    }

    mutating func access(_ key: Int) -> Bool {
        if entries.list(of: key) != nil {
            entries.moveToHead(key, list: 0)
            return true
        }
        if entries.count(0) >= capacity { entries.removeTail(0) }
        entries.insertAtHead(key, list: 0)
        return false
    }
}
