/// One stripe of a memory cache's hash table: the entries whose keys hash to it, and
/// the values replaced in place that wait to be released in the background.
///
/// Under the adaptive policy, readers look entries up holding only their read lane's
/// lock of the stripe (`LaneStripe`), so a writer changes a stripe's table only with
/// that stripe's lock held in every lane; readers of other stripes go on meanwhile,
/// and a table that grows rehashes one stripe's entries. Entries are added and removed
/// by the holder of the cache's lock; a value whose key and cost stay is replaced by a
/// writer that holds the stripe's locks alone (`MemoryCache.replaceInPlace`).
@usableFromInline
final class TableStripe<Key: Hashable, Entry> {
    // Guarded by the stripe's lock in every lane (under `.lru`, by the cache's lock);
    // read (never written) by the holder of any one of those locks.
    @usableFromInline @exclusivity(unchecked) var table: [TableKey<Key>: Entry] = [:]
    /// Entries whose values were replaced in place, for the background releaser, and
    /// their costs; handed over in batches of `releaseBatchCount` or `releaseBatchCost`
    /// (see `LRUStorage.setReleaseBatches`).
    @usableFromInline @exclusivity(unchecked) var released = ContiguousArray<Entry>()
    @usableFromInline @exclusivity(unchecked) var releasedCost: Int64 = 0
    @usableFromInline @exclusivity(unchecked) var releaseBatchCount = 1
    @usableFromInline @exclusivity(unchecked) var releaseBatchCost: Int64 = 1

    init() {}

    /// Whether the released entries make a batch to hand over.
    @inlinable
    var releaseBatchIsFull: Bool { released.count >= releaseBatchCount || releasedCost >= releaseBatchCost }

    /// The released entries, now none.
    @inlinable
    func takeReleased() -> ContiguousArray<Entry> {
        var batch = ContiguousArray<Entry>()
        swap(&batch, &released)
        releasedCost = 0
        return batch
    }
}
