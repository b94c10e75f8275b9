import Foundation

/// The read path of the disk level: this process's writes in the write buffer
/// (under its lock, memory work only), then the manifest on a read connection of
/// the pool. It never takes the store's lock, so a get does not wait for a commit,
/// a checkpoint, an fsync, a trim, `verify` or another key's write.
///
/// A read that finds no write for its key in the buffer reads a WAL snapshot that
/// has every commit made before that check (a new one, or one kept open while the
/// WAL-index header shows no commit since: see ReadConnection), so it sees every
/// commit that had left the buffer by then (see WriteBuffer). While the buffer
/// holds no write at all, the check is one atomic load. What it records afterwards (an access time, a queued
/// removal of an expired or broken row) is recorded only if no write for the key
/// arrived meanwhile: the read is ordered before that write.
struct DiskReader: Sendable {
    let buffer: WriteBuffer
    let pool: ReadConnectionPool
    let files: FileStore
    let options: KVStorage.Options

    /// What a read finds.
    enum Lookup {
        /// An inline value, with its expiration as it stands after this read.
        case value(Data, Expiration)
        /// No value: absent or expired.
        case miss
        /// A file value, to be read from `files` (the hit and the access are already recorded).
        case file(name: String, size: Int64, Expiration)
    }

    /// Work a read leaves for the store (scheduled by the owner, off the caller's path).
    struct FollowUps: OptionSet {
        let rawValue: Int
        static let accessFlush = FollowUps(rawValue: 1)
        static let urgentAccessFlush = FollowUps(rawValue: 2)
        /// A removal was queued: its group commit must be scheduled.
        static let commit = FollowUps(rawValue: 4)
    }

    /// Looks `key` up in the buffer, then the manifest, records the hit or miss and
    /// the access. For a file value the caller reads the file (see `fileReadFailed`).
    func lookUp(forKey key: String, followUps: inout FollowUps) throws -> Lookup {
        let now = options.clock()
        var obsoleteFile: String?
        defer { if let obsoleteFile { files.remove(obsoleteFile) } }
        if buffer.mayHoldWrites {
            var hook: (@Sendable (String) -> Void)?
            let buffered = buffer.withLock { state -> Lookup? in
                guard let write = state.latestWrite(forKey: key) else {
                    hook = state.readWillQueryManifest
                    return nil
                }
                guard let value = write.value else {
                    state.counters.misses += 1
                    return .miss
                }
                return finish(key, value, isPending: true, canRecord: true, now: now, state: &state,
                              followUps: &followUps, obsoleteFile: &obsoleteFile)
            }
            if let buffered { return buffered }
            hook?(key)
        }
        let options = options
        let found = try pool.withConnection { connection -> Found in
            guard let row = try Self.select(key, on: connection) else {
                connection.misses += 1
                return .decided(.miss)
            }
            // The common hit needs nothing from the buffer: counted on the connection.
            guard let hit = Self.plainHit(row, now: now, options: options) else { return .row(row) }
            connection.hits += 1
            return .decided(hit)
        }
        let row: ManifestRow
        switch found {
        case .decided(let lookup): return lookup
        case .row(let undecided): row = undecided
        }
        return buffer.withLock { state in
            // A write of this key since the check above is newer than this read.
            let canRecord = state.latestWrite(forKey: key) == nil
            return finish(key, row, isPending: false, canRecord: canRecord, now: now, state: &state,
                          followUps: &followUps, obsoleteFile: &obsoleteFile)
        }
    }

    /// What a read of the manifest found: decided on the connection, or a row to
    /// decide under the buffer's lock.
    private enum Found {
        case decided(Lookup)
        case row(ManifestRow)
    }

    /// The lookup of a row that is intact, unexpired and was accessed within the
    /// access-time resolution, so the read records nothing: or nil. (After the clock
    /// went backwards, a read within the resolution of the clock, not of the latest
    /// recorded time, records nothing: LRU order is kept to that resolution.)
    private static func plainHit(_ row: ManifestRow, now: Double, options: KVStorage.Options) -> Lookup? {
        if row.isDamaged { return nil }
        if options.extendsExpirationOnAccess, row.lifetime != nil { return nil }
        if !row.isLive(at: now) { return nil }
        if !options.readOnly, now - row.accessed >= options.accessTimeResolution { return nil }
        return hit(row, options: options)
    }

