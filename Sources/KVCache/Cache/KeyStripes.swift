#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Orders a `Cache`'s promotions of disk hits against its mutations, per stripe of keys.
///
/// Each key belongs to one of `stripeCount` stripes: a mutex and a word that counts the
/// stripe's mutations (begun and under way). A mutation bumps its stripes' words under
/// their mutexes when it begins and when it ends, and holds no mutex meanwhile; a read
/// takes a `Snapshot` of its key's word and of the all-keys word, without a lock, before
/// it reads the levels; its promotion runs under the stripe's mutex, and only if no
/// mutation was under way when the read began and neither word moved since. So:
/// - a promotion never puts back a value that a mutation replaced or removed: a mutation
///   that began before the promotion's check moved the word; one that begins after it
///   waits for the mutex, and then overwrites what the promotion stored;
/// - a promotion never waits for a mutation's body (no mutex is held across one), and is
///   dropped only when its own key changed, or one of the same stripe (1 in `stripeCount`;
///   a dropped promotion costs the next read a disk read, nothing else);
/// - an operation on every key (`mutatingAllKeys`: removeAll, the memory part of a prefix
///   removal) moves the all-keys word, then takes and releases every stripe's mutex, so
///   no promotion that checked the old word is still storing when its body runs.
///
/// Mutations themselves run one at a time (`WriteCoordinator`'s mutation lock): this type
/// orders them only against promotions.
final class KeyStripes: @unchecked Sendable {
    /// What a read saw when it began; a promotion compares it under the stripe's mutex.
    struct Snapshot: Sendable {
        fileprivate let stripe: Int
        fileprivate let word: UInt64
        fileprivate let allKeysWord: UInt64
    }

    static let stripeCount = 256
    /// Added to a word while a mutation is under way (the low 48 bits count begins and ends).
    private static let underWay: UInt64 = 1 << 48
    private static let begin = underWay &+ 1
    private static let end = 1 &- underWay

    /// Each stripe on a cache line of its own: its mutex, then its word.
    private let stripes: UnsafeMutableRawPointer
    private static let wordOffset = roundUp(MemoryLayout<pthread_mutex_t>.stride,
                                            to: MemoryLayout<Atomic<UInt64>>.alignment)
    private static let stride = roundUp(wordOffset + MemoryLayout<Atomic<UInt64>>.stride, to: cacheLine)
    private static let cacheLine = 64
    private let allKeys = Atomic<UInt64>(0)

    init() {
        stripes = .allocate(byteCount: Self.stripeCount * Self.stride, alignment: Self.cacheLine)
        for index in 0..<Self.stripeCount {
            PThreadMutex.initialize(at: mutex(index), spins: true)
            word(index).initialize(to: Atomic(0))
        }
    }

    deinit {
        for index in 0..<Self.stripeCount {
            PThreadMutex.destroy(at: mutex(index))
            word(index).deinitialize(count: 1)
        }
        stripes.deallocate()
    }

    /// The snapshot a read of `key` takes before it reads the levels.
    func snapshot(of key: ByteWiseKey) -> Snapshot {
        let stripe = Self.stripe(of: key)
        // The word before the all-keys word: each load orders the levels' reads after it.
        let word = word(stripe).pointee.load(ordering: .acquiring)
        return Snapshot(stripe: stripe, word: word, allKeysWord: allKeys.load(ordering: .acquiring))
    }

    /// Runs `body` (a promotion) under the snapshot's stripe mutex if its key's stripe and
    /// every key are as the read saw them, with no mutation under way then; returns
    /// whether it ran.
    func promote(_ snapshot: Snapshot, _ body: () -> Void) -> Bool {
        guard snapshot.word < Self.underWay, snapshot.allKeysWord < Self.underWay else { return false }
        return withMutex(snapshot.stripe) {
            guard word(snapshot.stripe).pointee.load(ordering: .relaxed) == snapshot.word,
                  allKeys.load(ordering: .relaxed) == snapshot.allKeysWord else { return false }
            body()
            return true
        }
    }

    /// Runs `body` as a mutation of `key`.
    func mutating<Result>(_ key: ByteWiseKey, _ body: () throws -> Result) rethrows -> Result {
        let index = Self.stripe(of: key)
        bump(index, by: Self.begin)
        defer { bump(index, by: Self.end) }
        return try body()
    }

    /// Runs `body` as a mutation of `keys` (bumping each of their stripes once).
    func mutating<Result>(_ keys: some Sequence<ByteWiseKey>, _ body: () throws -> Result) rethrows -> Result {
        var indices = Set<Int>()
        for key in keys { indices.insert(Self.stripe(of: key)) }
        for index in indices { bump(index, by: Self.begin) }
        defer { for index in indices { bump(index, by: Self.end) } }
        return try body()
    }

    /// Runs `body` as a mutation of every key: promotions whose reads began before it
    /// ends are dropped, and none stores while it runs.
    func mutatingAllKeys<Result>(_ body: () throws -> Result) rethrows -> Result {
        allKeys.wrappingAdd(Self.begin, ordering: .sequentiallyConsistent)
        // A promotion that checked the old word before the bump finishes before `body`.
        for index in 0..<Self.stripeCount { withMutex(index) {} }
        defer { allKeys.wrappingAdd(Self.end, ordering: .sequentiallyConsistent) }
        return try body()
    }

    /// Inside a mutation of `snapshot`'s key (which bumped its stripe once): true if
    /// nothing else changed that stripe, or every key, since the snapshot.
    func isUnchangedBesidesThisMutation(since snapshot: Snapshot) -> Bool {
        word(snapshot.stripe).pointee.load(ordering: .relaxed) == snapshot.word &+ Self.begin
            && allKeys.load(ordering: .relaxed) == snapshot.allKeysWord
    }

    private func bump(_ index: Int, by delta: UInt64) {
        withMutex(index) { _ = word(index).pointee.wrappingAdd(delta, ordering: .releasing) }
    }

    private func withMutex<Result>(_ index: Int, _ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex(index))
        defer { pthread_mutex_unlock(mutex(index)) }
        return try body()
    }

    private func mutex(_ index: Int) -> UnsafeMutablePointer<pthread_mutex_t> {
        (stripes + index * Self.stride).assumingMemoryBound(to: pthread_mutex_t.self)
    }

    private func word(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (stripes + index * Self.stride + Self.wordOffset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// A key's stripe: FNV-1a of its bytes, so the same keys share a stripe in every run.
    static func stripe(of key: ByteWiseKey) -> Int {
        let hash = FileNameHash.fnv1a64(key.string)
        return Int(truncatingIfNeeded: (hash ^ (hash >> 32)) % UInt64(stripeCount))
    }

    private static func roundUp(_ value: Int, to multiple: Int) -> Int {
        (value + multiple - 1) / multiple * multiple
    }
}
