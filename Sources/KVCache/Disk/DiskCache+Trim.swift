import Foundation

extension DiskCache {
    /// Removes least recently used entries until at most `count` remain; returns how many went.
    /// A negative count throws `KVCacheError.invalidArgument` (as do the other trims' negative
    /// arguments) and removes nothing.
    @discardableResult
    public func trim(toCount count: Int) throws -> Int {
        try Validation.check(count >= 0, "trim(toCount:) needs a count of at least 0, not \(count)")
        return try runTrim(.count(count), reason: .count)
    }

    /// Removes least recently used entries until the values total at most `size` bytes.
    @discardableResult
    public func trim(toSize size: Int64) throws -> Int {
        try Validation.check(size >= 0, "trim(toSize:) needs a size of at least 0, not \(size)")
        return try runTrim(.size(size), reason: .cost)
    }

    /// Removes entries not accessed for longer than `age`.
    @discardableResult
    public func trim(toAge age: Duration) throws -> Int {
        try Validation.check(age >= .zero, "trim(toAge:) needs an age of at least zero, not \(age)")
        return try runTrim(.age(age.seconds), reason: .expired)
    }

    /// Removes least recently used entries until the disk has `bytes` free, or the cache is empty.
    @discardableResult
    public func trim(toFreeSpace bytes: Int64) throws -> Int {
        try Validation.check(bytes >= 0, "trim(toFreeSpace:) needs a size of at least 0, not \(bytes)")
        guard let free = FileStore.freeSpace(at: path) else {
            throw KVCacheError.io(operation: "statvfs", path: path, errno: errno)
        }
        guard free < bytes else { return 0 }
        let size = try totalSize
        return try runTrim(.size(max(0, size - (bytes - free))), reason: .pressure)
    }

    /// Removes every entry whose expiration date has passed (when a ``Cache`` with a
    /// fail-safe window opened this level: by more than that window).
    @discardableResult
    public func removeExpired() throws -> Int {
        try runTrim(.expired, reason: .expired)
    }

    /// Runs trim steps until the goal is met, releasing the lock between steps.
    func runTrim(_ goal: KVStorage.TrimGoal, reason: EvictionReason) throws -> Int {
        var total = 0
        var limit = KVStorage.trimStepLimit
        while true {
            let removed: Int
            do {
                removed = try performWork(freesSpace: true, needs: .committed,
                                          prepare: { try $0.trimWork(goal, limit: limit, reason: reason) },
                                          finish: { $0.trimmed($1, reason: reason) })
            } catch KVCacheError.Code.diskFull where limit > 1 {
                // Even with the reserve released, this step's commit did not fit. Smaller
                // steps need fewer WAL frames each (the WAL is emptied before each).
                limit = max(1, limit / 8)
                continue
            }
            if removed == 0 { return total }
            total += removed
        }
    }
}
