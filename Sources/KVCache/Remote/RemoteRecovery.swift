import Foundation

/// How a ``Cache`` repairs the remote writes, removals and touches that could not reach its
/// remote level (FusionCache's auto-recovery): `Cache.Configuration.remoteRecovery`.
///
/// A remote call that fails because the level could not be reached (`.unavailable`) or
/// fails fast (`.circuitOpen`) is queued, and the queue is replayed in the order the calls
/// were made once the level answers again: when its subscription is made again, when a read
/// succeeds, and every `retryInterval`. An attempt goes through the level's circuit breaker;
/// when the breaker refuses it, the queue probes the level past the breaker
/// (``RemoteLevel/probe()``: for Redis a `PING`, bounded by the level's timeouts), and an
/// answer closes the breaker and replays the queue at once. So the queue is replayed within
/// about `retryInterval` (plus one command timeout) of the server's return, not when the
/// breaker's break ends (2 s by default), while callers' own calls still fail fast without
/// waiting on the server: the probes run on the queue's own thread, and only while it holds
/// operations (a probe costs one connection attempt and a `PING` every `retryInterval` plus
/// the level's timeouts for as long as the server is away). While the queue holds anything, new
/// remote operations join its end rather than overtaking it. Per key only the latest
/// operation is kept; a change another node publishes for a key after it was queued here
/// drops it (the other node's write is the newer one). So the remote level ends up with
/// each key's last write as this node saw it: last writer wins, as seen by this node; a
/// write another node made while this node heard nothing from the level may be overwritten
/// by the replay.
///
/// A queued set keeps the encoded bytes of the value (for `Data` values with ``DataCoder``,
/// the caller's own storage, not a copy); a value larger than `maxBytes` is queued as a
/// removal of the key instead, so other nodes miss rather than read the older value.
/// Beyond `maxEntries` or `maxBytes` the oldest operations are dropped, counted in
/// ``Statistics/overflowDrops`` and reported to the logger (package trait `Logging`).
/// The queue lives in memory: what it holds at `close()` or a crash is not replayed.
public struct RemoteRecovery: Sendable, Hashable {
    /// The most operations queued; 0 turns recovery off (failed calls are only counted).
    /// 0 to 10,000,000. Default 10,000.
    public var maxEntries: Int
    /// The most bytes (values and keys) queued. 0 to 2^40. Default 64 MiB.
    public var maxBytes: Int
    /// How long after a failed attempt the queue is tried again. 1 ms to 1 hour.
    /// Default 100 ms.
    public var retryInterval: Duration

    /// A recovery queue with these bounds; every parameter has the default documented on
    /// its property.
    public init(maxEntries: Int = 10_000, maxBytes: Int = 64 << 20, retryInterval: Duration = .milliseconds(100)) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.retryInterval = retryInterval
    }

    /// No queue: a remote call that fails is counted and reported, never repaired.
    public static let off = RemoteRecovery(maxEntries: 0)

    /// Throws `KVCacheError.invalidArgument` for a setting out of range.
    func validate() throws {
        try Validation.check((0...10_000_000).contains(maxEntries),
                             "remoteRecovery.maxEntries must be 0 to 10,000,000, not \(maxEntries)")
        try Validation.check((0...(1 << 40)).contains(maxBytes), "remoteRecovery.maxBytes must be 0 to 2^40, not \(maxBytes)")
        try Validation.check(retryInterval >= .milliseconds(1) && retryInterval <= .seconds(3600),
                             "remoteRecovery.retryInterval must be 1 ms to an hour, not \(retryInterval)")
    }

    /// What a cache's recovery queue did since the cache was opened, and holds now.
    public struct Statistics: Sendable, Hashable {
        /// Operations queued now.
        public var pending = 0
        /// Bytes (values and keys) queued now.
        public var pendingBytes = 0
        /// The most operations queued at once.
        public var largestPending = 0
        /// Operations queued (failed calls, and calls made while the queue held some).
        public var queued = 0
        /// Queued operations the level accepted when replayed.
        public var replayed = 0
        /// Queued operations dropped for a later operation of this node on the same key
        /// (or a removal by a prefix of it).
        public var superseded = 0
        /// Queued operations dropped because another node published a change of the key
        /// (its write is newer).
        public var supersededByOtherNodes = 0
        /// Queued operations dropped, oldest first, because the queue was over `maxEntries`
        /// or `maxBytes`: other nodes may serve older values of those keys until they expire.
        public var overflowDrops = 0
        /// Replays that failed again (the level still away); each is tried again later.
        public var failedAttempts = 0
        /// Queued operations dropped because their replay failed for a reason a retry
        /// would not fix (an error reply, say); each is reported to the logger.
        public var discarded = 0
        /// Operations still queued when the cache was closed, never replayed.
        public var droppedAtClose = 0

        /// Creates empty statistics.
        public init() {}
    }
}
