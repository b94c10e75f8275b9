#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock and a generation per key, for keys some caller is using right now.
///
/// Mutations of a key hold its lock and bump its generation; a promotion of a
/// disk hit holds the same lock while it checks the generation it saw when its
/// read began. So a promotion waits only for a mutation of its own key, and is
/// dropped only if its own key changed. Entries live while anyone holds them
/// (counted), so the table stays as small as the set of keys in use.
final class KeyLockTable: @unchecked Sendable {
    final class Entry: @unchecked Sendable {
        let lock = PThreadMutex()
        /// Guarded by the table's mutex.
        fileprivate var users = 0
        /// Guarded by the table's mutex; bumped by every mutation of the key.
        fileprivate var generation: UInt64 = 0
    }

    private let mutex = PThreadMutex()
    private var entries: [ByteWiseKey: Entry] = [:]

    /// The key's entry, held until `release`; with the generation it has now.
    func acquire(_ key: ByteWiseKey) -> (entry: Entry, generation: UInt64) {
        mutex.lock()
        defer { mutex.unlock() }
        let entry: Entry
        if let existing = entries[key] {
            entry = existing
        } else {
            entry = Entry()
            entries[key] = entry
        }
        entry.users += 1
        return (entry, entry.generation)
    }

    func release(_ key: ByteWiseKey, _ entry: Entry) {
        mutex.lock()
        defer { mutex.unlock() }
        entry.users -= 1
        if entry.users == 0 { entries[key] = nil }
    }

    /// Records a mutation of the entry's key (the caller holds `entry.lock`).
    func bump(_ entry: Entry) {
        mutex.withLock { entry.generation &+= 1 }
    }

    /// The entry's generation now.
    func generation(of entry: Entry) -> UInt64 {
        mutex.withLock { entry.generation }
    }

    /// Number of keys in use (for tests).
    var count: Int { mutex.withLock { entries.count } }
}