    /// A hit's result: the value (or its file) with the expiration as the read leaves it
    /// (extended from now when reads extend it).
    private static func hit(_ row: ManifestRow, options: KVStorage.Options) -> Lookup {
        var expiration = Expiration.never
        if let deadline = row.deadline {
            if options.extendsExpirationOnAccess, let lifetime = row.lifetime {
                expiration = .after(.clamping(seconds: lifetime))
            } else {
                expiration = Expiration(deadline: deadline)
            }
        }
        if let filename = row.filename { return .file(name: filename, size: row.size, expiration) }
        return .value(row.inline ?? Data(), expiration)
    }

    // Static: a closure that captured `self` would copy the reader (a retain of each
    // of its objects, shared by every reading thread) on each read.
    private static func select(_ key: String, on connection: ReadConnection) throws -> ManifestRow? {
        try connection.selectValue.run { statement in try statement.withBorrowedText(key, at: 1) {
            guard try statement.step() else { return nil }
            let filename = statement.string(at: 0)
            return ManifestRow(filename: filename, inline: filename == nil ? statement.data(at: 5) : nil,
                               size: statement.int64(at: 1), accessed: statement.double(at: 4),
                               deadline: statement.optionalDouble(at: 2), lifetime: statement.optionalDouble(at: 3))
        } }
    }

    /// Decides a found row under the buffer's lock: damaged, expired or a hit.
    private func finish(_ key: String, _ row: ManifestRow, isPending: Bool, canRecord: Bool, now: Double,
                        state: inout WriteBuffer.State, followUps: inout FollowUps,
                        obsoleteFile: inout String?) -> Lookup {
        if row.isDamaged {
            // A damaged row (its inline data is not the recorded size): never return
            // those bytes. `verify` reports it and `verify(repair: true)` removes it.
            state.counters.brokenRows += 1
            state.counters.misses += 1
            return .miss
        }
        if let deadline = state.deadline(of: row, forKey: key, extends: options.extendsExpirationOnAccess),
           deadline <= now {
            state.counters.misses += 1
            // Within the fail-safe retention the entry stays, and reads of it record nothing.
            let removable = now - options.expiredRetention
            guard !options.readOnly, canRecord, deadline <= removable else { return .miss }
            if isPending {
                // The latest write has expired: the key is gone, whatever an older row holds.
                obsoleteFile = state.pending.record(.remove, forKey: key)
                state.counters.evictions[.expired, default: 0] += 1
            } else {
                _ = state.pending.record(.removeIfExpired(now: removable), forKey: key)
            }
            state.accessTimes.remove(key)
            requestCommit(&state, &followUps)
            return .miss
        }
        // Access times have a resolution: a read within it of the stored time writes
        // nothing, so hot keys cost no UPDATE at all (LRU order is kept to that resolution).
        let stamp = state.stamp(now)
        if !options.readOnly, canRecord, stamp - row.accessed >= options.accessTimeResolution
            || (options.extendsExpirationOnAccess && row.lifetime != nil) {
            state.accessTimes.record(key, at: stamp)
            if state.accessTimes.count >= options.accessBufferLimit {
                if !state.isUrgentAccessFlushScheduled {
                    state.isUrgentAccessFlushScheduled = true
                    followUps.insert(.urgentAccessFlush)
                }
            } else if !state.isAccessFlushScheduled {
                state.isAccessFlushScheduled = true
                followUps.insert(.accessFlush)
            }
        }
        state.counters.hits += 1
        return Self.hit(row, options: options)
    }

    private func requestCommit(_ state: inout WriteBuffer.State, _ followUps: inout FollowUps) {
        if !state.isCommitRequested {
            state.isCommitRequested = true
            followUps.insert(.commit)
        }
    }

