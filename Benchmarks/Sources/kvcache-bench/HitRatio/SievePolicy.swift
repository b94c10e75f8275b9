/// SIEVE (Zhang et al., NSDI '24): a FIFO whose keys never move. A hit sets the
/// key's visited bit. New keys enter at the head. To evict, the hand (starting at
/// the tail) walks towards the head, clearing visited bits, and evicts the first
/// key not visited; it then rests on that key's neighbour towards the head and
/// wraps from the head back to the tail.
struct SievePolicy: Policy {
    static let name = "SIEVE"
    private let capacity: Int
    private var queue: KeyLists
    private var hand: Int?

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        queue = KeyLists(lists: 1, expectedKeys: self.capacity)
    }

    mutating func access(_ key: Int) -> Bool {
        if queue.list(of: key) != nil {
            queue.setCounter(key, 1)
            return true
        }
        if queue.count(0) >= capacity { evict() }
        queue.insertAtHead(key, list: 0)
        return false
    }

    private mutating func evict() {
        var candidate = hand ?? queue.tail(0)
        while let key = candidate, queue.counter(key) != 0 {
            queue.setCounter(key, 0)
            candidate = queue.towardsHead(from: key) ?? queue.tail(0)
        }
        guard let victim = candidate else { return }
        hand = queue.towardsHead(from: victim)
        queue.remove(victim)
    }
}
