import Foundation

/// The distributed single flight (`Configuration.remoteLoadLease`): after a miss in every
/// level, the node that takes the key's remote lease computes and stores (the store reaches
/// the remote level and publishes the change); the others wait for that value.
extension Cache {
    /// Loads `key` under its remote lease: computes if this node takes it, else waits for
    /// the holder's value (woken by the key's change on the backplane, and looking again
    /// every 2 ms, backing off to 50 ms). A wait that ends without the value (the lease
    /// expired or was released) takes the lease if it is free; a wait that lasted the lease's
    /// duration, or a remote failure, computes without it.
    func loadUnderRemoteLease(
        _ key: String, remote: any RemoteLevel, lease duration: Duration, expiration: Expiration,
        diskWrite: DiskWrite, compute: @escaping @Sendable () async throws -> Value
    ) async throws -> LoadResult<Value> {
        let clock = ContinuousClock()
        let deadline = clock.now + duration
        var backoff = Duration.milliseconds(2)
        var waited = false
        while true {
            let lease: RemoteLease?
            do {
                lease = try await disk.onWorkPool { try remote.acquireLease(forKey: key, duration: duration) }
            } catch let cancelled as CancellationError {
                throw cancelled
            } catch {
                remoteFailed("taking the load lease of \(key)", error)
                break
            }
            if let lease {
                if waited { counters.remoteLeaseTimeouts.wrappingAdd(1, ordering: .relaxed) }
                let result: Result<LoadResult<Value>, any Error>
                do {
                    result = .success(try await computeAndStore(key, expiration: expiration, diskWrite: diskWrite,
                                                                compute: compute))
                } catch {
                    result = .failure(error)
                }
                // Released whatever happened, so a waiting node takes over at once after a failure.
                await release(lease, remote: remote)
                return try result.get()
            }
            if !waited {
                waited = true
                counters.remoteLeaseWaits.wrappingAdd(1, ordering: .relaxed)
                didWaitForRemoteLease(key)
            }
            // The holder's change may come between the look below and this wait: the
            // timeout bounds what missing it costs.
            await remoteChangeWaiters.wait(for: key, atMost: min(backoff, max(.zero, deadline - clock.now)))
            backoff = min(backoff * 2, .milliseconds(50))
            if let found = try await holdersValue(forKey: key, remote: remote) { return found }
            if clock.now >= deadline { break }
        }
        if waited { counters.remoteLeaseTimeouts.wrappingAdd(1, ordering: .relaxed) }
        return try await computeAndStore(key, expiration: expiration, diskWrite: diskWrite, compute: compute)
    }

    /// The value another node stored for `key` while this one waited, read as a remote hit
    /// (stored in memory and on disk); nil while there is none. Looks at the remote level
    /// first, so that waiting counts no misses.
    private func holdersValue(forKey key: String, remote: any RemoteLevel) async throws -> LoadResult<Value>? {
        if memory.contains(key), let value = memory.value(forKey: key) { return .memory(value) }
        do {
            guard try await disk.onWorkPool({ try remote.entry(forKey: key) }) != nil else { return nil }
        } catch let cancelled as CancellationError {
            throw cancelled
        } catch {
            remoteFailed("reading \(key) while waiting for another node's value", error)
            return nil
        }
        return LoadResult(try await disk.onWorkPool({ try self.diskResult(forKey: key) }))
    }

    /// Releases `lease` after the computed value's remote write: before this returns, or
    /// with `.background` remote writes queued behind it (`waitForBackgroundWrites()` awaits
    /// it), so no node takes the lease before the value is there. A failure is counted.
    private func release(_ lease: RemoteLease, remote: any RemoteLevel) async {
        let release: @Sendable () -> Void = {
            self.runRemote("releasing the load lease of \(lease.key)") { try remote.releaseLease(lease) }
        }
        if remoteWrites != nil { return release() }
        do {
            try await disk.onWorkPool(release)
        } catch {
            // Cancelled before the work pool ran it: released here, not left to expire.
            release()
        }
    }
}

/// Loads waiting for another node's value of a key: woken by the key's change on the
/// backplane, or when their time is up.
final class RemoteChangeWaiters: Sendable {
    private let state = MutexBox<(lastID: UInt64, waiters: [ByteWiseKey: [UInt64: CheckedContinuation<Void, Never>]])>(
        (0, [:]))

    /// Returns once another node changed `key`, or after `timeout`.
    func wait(for key: String, atMost timeout: Duration) async {
        let key = ByteWiseKey(key)
        let id = state.withLock { state in
            state.lastID &+= 1
            return state.lastID
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { $0.waiters[key, default: [:]][id] = continuation }
            Task {
                try? await Task.sleep(for: timeout)
                self.resume(key, id)
            }
        }
    }

    /// Wakes the loads waiting for `key`.
    func wake(_ key: String) {
        let woken = state.withLock { $0.waiters.removeValue(forKey: ByteWiseKey(key)) }
        for continuation in woken.map({ Array($0.values) }) ?? [] { continuation.resume() }
    }

    private func resume(_ key: ByteWiseKey, _ id: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            let continuation = state.waiters[key]?.removeValue(forKey: id)
            if state.waiters[key]?.isEmpty == true { state.waiters[key] = nil }
            return continuation
        }
        continuation?.resume()
    }
}
