/// 2Q, the full version (Johnson and Shasha, "2Q: A Low Overhead High Performance
/// Buffer Management Replacement Algorithm", VLDB '94): new keys enter A1in, a
/// FIFO of 25 % of the entries, where hits do not move them; a key pushed out of
/// A1in is remembered in A1out, a FIFO of ghosts half as long as the cache; a miss
/// on a ghost in A1out enters Am, an LRU of the keys seen again. When the cache is
/// full, A1in gives up its oldest key while it holds more than its 25 %, else Am
/// its least recently used one (not remembered).
struct TwoQueuePolicy: Policy {
    static let name = "2Q"
    private static let a1in = 0, a1out = 1, am = 2

    private let capacity: Int
    private let a1inTarget: Int
    private let a1outLimit: Int
    private var lists: KeyLists

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        a1inTarget = max(1, self.capacity / 4)
        a1outLimit = max(1, self.capacity / 2)
        lists = KeyLists(lists: 3, expectedKeys: self.capacity + a1outLimit)
    }

    mutating func access(_ key: Int) -> Bool {
        switch lists.list(of: key) {
        case Self.am:
            lists.moveToHead(key, list: Self.am)
            return true
        case Self.a1in:
            return true
        case Self.a1out:
            lists.remove(key)
            reclaim()
            lists.insertAtHead(key, list: Self.am)
            return false
        default:
            reclaim()
            lists.insertAtHead(key, list: Self.a1in)
            return false
        }
    }

    /// Frees an entry when the cache is full.
    private mutating func reclaim() {
        guard lists.count(Self.a1in) + lists.count(Self.am) >= capacity else { return }
        if lists.count(Self.a1in) > a1inTarget || lists.count(Self.am) == 0, let key = lists.tail(Self.a1in) {
            lists.moveToHead(key, list: Self.a1out)
            if lists.count(Self.a1out) > a1outLimit { lists.removeTail(Self.a1out) }
        } else {
            lists.removeTail(Self.am)
        }
    }
}
