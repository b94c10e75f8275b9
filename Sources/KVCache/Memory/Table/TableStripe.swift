import CProcessor
import Synchronization

/// One stripe of a memory cache's hash table: a chained hash table whose readers take
/// no lock that its writers take.
///
/// Writers (the holder of the cache's lock inserting or removing, or a set replacing a
/// value in place) take the stripe's `writeLock`; they never change a published node,
/// only the links to it: a new value is a new node, and the node it replaces or a removed
/// one is unlinked and retired. Readers walk the chains holding only their read lane's
/// lock of the stripe (`LaneStripe`), which writers never take: a node they may still be
/// looking at is freed only after a grace period, once every lane's lock of the stripe
/// has been taken and released (`ReadLanes.synchronize(stripe:)`), in batches
/// (`retiredBatchIsFull`), so a write costs one lock, not one per lane. A table that grows
/// is copied into new nodes (a reader on the old chains still sees every entry).
/// Under `.lru` there is one stripe, read and written under the cache's lock only.
@usableFromInline
final class TableStripe<Key: Hashable, Entry> {
    @usableFromInline typealias Node = TableNode<Key, Entry>
    @usableFromInline typealias NodePointer = UnsafeMutablePointer<Node>
    @usableFromInline typealias Buckets = UnsafeMutablePointer<Atomic<UInt>>

    /// Taken by every writer of the stripe, never by a reader.
    @usableFromInline let writeLock = PThreadMutex()
    /// The address of the bucket array: a word holding `bucketCount - 1`, then each
    /// bucket's first node (0 for none). Published with a release store.
    @usableFromInline let root: Atomic<UInt>
    /// `bucketCount - 1` of the array at `root`, for readers that may not dereference it
    /// (`bucketAddressHint`): stored after each change of `root`, so the two may disagree
    /// for a moment.
    @usableFromInline let bucketMask: Atomic<UInt>

    // Guarded by `writeLock`.
    /// Entries linked in the table.
    @usableFromInline @exclusivity(unchecked) var count = 0
    /// Nodes and bucket arrays no longer linked, that a reader may still be looking at.
    @usableFromInline @exclusivity(unchecked) var retiredNodes = ContiguousArray<NodePointer>()
    @usableFromInline @exclusivity(unchecked) var retiredBuckets = ContiguousArray<Buckets>()
    /// The costs of the entries retired nodes hold (values waiting for release).
    @usableFromInline @exclusivity(unchecked) var retiredCost: Int64 = 0
    /// How many retired nodes, or what cost, make a batch to free after a grace period
    /// (see `LRUStorage.setReleaseBatches`).
    @usableFromInline @exclusivity(unchecked) var releaseBatchCount = 1
    @usableFromInline @exclusivity(unchecked) var releaseBatchCost: Int64 = 1

    @inlinable static var initialBucketCount: Int { 8 }

    init() {
        root = Atomic(UInt(bitPattern: Self.allocateBuckets(count: Self.initialBucketCount)))
        bucketMask = Atomic(UInt(Self.initialBucketCount - 1))
    }

    deinit {
        // No reader is left: everything linked or retired is freed here.
        let buckets = currentBuckets
        for bucket in 1...Self.bucketCount(of: buckets) {
            var word = (buckets + bucket).pointee.load(ordering: .relaxed)
            while let node = NodePointer(bitPattern: word) {
                word = node.pointee.next.load(ordering: .relaxed)
                Self.free(node)
            }
        }
        buckets.deallocate()
        for node in retiredNodes { Self.free(node) }
        retiredBuckets.forEach { $0.deallocate() }
    }

    @inlinable
    static func allocateBuckets(count: Int) -> Buckets {
        let buckets = Buckets.allocate(capacity: count + 1)
        buckets.initialize(to: Atomic(UInt(count - 1)))
        for bucket in 1...count { (buckets + bucket).initialize(to: Atomic(0)) }
        return buckets
    }

    @inlinable
    static func bucketCount(of buckets: Buckets) -> Int { Int(buckets.pointee.load(ordering: .relaxed)) + 1 }

    @inlinable
    static func free(_ node: NodePointer) {
        node.deinitialize(count: 1)
        node.deallocate()
    }

    @inlinable
    var currentBuckets: Buckets { Buckets(bitPattern: root.load(ordering: .acquiring)).unsafelyUnwrapped }