    /// True if the entry's deadline, extended by a buffered access if configured, has passed.
    private func isExpired(_ row: ManifestRow, key: String, now: Double, state: WriteBuffer.State) -> Bool {
        guard let deadline = state.deadline(of: row, forKey: key, extends: options.extendsExpirationOnAccess) else {
            return false
        }
        return deadline <= now
    }

    /// Undoes what `lookUp` recorded for a file value whose read failed. A read
    /// error (`error`) only takes back the hit. A missing or wrong-size file is
    /// a miss: if the key still names that file the row is broken and its
    /// conditional removal is queued, and the result is false; if the key has
    /// changed meanwhile (the file was replaced or removed by a commit after the
    /// lookup), the result is true: the caller looks it up again.
    func fileReadFailed(forKey key: String, filename: String, error: Error? = nil, seenSwaps: UInt64,
                        followUps: inout FollowUps) -> Bool {
        let buffered = buffer.withLock { state -> PendingWrites.Write? in
            state.counters.hits -= 1
            return state.latestWrite(forKey: key)
        }
        if error != nil { return false }
        let current: String?
        if let buffered {
            current = buffered.value?.filename
        } else {
            current = (try? pool.withConnection { try Self.metadata(key, on: $0) })??.filename
        }
        guard current == filename else { return true }
        var obsoleteFile: String?
        defer { if let obsoleteFile { files.remove(obsoleteFile) } }
        return buffer.withLock { state in
            // A removeAll's folder swap overlapped the read: the file may be on its way
            // back (the last attempt reads under the store's lock, where none runs).
            if seenSwaps % 2 == 1 || buffer.dataFolderSwaps != seenSwaps { return true }
            // Changed since it was checked: look again.
            let latest = state.latestWrite(forKey: key)
            if buffered == nil ? latest != nil : latest?.value?.filename != filename { return true }
            state.counters.brokenRows += 1
            state.counters.misses += 1
            if options.readOnly { return false }
            obsoleteFile = state.pending.record(.removeIfFile(filename), forKey: key)
            state.accessTimes.remove(key)
            requestCommit(&state, &followUps)
            return false
        }
    }

    /// An entry that expired less than `options.expiredRetention` ago (for fail-safe), or
    /// nil. A read-only look: it records no hit, miss, access or removal.
    func expiredLookUp(forKey key: String) throws -> (row: ManifestRow, deadline: Double)? {
        let retention = options.expiredRetention
        guard retention > 0 else { return nil }
        let now = options.clock()
        let extends = options.extendsExpirationOnAccess
        func decide(_ row: ManifestRow, _ state: WriteBuffer.State) -> (row: ManifestRow, deadline: Double)? {
            guard !row.isDamaged, let deadline = state.deadline(of: row, forKey: key, extends: extends),
                  deadline <= now, now - retention < deadline else { return nil }
            return (row, deadline)
        }
        let buffered = buffer.withLock { state -> (row: ManifestRow, deadline: Double)?? in
            guard let write = state.latestWrite(forKey: key) else { return nil }
            // A pending removal: the key is gone, whatever the manifest holds.
            guard let value = write.value else { return .some(nil) }
            return .some(decide(value, state))
        }
        if let buffered { return buffered }
        guard let row = try pool.withConnection({ try Self.select(key, on: $0) }) else { return nil }
        return buffer.withLock { decide(row, $0) }
    }

    /// True if a value for `key` is stored and not expired (the file is not opened).
    func contains(_ key: String) throws -> Bool {
        let now = options.clock()
        let buffered = buffer.withLock { state -> Bool? in
            guard let write = state.latestWrite(forKey: key) else { return nil }
            guard let value = write.value else { return false }
            return !isExpired(value, key: key, now: now, state: state)
        }
        if let buffered { return buffered }
        guard let row = try pool.withConnection({ try Self.metadata(key, on: $0) }) else { return false }
        return !buffer.withLock { isExpired(row, key: key, now: now, state: $0) }
    }

