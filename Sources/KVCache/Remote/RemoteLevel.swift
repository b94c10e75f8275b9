import Foundation

/// A level shared by several processes or machines behind a ``Cache``'s memory and disk
/// levels: a Redis server or cluster (the `KVCacheRedis` product's `RedisLevel`), or any
/// engine that implements these calls.
///
/// The cache reads it after a disk miss and before the loader, writes and removes through
/// it after the local levels, and counts (never throws) what it throws: a remote failure is
/// a miss. Implementations publish an invalidation for each change they make, and tell the
/// subscriber about changes other nodes made, so each node drops its local copies.
/// Every call may block for up to the implementation's timeouts.
public protocol RemoteLevel: AnyObject, Sendable {
    /// The entry for `key`, or nil when the remote level holds none (or an expired one).
    func entry(forKey key: String) throws -> RemoteEntry?

    /// The entries for `keys` that the remote level holds, fetched together.
    func entries(forKeys keys: [String]) throws -> [String: RemoteEntry]

    /// Stores `entry` for `key` until its expiration, and publishes the change.
    /// Throws ``RemoteLevelError`` with `.valueTooLarge` for a value larger than the
    /// level keeps.
    func setEntry(_ entry: RemoteEntry, forKey key: String) throws

    /// Removes `key`'s entry and publishes the change.
    func removeEntry(forKey key: String) throws

    /// Removes every entry whose key starts with `prefix` (every entry for an empty
    /// prefix), and publishes the change.
    func removeEntries(withPrefix prefix: String) throws

    /// Starts delivering the changes other nodes publish to `handler`, on a thread of the
    /// level's own, until `stopSubscription()`. `.resynchronize` says that changes may
    /// have been missed (the subscription was lost and is back).
    func subscribe(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws

    /// Stops the subscription started by `subscribe`, and waits until its handler is no
    /// longer running.
    func stopSubscription()

    /// Takes the lease on `key` for `duration` unless another holder has it (a distributed
    /// single flight: see `Cache.Configuration.remoteLoadLease`): the lease, or nil while
    /// another holder has it. A lease ends when released or when `duration` has passed.
    /// The default implementation, for levels without leases, grants every request (so
    /// every node computes, as without leases).
    func acquireLease(forKey key: String, duration: Duration) throws -> RemoteLease?

    /// Releases `lease` if its holder still has it (it has not expired and been taken by
    /// another since). The default implementation does nothing.
    func releaseLease(_ lease: RemoteLease) throws

    /// Checks whether the level answers now, past any circuit breaker, and if it does lets
    /// calls through again (closes the breaker); throws if it does not. A ``Cache`` whose
    /// recovery queue (``RemoteRecovery``) holds operations calls it when a replay failed
    /// fast (`.circuitOpen`), at most once every `retryInterval`, so the queue is replayed
    /// as soon as the server is back rather than when the breaker's break ends. It must be
    /// cheap and bounded by the level's timeouts. The default implementation returns at
    /// once (the next call finds out).
    func probe() throws
}

extension RemoteLevel {
    /// Grants every request: a level without leases lets every node compute.
    public func acquireLease(forKey key: String, duration: Duration) throws -> RemoteLease? {
        RemoteLease(key: key, token: Data())
    }

    /// Does nothing: a level without leases holds none.
    public func releaseLease(_ lease: RemoteLease) throws {}

    /// Returns at once: a level without a circuit breaker has nothing to probe past.
    public func probe() throws {}
}

/// A lease on a key of a remote level: while one holder has it, others are refused it, so
/// one node computes a missing value for all (see `RemoteLevel.acquireLease`).
public struct RemoteLease: Sendable, Hashable {
    /// The key the lease is on.
    public var key: String
    /// What tells this holder's lease from a later one on the same key (random bytes).
    public var token: Data

    /// Creates a lease.
    public init(key: String, token: Data) {
        self.key = key
        self.token = token
    }
}

/// A value as a remote level stores it: the encoded bytes and when they expire.
public struct RemoteEntry: Sendable, Hashable {
    /// The value's encoding (what the cache's coder made).
    public var data: Data
    /// When the value expires; `.never`, or `.at` a date.
    public var expiration: Expiration

    /// Creates an entry.
    public init(data: Data, expiration: Expiration) {
        self.data = data
        self.expiration = expiration
    }
}

/// A change another node made to a remote level, as its subscriber delivers it.
public enum RemoteChange: Sendable, Hashable {
    /// The value of this key changed or was removed.
    case key(String)
    /// The values of every key with this prefix were removed (every key, for `""`).
    case prefix(String)
    /// Changes may have been missed: the subscription was lost and is back.
    case resynchronize
}

/// Why a remote level refused or failed a call.
public struct RemoteLevelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// The server could not be reached, or a call took longer than its timeout.
        case unavailable
        /// Calls are failing fast for a while after failures (the circuit breaker is open).
        case circuitOpen
        /// The value is larger than the remote level keeps.
        case valueTooLarge
        /// The server answered with an error.
        case serverError
        /// The server's answer is not what the call expects (wrong type, or bytes another
        /// program or version wrote).
        case unexpectedReply
        /// An argument the level cannot use (a malformed address, say).
        case invalidArgument
    }

    /// The kind of failure.
    public var code: Code
    /// What failed, in words.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    public var description: String { "\(code.rawValue): \(message)" }
}
