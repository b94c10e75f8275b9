/// One stripe of a memory cache's hash table: the entries whose keys hash to it.
///
/// Under the adaptive policy, readers look entries up holding only their read lane's
/// lock of the stripe (`LaneStripe`), so a writer (who holds the cache's lock) changes
/// a stripe's table only with that stripe's lock held in every lane. Readers of other
/// stripes go on meanwhile, and a table that grows rehashes one stripe's entries.
@usableFromInline
final class TableStripe<Key: Hashable, Entry> {
    // Guarded by the stripe's lock in every lane (under `.lru`, by the cache's lock);
    // read (never written) by the holder of any one of those locks, or of the cache's.
    @usableFromInline @exclusivity(unchecked) var table: [TableKey<Key>: Entry] = [:]

    init() {}
}
