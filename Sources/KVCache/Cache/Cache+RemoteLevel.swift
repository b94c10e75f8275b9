import Dispatch
import Foundation

/// The remote level behind the disk level: reads after a disk miss, writes after the
/// local levels, and the changes other nodes publish. A remote failure is counted and
/// reported to the logger, never thrown: the local levels go on without it.
extension Cache {
    /// After a disk miss: the remote level's value for `key` (nil on a miss or a
    /// failure), with what storing it in the local levels needs.
    @usableFromInline
    func readRemote(forKey key: String, promotion: inout Promotion) -> Value? {
        guard let remote else { return nil }
        let entry: RemoteEntry?
        do {
            entry = try remote.entry(forKey: key)
        } catch {
            remoteFailed("reading \(key)", error)
            return nil
        }
        // Expired entries are the remote level's to leave out (see `RemoteLevel.entry`).
        guard let entry, let (value, found) = decodeRemote(entry, forKey: key) else { return nil }
        counters.remoteHits.wrappingAdd(1, ordering: .relaxed)
        // The level answers: operations queued while it did not are replayed now.
        if let remoteRecovery, !remoteRecovery.isEmpty { remoteRecovery.drainSoon() }
        promotion = found
        return value
    }

    /// A remote entry's value, with what storing it locally needs; nil (counted) for bytes
    /// that do not decode: another version's or another program's, a miss, never a wrong value.
    func decodeRemote(_ entry: RemoteEntry, forKey key: String) -> (value: Value, promotion: Promotion)? {
        let value: Value
        do {
            value = try coder.decode(entry.data)
        } catch {
            counters.decodingFailures.wrappingAdd(1, ordering: .relaxed)
            remoteFailed("decoding \(key)", error)
            return nil
        }
        var promotion = Promotion()
        promotion.cost = cost(of: value, encodedSize: entry.data.count)
        promotion.expiration = entry.expiration
        promotion.remoteData = entry.data
        return (value, promotion)
    }

    /// The remote level's values for `keys`, in one call (none on a failure), with what
    /// storing each in the local levels needs.
    func readRemote(forKeys keys: [String]) -> [String: (value: Value, promotion: Promotion)] {
        guard let remote else { return [:] }
        let entries: [String: RemoteEntry]
        do {
            entries = try remote.entries(forKeys: keys)
        } catch {
            remoteFailed("reading \(keys.count) keys", error)
            return [:]
        }
        var found: [String: (value: Value, promotion: Promotion)] = [:]
        for (key, entry) in entries {
            if let decoded = decodeRemote(entry, forKey: key) { found[key] = decoded }
        }
        counters.remoteHits.wrappingAdd(found.count, ordering: .relaxed)
        return found
    }

    /// Stores a remote hit on disk, with the remote expiration (inside its promotion into
    /// memory, under the stripe's mutex: see `KeyStripes`).
    @usableFromInline
    func storeRemoteHitOnDisk(_ data: Data, forKey key: String, expiration: Expiration) {
        _ = disk.diagnostics.attempt("storing the remote value of \(key) on disk", path: disk.path) {
            try disk.setValue(data, forKey: key, expiration: expiration, extendedData: nil, reportsChange: false)
        }
    }

    /// Writes `data` for `key` to the remote level, as `remoteWrite` says. A value larger
    /// than the level keeps stays local, and the remote level's older value is removed.
    @usableFromInline
    func writeRemote(_ data: Data, forKey key: String, expiration: Expiration) {
        guard remote != nil else { return }
        runRemote(.set(key: key, entry: RemoteEntry(data: data, expiration: absolute(expiration))))
    }

    /// Removes `key` from the remote level, as `remoteWrite` says.
    func removeRemote(forKey key: String) {
        guard remote != nil else { return }
        runRemote(.remove(key: key))
    }

    /// Gives the remote copy of `key` a new expiration (read, then written again).
    func touchRemote(_ key: String, expiration: Expiration) {
        guard remote != nil else { return }
        runRemote(.touch(key: key, expiration: absolute(expiration)))
    }

    /// Removes the keys with `prefix` (every key for `""`) from the remote level.
    func removeRemote(withPrefix prefix: String) {
        guard remote != nil else { return }
        runRemote(.removePrefix(prefix))
    }

    /// `expiration` as an absolute date (or `.never`): a remote write queued or sent late
    /// expires when the local copies do.
    private func absolute(_ expiration: Expiration) -> Expiration {
        Expiration(deadline: expiration.deadline(from: disk.configuration.clock()))
    }

