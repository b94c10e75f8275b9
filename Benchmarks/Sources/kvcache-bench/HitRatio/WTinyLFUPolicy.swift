/// Static W-TinyLFU (Einziger, Eytan, Friedman and Manes, "Adaptive Software
/// Cache Management", Middleware '18; Caffeine's simulator's WindowTinyLfuPolicy
/// with a fixed window): a window LRU of 1 % of the entries in front of a
/// segmented LRU main space of 99 %, 20 % of it probation and 80 % protected.
/// Every request is counted in a `FrequencySketch`. A new key enters the window;
/// the key the window pushes out becomes the candidate, at the head of probation,
/// and when the cache is over its size it stays only if the sketch estimates it
/// more frequent than probation's least recently used key (the victim), which is
/// then evicted instead. A hit in probation promotes the key to protected, whose
/// least recently used key drops back to probation when protected is over 80 %.
/// No doorkeeper.
struct WTinyLFUPolicy: Policy {
    static let name = "W-TinyLFU (1%)"
    private static let window = 0, probation = 1, protected = 2

    private let capacity: Int
    private let windowLimit: Int
    private let protectedLimit: Int
    private var lists: KeyLists
    private var sketch: FrequencySketch

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        let main = Int(0.99 * Double(self.capacity))
        windowLimit = max(1, self.capacity - main)
        protectedLimit = Int(0.8 * Double(self.capacity - windowLimit))
        lists = KeyLists(lists: 3, expectedKeys: self.capacity)
        sketch = FrequencySketch(capacity: self.capacity)
    }

    mutating func access(_ key: Int) -> Bool {
        sketch.increment(key)
        switch lists.list(of: key) {
        case Self.window:
            lists.moveToHead(key, list: Self.window)
            return true
        case Self.protected:
            lists.moveToHead(key, list: Self.protected)
            return true
        case Self.probation:
            lists.moveToHead(key, list: Self.protected)
            if lists.count(Self.protected) > protectedLimit, let demoted = lists.tail(Self.protected) {
                lists.moveToHead(demoted, list: Self.probation)
            }
            return true
        default:
            lists.insertAtHead(key, list: Self.window)
            if lists.count(Self.window) > windowLimit { admitFromWindow() }
            return false
        }
    }

    private var cached: Int { lists.count(Self.window) + lists.count(Self.probation) + lists.count(Self.protected) }

    /// Moves the window's oldest key to probation and, when the cache is over its
    /// size, keeps the more frequent of it and probation's oldest key.
    private mutating func admitFromWindow() {
        guard let candidate = lists.tail(Self.window) else { return }
        lists.moveToHead(candidate, list: Self.probation)
        guard cached > capacity, let victim = lists.tail(Self.probation) else { return }
        if sketch.frequency(candidate) > sketch.frequency(victim) {
            lists.remove(victim)
        } else {
            lists.remove(candidate)
        }
    }
}