    /// The bucket a hash falls in.
    @inlinable
    static func bucket(_ hash: Int, in buckets: Buckets) -> Buckets {
        buckets + 1 + Int(UInt(bitPattern: hash) & buckets.pointee.load(ordering: .relaxed))
    }

    /// Where the bucket of table hash `hash` likely is, to prefetch before a lane's lock is
    /// taken: from `root` and `bucketMask`, neither dereferenced, since without the lock
    /// the array may be retired and freed at any moment (a prefetch of any address is safe).
    @inlinable
    func bucketAddressHint(forHash hash: Int) -> UInt {
        let mask = bucketMask.load(ordering: .relaxed)
        return root.load(ordering: .relaxed) &+ (1 &+ (UInt(bitPattern: hash) & mask)) &* UInt(MemoryLayout<UInt>.stride)
    }

    /// Starts loading the bucket of table hash `hash` (most often a cache miss), so that it
    /// loads while the caller takes a lock. Safe without any lock.
    @inlinable
    func prefetchBucket(forHash hash: Int) {
        kvcache_prefetch_for_reading(UnsafeRawPointer(bitPattern: bucketAddressHint(forHash: hash)))
    }

    /// The hash a key is placed by (`TableKey`'s: seeded per process).
    @inlinable
    static func hash(of key: Key) -> Int { TableKey(key).hashValue }

    // MARK: - Reading

    /// The node of `key`, whose table hash is `hash`. Called holding a read lane's lock of
    /// the stripe or `writeLock` (under `.lru`, the cache's lock); the node stays valid
    /// while it is held.
    @inlinable
    func node(forKey key: Key, hash: Int) -> NodePointer? {
        var word = Self.bucket(hash, in: currentBuckets).pointee.load(ordering: .acquiring)
        while let node = NodePointer(bitPattern: word) {
            if node.pointee.hash == hash && node.pointee.key == key { return node }
            word = node.pointee.next.load(ordering: .acquiring)
        }
        return nil
    }

    /// The entry of `key` (see `node(forKey:hash:)` for the lock to hold).
    @inlinable
    func entry(forKey key: Key, hash: Int) -> Entry? {
        node(forKey: key, hash: hash).map { $0.pointee.entry }
    }

    /// Calls `body` with every entry. Called holding `writeLock`, or with no other
    /// thread using the stripe.
    func forEach(_ body: (Key, Entry) -> Void) {
        let buckets = currentBuckets
        for bucket in 1...Self.bucketCount(of: buckets) {
            var word = (buckets + bucket).pointee.load(ordering: .acquiring)
            while let node = NodePointer(bitPattern: word) {
                body(node.pointee.key, node.pointee.entry)
                word = node.pointee.next.load(ordering: .acquiring)
            }
        }
    }

    // MARK: - Writing (holding `writeLock`)

    /// Where `key`'s node is linked in its bucket: the node, the one before it (nil when
    /// the bucket points to it) and the bucket. Called holding `writeLock`.
    @inlinable
    func position(ofKey key: Key, hash: Int) -> (node: NodePointer?, previous: NodePointer?, bucket: Buckets) {
        let bucket = Self.bucket(hash, in: currentBuckets)
        var previous: NodePointer? = nil
        var word = bucket.pointee.load(ordering: .relaxed)
        while let node = NodePointer(bitPattern: word) {
            if node.pointee.hash == hash && node.pointee.key == key { return (node, previous, bucket) }
            previous = node
            word = node.pointee.next.load(ordering: .relaxed)
        }
        return (nil, nil, bucket)
    }

    /// Stores `entry` for `key` and returns the entry it replaced, whose node is retired
    /// with `replacedCost` of it (its value waits for release).
    @inlinable
    func setEntry(_ entry: Entry, forKey key: Key, hash: Int, replacedCost: (Entry) -> Int64) -> Entry? {
        let (found, previous, bucket) = position(ofKey: key, hash: hash)
        if let found {
            let old = found.pointee.entry
            replace(found, after: previous, in: bucket, with: entry, cost: replacedCost(old))
            return old
        }
        let node = Self.makeNode(next: bucket.pointee.load(ordering: .relaxed), hash: hash, key: key, entry: entry)
        link(node, after: nil, in: bucket)
        count += 1
        if count > Self.bucketCount(of: currentBuckets) { grow() }
        return nil
    }