    /// Sends `operation` now (`.immediate`) or on the queue of `.background` writes.
    func runRemote(_ operation: RemoteOperation) {
        guard let remoteWrites else {
            sendRemote(operation)
            return
        }
        remoteWrites.queue.async(group: remoteWrites.group) { self.sendRemote(operation) }
    }

    /// Runs a remote call that is not replayed if it fails (a lease's release: the lease
    /// expires), now or on the queue of `.background` writes; a failure is counted.
    func runRemote(_ what: String, _ body: @escaping @Sendable () throws -> Void) {
        guard let remoteWrites else {
            do { try body() } catch { remoteFailed(what, error) }
            return
        }
        remoteWrites.queue.async(group: remoteWrites.group) {
            do { try body() } catch { self.remoteFailed(what, error) }
        }
    }

    /// Sends `operation`, or queues it for recovery: behind the operations queued already
    /// (so it overtakes none), or once it failed because the level could not be reached.
    private func sendRemote(_ operation: RemoteOperation) {
        guard let remote else { return }
        if let remoteRecovery, remoteRecovery.appendIfRecovering(operation) { return }
        do {
            try operation.perform(on: remote) { counters.remoteValuesTooLarge.wrappingAdd(1, ordering: .relaxed) }
        } catch {
            remoteFailed(operation.description, error)
            if let remoteRecovery, RemoteOperation.isRetryable(error) { remoteRecovery.appendFailed(operation) }
        }
    }

    /// Blocks until the remote operations that failed and were queued for recovery have
    /// been replayed (or superseded, or dropped), for at most `timeout`; returns whether
    /// the queue is empty. True at once without a remote level or with recovery off.
    /// See ``RemoteRecovery``; `statistics.remoteRecovery` counts what the queue did.
    public func waitForRemoteRecovery(timeout: Duration) -> Bool {
        remoteRecovery?.waitUntilEmpty(timeout: timeout) ?? true
    }

    /// Blocks until the remote writes queued so far (`.background`) are done.
    func waitForRemoteWrites() {
        remoteWrites?.group.wait()
    }

    func remoteFailed(_ what: String, _ error: any Error) {
        counters.remoteErrors.wrappingAdd(1, ordering: .relaxed)
        disk.diagnostics.failed("the remote level, \(what),", error, path: disk.path)
    }

    /// Applies a change another node made: drops the local copies, as a mutation, so a
    /// read that began before it does not store the old value afterwards.
    func remoteChanged(_ change: RemoteChange) {
        switch change {
        case .key(let key):
            counters.remoteChanges.wrappingAdd(1, ordering: .relaxed)
            // Another node's write is newer than this node's queued one.
            remoteRecovery?.dropQueued(forKey: key)
            writes.mutate(key) {
                _ = memory.removeValue(forKey: key)
                _ = disk.diagnostics.attempt("dropping \(key), changed on another node", path: disk.path) {
                    try disk.removeValue(forKey: key, reportsChange: false)
                }
            }
            // A load waiting for another node's value of the key looks now.
            remoteChangeWaiters.wake(key)
        case .prefix(let prefix):
            counters.remoteChanges.wrappingAdd(1, ordering: .relaxed)
            remoteRecovery?.dropQueued(withPrefix: prefix)
            _ = disk.diagnostics.attempt("dropping the keys with prefix \(prefix), changed on another node", path: disk.path) {
                try writes.removeValues(withPrefix: prefix, disk: {
                    try disk.removeValues(withPrefix: prefix, reportsChange: false)
                }, memory: { memory.removeValues(withPrefix: prefix) })
            }
        case .resynchronize:
            counters.remoteResynchronizations.wrappingAdd(1, ordering: .relaxed)
            // Subscribed again: the level answers, so what was queued meanwhile goes now.
            remoteRecovery?.drainSoon()
            guard remoteResynchronization != .nothing else { return }
            writes.mutate(nil) {
                memory.removeAll()
                guard remoteResynchronization == .localValues else { return }
                _ = disk.diagnostics.attempt("dropping the local values after the remote subscription was lost", path: disk.path) {
                    try disk.removeAll(reportsChange: false)
                }
            }
        }
    }
}

/// The serial queue of a cache's `.background` remote writes.
struct RemoteWriteQueue: Sendable {
    let queue = DispatchQueue(label: "KVCache.Cache.remoteWrites", qos: .utility)
    let group = DispatchGroup()
}