    /// Size, place and expiration of `key`'s value, or nil if none is stored or it has
    /// expired. Records no access.
    func info(forKey key: String) throws -> DiskCache.EntryInfo? {
        let now = options.clock()
        let buffered = buffer.withLock { state -> DiskCache.EntryInfo?? in
            guard let write = state.latestWrite(forKey: key) else { return nil }
            guard let value = write.value else { return .some(nil) }
            return .some(entryInfo(key: key, value, now: now, state: state))
        }
        if let buffered { return buffered }
        guard let row = try pool.withConnection({ try Self.metadata(key, on: $0) }) else { return nil }
        return buffer.withLock { entryInfo(key: key, row, now: now, state: $0) }
    }

    /// The info of a live entry (its deadline moved by a buffered access, as
    /// `isExpired` moves it), nil for an expired one.
    private func entryInfo(key: String, _ row: ManifestRow, now: Double, state: WriteBuffer.State) -> DiskCache.EntryInfo? {
        let deadline = state.deadline(of: row, forKey: key, extends: options.extendsExpirationOnAccess)
        if let deadline, deadline <= now { return nil }
        return DiskCache.EntryInfo(size: row.size, isInFile: row.filename != nil,
                                   expirationDate: deadline.map { Date(timeIntervalSince1970: $0) },
                                   lifetime: row.lifetime.map { .clamping(seconds: $0) })
    }

    /// The extended data stored with `key`'s value, or nil.
    func extendedData(forKey key: String) throws -> Data? {
        let now = options.clock()
        let buffered = buffer.withLock { state -> Data?? in
            guard let write = state.latestWrite(forKey: key) else { return nil }
            guard let value = write.value, !isExpired(value, key: key, now: now, state: state) else { return .some(nil) }
            return .some(value.extendedData)
        }
        if let buffered { return buffered }
        let row = try pool.withConnection { connection -> ManifestRow? in
            try connection.database.statement(Manifest.selectExtendedData).run { statement in
                try statement.bind(key, at: 1)
                guard try statement.step() else { return nil }
                return ManifestRow(filename: nil, size: 0, accessed: statement.double(at: 3),
                                   deadline: statement.optionalDouble(at: 1), lifetime: statement.optionalDouble(at: 2),
                                   extendedData: statement.data(at: 0))
            }
        }
        guard let row, !buffer.withLock({ isExpired(row, key: key, now: now, state: $0) }) else { return nil }
        return row.extendedData
    }

    /// The store's totals as if the buffered writes were committed now, without a
    /// commit or the store's lock: the stats row of a snapshot that has every commit
    /// that left the buffer (see `lookUp`), plus each key's buffered writes applied in
    /// order to its row in that snapshot. A write the snapshot already has changes
    /// nothing when applied again, so a commit landing meanwhile is not counted twice.
    func totals() throws -> KVStorage.Totals {
        let writes = buffer.withLock { state -> [(key: String, writes: [PendingWrites.Write])] in
            var order: [ByteWiseKey] = []
            var byKey: [ByteWiseKey: [PendingWrites.Write]] = [:]
            for batch in [state.detached?.writes, state.committing, state.pending] {
                for (key, write) in batch?.entries ?? [] {
                    if byKey[key] == nil { order.append(key) }
                    byKey[key, default: []].append(write)
                }
            }
            return order.map { ($0.string, byKey[$0]!) }
        }
        return try pool.withConnection { connection in
            var totals = try KVStorage.Totals.select(with: connection.database.statement(Manifest.selectStats))
            for (key, writes) in writes {
                let stored = try Self.metadata(key, on: connection)
                var row = stored
                for write in writes {
                    if let value = write.value {
                        row = value
                    } else if let current = row, write.removes(current) {
                        row = nil
                    }
                }
                if let stored { totals.add(size: stored.size, isFile: stored.filename != nil, sign: -1) }
                if let row { totals.add(size: row.size, isFile: row.filename != nil) }
            }
            return totals
        }
    }

    private static func metadata(_ key: String, on connection: ReadConnection) throws -> ManifestRow? {
        try ManifestRow.selectMetadata(key, with: connection.selectMetadata)
    }
}