    /// Removes the entry of `key` and returns it; its node is retired with `cost` of it.
    @inlinable
    func removeEntry(forKey key: Key, hash: Int, cost: (Entry) -> Int64) -> Entry? {
        let (found, previous, bucket) = position(ofKey: key, hash: hash)
        guard let found else { return nil }
        let old = found.pointee.entry
        // The node keeps its link: a reader standing on it walks on.
        let next = found.pointee.next.load(ordering: .relaxed)
        if let previous {
            previous.pointee.next.store(next, ordering: .releasing)
        } else {
            bucket.pointee.store(next, ordering: .releasing)
        }
        count -= 1
        retire(found, cost: cost(old))
        return old
    }

    /// Links a new node holding `entry` in place of `node`, which is retired with `cost`.
    @inlinable
    func replace(_ node: NodePointer, after previous: NodePointer?, in bucket: Buckets, with entry: Entry, cost: Int64) {
        let next = node.pointee.next.load(ordering: .relaxed)
        link(Self.makeNode(next: next, hash: node.pointee.hash, key: node.pointee.key, entry: entry), after: previous, in: bucket)
        retire(node, cost: cost)
    }

    @inlinable
    static func makeNode(next: UInt, hash: Int, key: Key, entry: Entry) -> NodePointer {
        let node = NodePointer.allocate(capacity: 1)
        node.initialize(to: Node(next: next, hash: hash, key: key, entry: entry))
        return node
    }

    /// Links `node`, whose own link is set, where `previous`'s (or the bucket's) pointed.
    @inlinable
    func link(_ node: NodePointer, after previous: NodePointer?, in bucket: Buckets) {
        let word = UInt(bitPattern: node)
        if let previous {
            previous.pointee.next.store(word, ordering: .releasing)
        } else {
            bucket.pointee.store(word, ordering: .releasing)
        }
    }

    @inlinable
    func retire(_ node: NodePointer, cost: Int64) {
        retiredNodes.append(node)
        retiredCost = retiredCost.addingSaturated(cost)
    }

    /// Doubles the buckets: every entry is copied into a new node in the new array, which
    /// is then published; the old nodes and array are retired (a reader on them still
    /// finds every entry they held). Inlinable so that it is specialized for the cache's
    /// key and value: unspecialized, each copy looked up the node's generic type at run time.
    @inlinable
    func grow() {
        let old = currentBuckets
        let oldCount = Self.bucketCount(of: old)
        let buckets = Self.allocateBuckets(count: oldCount * 2)
        for bucket in 1...oldCount {
            var word = (old + bucket).pointee.load(ordering: .relaxed)
            while let node = NodePointer(bitPattern: word) {
                word = node.pointee.next.load(ordering: .relaxed)
                let hash = node.pointee.hash
                let target = Self.bucket(hash, in: buckets)
                let copy = Self.makeNode(
                    next: target.pointee.load(ordering: .relaxed), hash: hash, key: node.pointee.key, entry: node.pointee.entry)
                target.pointee.store(UInt(bitPattern: copy), ordering: .relaxed)
                retiredNodes.append(node)
            }
        }
        root.store(UInt(bitPattern: buckets), ordering: .releasing)
        bucketMask.store(UInt(oldCount * 2 - 1), ordering: .relaxed)
        retiredBuckets.append(old)
    }

    /// Whether the retired nodes make a batch to free after a grace period.
    @inlinable
    var retiredBatchIsFull: Bool {
        retiredNodes.count >= releaseBatchCount || retiredCost >= releaseBatchCost || !retiredBuckets.isEmpty
    }

    /// The retired nodes if they make a batch (`retiredBatchIsFull`), now none.
    @inlinable
    func takeRetiredIfFull(stripe: Int) -> RetiredNodes<Key, Entry>? {
        retiredBatchIsFull ? takeRetired(stripe: stripe) : nil
    }

    /// The retired nodes and arrays, now none, or nil if there are none. `stripe` is this
    /// stripe's index, for the grace period.
    @inlinable
    func takeRetired(stripe: Int) -> RetiredNodes<Key, Entry>? {
        guard !retiredNodes.isEmpty || !retiredBuckets.isEmpty else { return nil }
        let retired = RetiredNodes<Key, Entry>(stripe: stripe, nodes: retiredNodes, buckets: retiredBuckets)
        retiredNodes = []
        retiredBuckets = []
        retiredCost = 0
        return retired
    }

