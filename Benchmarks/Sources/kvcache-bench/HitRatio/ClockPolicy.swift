/// CLOCK (second chance): a hit sets the key's reference bit and moves nothing.
/// To evict, the hand looks at the oldest key: set, the bit is cleared and the key
/// goes round again (to the head); clear, the key is evicted. A new key starts
/// with its bit clear. (A FIFO with reinsertion: the same decisions as a circular
/// buffer with a moving hand.)
struct ClockPolicy: Policy {
    static let name = "CLOCK"
    private let capacity: Int
    private var ring: KeyLists

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        ring = KeyLists(lists: 1, expectedKeys: self.capacity)
    }

    mutating func access(_ key: Int) -> Bool {
        if ring.list(of: key) != nil {
            ring.setCounter(key, 1)
            return true
        }
        if ring.count(0) >= capacity {
            while let oldest = ring.tail(0) {
                if ring.counter(oldest) == 0 {
                    ring.remove(oldest)
                    break
                }
                ring.setCounter(oldest, 0)
                ring.moveToHead(oldest, list: 0)
            }
        }
        ring.insertAtHead(key, list: 0)
        return false
    }
}
