/// S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP
/// '23), as the paper's algorithm: a small FIFO S (10 % of the entries), a main
/// FIFO M (the rest) and a ghost FIFO G of evicted keys, as many as M holds. Each
/// cached key has a frequency, 0 to 3, that a hit increments.
///
/// A miss on a key in G inserts it into M, any other miss into S. Eviction takes
/// from S while S holds at least its 10 %: its oldest key moves to M if it was hit
/// more than once (frequency > 1), else it leaves for G. Otherwise eviction takes
/// from M: its oldest key goes round again with its frequency decremented while
/// that is above 0, else it is evicted.
struct S3FIFOPolicy: Policy {
    static let name = "S3-FIFO"
    private static let small = 0, main = 1, ghost = 2

    private let capacity: Int
    private let smallTarget: Int
    private let ghostLimit: Int
    private var queues: KeyLists

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        smallTarget = max(1, self.capacity / 10)
        ghostLimit = max(1, self.capacity - smallTarget)
        queues = KeyLists(lists: 3, expectedKeys: self.capacity + ghostLimit)
    }

    mutating func access(_ key: Int) -> Bool {
        switch queues.list(of: key) {
        case Self.small, Self.main:
            queues.setCounter(key, min(queues.counter(key) + 1, 3))
            return true
        case Self.ghost:
            queues.remove(key)
            if cached >= capacity { evict() }
            queues.insertAtHead(key, list: Self.main)
            return false
        default:
            if cached >= capacity { evict() }
            queues.insertAtHead(key, list: Self.small)
            return false
        }
    }

    private var cached: Int { queues.count(Self.small) + queues.count(Self.main) }

    /// Frees one entry.
    private mutating func evict() {
        if queues.count(Self.small) >= smallTarget || queues.count(Self.main) == 0 {
            evictSmall()
        } else {
            evictMain()
        }
    }

    private mutating func evictSmall() {
        while let oldest = queues.tail(Self.small) {
            if queues.counter(oldest) > 1 {
                queues.moveToHead(oldest, list: Self.main)
                queues.setCounter(oldest, 0)
                if queues.count(Self.main) > capacity - smallTarget { evictMain() }
                if cached < capacity { return }
            } else {
                queues.remove(oldest)
                queues.insertAtHead(oldest, list: Self.ghost)
                if queues.count(Self.ghost) > ghostLimit { queues.removeTail(Self.ghost) }
                return
            }
        }
    }

    private mutating func evictMain() {
        while let oldest = queues.tail(Self.main) {
            let frequency = queues.counter(oldest)
            if frequency > 0 {
                queues.setCounter(oldest, frequency - 1)
                queues.moveToHead(oldest, list: Self.main)
            } else {
                queues.remove(oldest)
                return
            }
        }
    }
}