    /// What is wrong with the stripe's bucket array: a `bucketMask` other than its size
    /// less one. Called holding `writeLock` or the cache's lock.
    func invariantViolations() -> [String] {
        let count = Self.bucketCount(of: currentBuckets)
        let mask = bucketMask.load(ordering: .relaxed)
        return mask == UInt(count - 1) ? [] : ["bucket mask \(mask) for \(count) buckets"]
    }

    /// Exchanges every entry and retired node with `other`. Called holding both
    /// stripes' `writeLock`; readers of either may still be on the nodes that leave it.
    func swapContents(with other: TableStripe) {
        let mine = root.load(ordering: .relaxed)
        root.store(other.root.load(ordering: .relaxed), ordering: .releasing)
        other.root.store(mine, ordering: .releasing)
        let myMask = bucketMask.load(ordering: .relaxed)
        bucketMask.store(other.bucketMask.load(ordering: .relaxed), ordering: .relaxed)
        other.bucketMask.store(myMask, ordering: .relaxed)
        swap(&count, &other.count)
        swap(&retiredNodes, &other.retiredNodes)
        swap(&retiredBuckets, &other.retiredBuckets)
        swap(&retiredCost, &other.retiredCost)
    }
}

/// An entry of a table stripe, allocated on its own: published once, then never
/// changed but for its link, which readers load with acquire ordering.
@usableFromInline
struct TableNode<Key: Hashable, Entry>: ~Copyable {
    /// The next node's address in the bucket's chain (0 at the end).
    @usableFromInline let next: Atomic<UInt>
    @usableFromInline let hash: Int
    @usableFromInline let key: Key
    @usableFromInline let entry: Entry

    @inlinable
    init(next: UInt, hash: Int, key: Key, entry: Entry) {
        self.next = Atomic(next)
        self.hash = hash
        self.key = key
        self.entry = entry
    }
}

/// Nodes and bucket arrays a table stripe unlinked, freed when this is released: only
/// after a grace period (`ReadLanes.synchronize(stripe:)`), when no reader can be on them.
@usableFromInline
final class RetiredNodes<Key: Hashable, Entry>: @unchecked Sendable {
    /// The stripe they came from, whose grace period they wait for.
    @usableFromInline let stripe: Int
    @usableFromInline let nodes: ContiguousArray<TableStripe<Key, Entry>.NodePointer>
    @usableFromInline let buckets: ContiguousArray<TableStripe<Key, Entry>.Buckets>
    /// Frees the nodes. Made where the key and value types are known (the initializer is
    /// inlined into the cache's specialized code), because the deinitializer of a generic
    /// class is not specialized: freeing there looked up the nodes' type at run time, once
    /// a node.
    @usableFromInline let freeNodes: (ContiguousArray<TableStripe<Key, Entry>.NodePointer>) -> Void

    @inlinable
    init(stripe: Int, nodes: ContiguousArray<TableStripe<Key, Entry>.NodePointer>,
         buckets: ContiguousArray<TableStripe<Key, Entry>.Buckets>) {
        self.stripe = stripe
        self.nodes = nodes
        self.buckets = buckets
        freeNodes = { nodes in for node in nodes { TableStripe<Key, Entry>.free(node) } }
    }

    var count: Int { nodes.count }

    deinit {
        freeNodes(nodes)
        buckets.forEach { $0.deallocate() }
    }
}

extension TableStripe where Key == ByteWiseKey {
    /// The entry of the key whose UTF-8 bytes are `bytes` and whose table hash is `hash`
    /// (see `node(forKey:hash:)` for the lock to hold). Each key is compared where it lies:
    /// passing it to a comparison would copy, and retain, it.
    @inlinable
    func entry(hash: Int, keyBytes bytes: UnsafeRawBufferPointer) -> Entry? {
        var word = Self.bucket(hash, in: currentBuckets).pointee.load(ordering: .acquiring)
        while let node = NodePointer(bitPattern: word) {
            if node.pointee.hash == hash && ByteWiseKey.bytesEqual(node.pointee.key.string, bytes) { return node.pointee.entry }
            word = node.pointee.next.load(ordering: .acquiring)
        }
        return nil
    }
}
