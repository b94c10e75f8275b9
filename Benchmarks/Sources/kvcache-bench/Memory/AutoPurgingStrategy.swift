/// The AutoPurgingImageCache design (AlamofireImage, AFNetworking): a
/// dictionary of entries stamped with their last access; when the count goes
/// over the limit, *all* entries are sorted by last access and the oldest are
/// removed down to a lower watermark (60 %, as 100 MB → 60 MB there).
///
/// The original serializes on a concurrent queue with barriers (reads too,
/// since they update the access stamp); a pthread mutex is used here so the
/// comparison isolates the eviction algorithm. The stamp is a counter, not a
/// `Date()`, which only flatters this baseline.
final class AutoPurgingStrategy: MemoryStrategy, @unchecked Sendable {
    static let name = "AutoPurging (sort on purge)"

    private struct Entry {
        var value: SmallValue
        var lastAccess: UInt64
    }

    private let mutex = PthreadMutex()
    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0
    private let countLimit: Int
    private let countAfterPurge: Int

    init(countLimit: Int?) {
        self.countLimit = countLimit ?? .max
        countAfterPurge = countLimit.map { Int(Double($0) * 0.6) } ?? .max
    }

    func setValue(_ value: SmallValue, forKey key: String) {
        mutex.withLock {
            clock &+= 1
            entries[key] = Entry(value: value, lastAccess: clock)
            if entries.count > countLimit { purge() }
        }
    }

    func value(forKey key: String) -> SmallValue? {
        mutex.withLock {
            clock &+= 1
            let now = clock
            guard let index = entries.index(forKey: key) else { return nil }
            entries.values[index].lastAccess = now
            return entries.values[index].value
        }
    }

    private func purge() {
        let byAccess = entries.sorted { $0.value.lastAccess < $1.value.lastAccess }
        var surplus = entries.count - countAfterPurge
        for (key, _) in byAccess {
            guard surplus > 0 else { break }
            entries.removeValue(forKey: key)
            surplus -= 1
        }
    }
}
