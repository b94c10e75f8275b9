import Foundation
import KVCache

/// A ``RemoteLevel`` on one Redis (or Valkey) server or a Redis Cluster, through hiredis: the shared level
/// of a ``Cache`` on several processes or machines, and the backplane that tells each of
/// them which keys another one changed.
///
/// ```swift
/// let remote = try RedisLevel(configuration: .init(address: RedisAddress("redis://10.0.0.5:6379"),
///                                                  namespace: "thumbnails"))
/// var configuration = Cache<Data>.Configuration()
/// configuration.remote = remote
/// let cache = try Cache<Data>(name: "thumbnails", baseDirectory: cachesURL, configuration: configuration)
/// ```
///
/// Keys are stored as `kvcache:<namespace>:<key>` (`kvcache:{<namespace>}:<key>` with
/// `groupsKeys`), values with a small header (format version, expiration) and a Redis
/// expiration; changes are published on `kvcache:<namespace>:changes`. Connections are
/// made when first needed and again after a failure; a circuit breaker makes calls fail
/// fast for `breakDuration` after the server could not be reached. A ``Cache`` whose remote
/// recovery queue holds writes made meanwhile probes past the breaker (``probe()``, a `PING`)
/// every `RemoteRecovery.retryInterval`, so the queue is replayed, and the breaker closed,
/// within about `retryInterval` of the server's return; callers' own calls never wait for
/// those probes.
///
/// In a cluster (``Configuration/init(cluster:namespace:)``) each key goes to the node that
/// serves its slot; the level reads the slot map (`CLUSTER SLOTS`) when first used, follows
/// `MOVED` and `ASK` redirects, and reads the map again when a node moved slots or cannot be
/// reached (a replica may have taken over). Each node has its own connections and breaker.
public final class RedisLevel: RemoteLevel {
    /// How a ``RedisLevel`` reaches its server and names its keys.
    public struct Configuration: Sendable {
        /// The server; in a cluster, the first node asked for the slot map.
        public var address: RedisAddress
        /// Whether the servers are the nodes of a Redis Cluster. Default false.
        public var isCluster = false
        /// More cluster nodes asked for the slot map when `address` cannot answer.
        public var moreClusterNodes: [RedisAddress] = []
        /// The prefix of this cache's keys and channel: usually the cache's name. 1–200
        /// printable ASCII characters, without spaces or braces.
        public var namespace: String
        /// How long connecting may take. Default 250 ms.
        public var connectTimeout: Duration = .milliseconds(250)
        /// How long a command may wait for its answer. Default 250 ms.
        public var commandTimeout: Duration = .milliseconds(250)
        /// How long calls fail fast after the server could not be reached; zero turns the
        /// breaker off. Default 2 s. A cache's recovery queue ends the break sooner: its
        /// probe (``RedisLevel/probe()``) closes the breaker once the server answers.
        public var breakDuration: Duration = .seconds(2)
        /// The largest value (encoded bytes) stored remotely; larger ones stay local.
        /// Default and most: 512 MB (Redis's limit for a string) less the 14-byte header.
        public var maxValueSize: Int = RedisLevel.largestValueSize
        /// How many idle connections are kept for reuse. Each keeps memory for encoding
        /// the values it sets, as large as the largest it set up to 1 MB. Default 8.
        public var maxIdleConnections: Int = 8
        /// Whether keys carry the namespace as a hash tag, so a Redis Cluster keeps a
        /// cache's keys in one slot, on one node: batch gets are then one `MGET`, at the cost
        /// of spreading no load across nodes. Default false.
        public var groupsKeys = false
        /// How long the subscriber waits for a message before it checks the server with a
        /// `PING`, which must be answered within as long again; a subscription that fails the
        /// check is made anew and the local values resynchronized. This bounds how long a
        /// silent network failure or a hung server goes unnoticed. Default 1 s.
        public var subscriptionCheckInterval: Duration = .seconds(1)
        /// How long the subscriber waits between attempts to subscribe again once its
        /// subscription was lost (or the first attempt failed). Each attempt runs on the
        /// subscriber's own thread (no caller waits for it): a connection, then a `SUBSCRIBE`
        /// answered within `subscriptionCheckInterval`. So a node whose subscription was lost
        /// subscribes again, and drops its local values, within about this long of the
        /// server's return. 10 ms to an hour. Default 250 ms.
        public var subscriptionRetryInterval: Duration = .milliseconds(250)
        /// Whether sets and removals publish invalidations (the backplane). Default true.
        public var publishesChanges = true

        /// A configuration for `namespace` on the server at `address`; the other settings
        /// have the defaults documented on their properties.
        public init(address: RedisAddress, namespace: String) {
            self.address = address
            self.namespace = namespace
        }

        /// A configuration for `namespace` on the Redis Cluster with `nodes` (any of its
        /// nodes; the others are found from them); the other settings have their defaults.
        public init(cluster nodes: [RedisAddress], namespace: String) {
            self.address = nodes.first ?? RedisAddress(host: "")
            moreClusterNodes = Array(nodes.dropFirst())
            isCluster = true
            self.namespace = namespace
        }

        /// Throws `RemoteLevelError` (`.invalidArgument`) for a setting out of range.
        public func validate() throws {
            func check(_ condition: Bool, _ message: String) throws {
                if !condition { throw RemoteLevelError(.invalidArgument, message) }
            }
            try check((1...200).contains(namespace.utf8.count)
                      && namespace.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "{") && $0 != UInt8(ascii: "}") },
                      "namespace must be 1–200 printable ASCII characters without spaces or braces")
            for node in [address] + moreClusterNodes {
                try check(!node.host.isEmpty, "an address has no host")
                try check((1...65_535).contains(node.port), "port must be 1–65535")
                try check(node.database >= 0, "database must not be negative")
                try check(!isCluster || node.database == 0, "a cluster has database 0 only")
            }
            try check(isCluster || moreClusterNodes.isEmpty, "moreClusterNodes needs isCluster")
            for (name, timeout) in [("connectTimeout", connectTimeout), ("commandTimeout", commandTimeout)] {
                try check(timeout > .zero && timeout <= .seconds(3600), "\(name) must be more than zero and at most an hour")
            }
            try check(subscriptionCheckInterval >= .milliseconds(10) && subscriptionCheckInterval <= .seconds(3600),
                      "subscriptionCheckInterval must be 10 ms to an hour")
            try check(subscriptionRetryInterval >= .milliseconds(10) && subscriptionRetryInterval <= .seconds(3600),
                      "subscriptionRetryInterval must be 10 ms to an hour")
            try check(breakDuration >= .zero && breakDuration <= .seconds(86_400), "breakDuration must be 0 to a day")
            try check((0...RedisLevel.largestValueSize).contains(maxValueSize),
                      "maxValueSize must be 0 to \(RedisLevel.largestValueSize)")
            try check((0...1024).contains(maxIdleConnections), "maxIdleConnections must be 0 to 1024")
        }
    }

    /// What the level did, counted since it was created.
    public struct Statistics: Sendable, Equatable {
        /// Calls that reached the server.
        public var calls = 0
        /// Round trips to the servers: a command, or commands sent together, and their answers.
        public var roundTrips = 0
        /// Calls that failed: the server unreachable or slow, an error reply, or bytes
        /// that are not a KVCache value.
        public var failures = 0
        /// Calls failed fast while the circuit breaker was open.
        public var rejectedByBreaker = 0
        /// Times the circuit breaker opened.
        public var breakerOpenings = 0
        /// Probes (``RedisLevel/probe()``): `PING`s sent past an open circuit breaker.
        public var probes = 0
        /// Probes the server answered, each closing its breaker.
        public var probesAnswered = 0
        /// Values too large to store remotely.
        public var valuesTooLarge = 0
        /// Invalidations published.
        public var changesPublished = 0
        /// Other nodes' invalidations received.
        public var changesReceived = 0
        /// Messages on the channel that are not invalidations.
        public var malformedMessages = 0
        /// Times the subscriber subscribed (once, plus once per lost connection).
        public var subscriptions = 0
        /// Attempts to subscribe that failed.
        public var subscriptionFailures = 0
        /// Subscriptions given up because the server did not answer the subscriber's check.
        public var subscriptionsLost = 0
    }

    /// The largest value `maxValueSize` allows: 512 MB less the header.
    public static let largestValueSize = 512 * 1024 * 1024 - RemoteValueFormat.headerSize

    /// The settings it was created with.
    public let configuration: Configuration
    let router: RedisRouter
    let keyPrefix: Data
    /// Where leases live: beside the value keys, never one of them (see `leaseKey`).
    let leasePrefix: Data
    let channel: Data
    /// Marks this level's own messages, which its subscriber ignores.
    let nodeID: Data
    let counters = RedisLevelCounters()
    private let subscriber = MutexBox<RedisSubscriber?>(nil)

    /// Creates the level; connects on first use, not here.
    ///
    /// - Throws: `RemoteLevelError` (`.invalidArgument`) for a setting out of range.
    public init(configuration: Configuration) throws {
        try configuration.validate()
        self.configuration = configuration
        router = RedisRouter(seeds: [configuration.address] + configuration.moreClusterNodes,
                             isCluster: configuration.isCluster) { address in
            RedisConnectionPool(address: address, connectTimeout: configuration.connectTimeout,
                                commandTimeout: configuration.commandTimeout,
                                breakDuration: configuration.breakDuration,
                                maxIdle: configuration.maxIdleConnections)
        }
        let namespace = configuration.groupsKeys ? "{\(configuration.namespace)}" : configuration.namespace
        keyPrefix = Data("kvcache:\(namespace):".utf8)
        leasePrefix = Data("kvcache-lease:\(namespace):".utf8)
        channel = Data("kvcache:\(configuration.namespace):changes".utf8)
        nodeID = Data(String(UInt64.random(in: .min ... .max), radix: 16).utf8)
    }

    deinit {
        stopSubscription()
    }

    /// The counts so far.
    public var statistics: Statistics {
        withBreakerCounts(counters.withLock { $0 })
    }

    /// `counts` with the pools' own counts (one pool per node) filled in: round trips, and
    /// their circuit breakers'.
    private func withBreakerCounts(_ counts: Statistics) -> Statistics {
        var counts = counts
        for pool in router.allPools {
            let (openings, rejected) = pool.breaker.counts
            counts.breakerOpenings += openings
            counts.rejectedByBreaker += rejected
            counts.roundTrips += pool.roundTrips.load(ordering: .relaxed)
        }
        return counts
    }

    /// Blocks until `predicate` holds for the statistics (say, until another node's change
    /// was received and applied), for at most `timeout`; returns whether it held.
    public func waitForStatistics(timeout: Duration, until predicate: (Statistics) -> Bool) -> Bool {
        counters.wait(timeout: timeout) { predicate(withBreakerCounts($0)) }
    }

    /// Whether calls to the server (in a cluster: to some node) fail fast now: its circuit
    /// breaker is open.
    public var isFailingFast: Bool { router.allPools.contains { $0.breaker.isOpen } }

    // MARK: - RemoteLevel

    /// The entry for `key` (`GET`); nil if none or expired. Throws `RemoteLevelError`.
    public func entry(forKey key: String) throws -> RemoteEntry? {
        let redisKey = redisKey(key)
        let reply = try call { try router.run(key: redisKey, [[Data("GET".utf8), redisKey]], decodingValues: true)[0] }
        return try decodeEntry(reply, now: Date().timeIntervalSince1970)
    }

    /// The entries for `keys` in one round trip (`MGET`; in a cluster, one per node, an
    /// `MGET` per slot); keys whose bytes are not a KVCache value, or whose node failed, are
    /// left out (and counted). Throws `RemoteLevelError` if no key could be read.
    public func entries(forKeys keys: [String]) throws -> [String: RemoteEntry] {
        guard !keys.isEmpty else { return [:] }
        let values = try call { try router.getMany(keys.map(redisKey)) }
        var found: [String: RemoteEntry] = [:]
        found.reserveCapacity(keys.count)
        let now = Date().timeIntervalSince1970
        // A value that does not decode, or an error for its node, is counted (by decodeEntry) and left out.
        for (key, value) in zip(keys, values) {
            if let entry = try? decodeEntry(value, now: now) { found[key] = entry }
        }
        return found
    }

    /// Stores `entry` (`SET` with `PX` for its expiration) and publishes the change, in one
    /// round trip. Throws `RemoteLevelError` (`.valueTooLarge` over `maxValueSize`).
    public func setEntry(_ entry: RemoteEntry, forKey key: String) throws {
        let now = Date().timeIntervalSince1970
        let deadline = entry.expiration.deadline(from: now)
        if let deadline, deadline <= now {
            // Already expired: the old value must not outlive this call either.
            return try removeEntry(forKey: key)
        }
        guard entry.data.count <= configuration.maxValueSize else {
            counters.withLock { $0.valuesTooLarge += 1 }
            throw RemoteLevelError(.valueTooLarge, "\(entry.data.count) bytes is more than maxValueSize (\(configuration.maxValueSize))")
        }
        let redisKey = redisKey(key)
        let expiry = deadline.map { [Data("PX".utf8), Data(String(max(1, Int64((($0 - now) * 1000).rounded(.up)))).utf8)] }
        try write(key: key, redisKey: redisKey) { connection in
            [Data("SET".utf8), redisKey, Self.encoded(entry, deadline: deadline, on: connection)] + (expiry ?? [])
        }
    }

    /// The stored bytes for `entry`, in the connection's scratch memory when it lends it
    /// (the bytes are then valid until the connection's next command).
    private static func encoded(_ entry: RemoteEntry, deadline: Double?, on connection: RedisConnection) -> Data {
        let count = RemoteValueFormat.headerSize + entry.data.count
        guard let buffer = connection.scratch(count: count), let start = buffer.baseAddress else {
            return RemoteValueFormat.encode(entry, deadline: deadline)
        }
        RemoteValueFormat.encode(entry, deadline: deadline, into: buffer)
        return Data(bytesNoCopy: start, count: count, deallocator: .none)
    }

    /// Removes `key` (`DEL`) and publishes the change, in one round trip.
    public func removeEntry(forKey key: String) throws {
        let redisKey = redisKey(key)
        try write(key: key, redisKey: redisKey) { _ in [Data("DEL".utf8), redisKey] }
    }

    /// Runs `commands` in one round trip on the server, or the cluster node, holding
    /// `redisKey`, counting the call; error replies are returned, not thrown.
    func run(key redisKey: Data, _ commands: [[Data]]) throws -> [RedisReply] {
        try call { try router.run(key: redisKey, commands) }
    }

    /// Removes this namespace's keys with `prefix` (`SCAN` and `UNLINK`, 1,000 at a time,
    /// on every cluster primary), then publishes the change.
    public func removeEntries(withPrefix prefix: String) throws {
        let pattern = keyPrefix.escapingGlob() + Data(prefix.utf8).escapingGlob() + Data("*".utf8)
        try call {
            try router.forEachPrimary { _, pool in
                try pool.withConnection { try removeKeys(matching: pattern, on: $0) }
            }
        }
        if configuration.publishesChanges {
            try check(call { try router.runOnAnyNode([publishCommand(.prefix(prefix))])[0] })
            counters.withLock { $0.changesPublished += 1 }
        }
    }

    /// Scans the connection's node for `pattern` and unlinks what it finds: one key per
    /// `UNLINK` in a cluster (its keys differ in slot), a routed one for a key moved meanwhile.
    private func removeKeys(matching pattern: Data, on connection: RedisConnection) throws {
        var cursor = Data("0".utf8)
        repeat {
            let reply = try connection.command(
                [Data("SCAN".utf8), cursor, Data("MATCH".utf8), pattern, Data("COUNT".utf8), Data("1000".utf8)])
            guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].data,
                  case .array(let names) = parts[1] else {
                throw RemoteLevelError(.unexpectedReply, "SCAN answered \(reply)")
            }
            let keys = names.compactMap(\.data)
            if !keys.isEmpty {
                if router.isCluster {
                    let replies = try connection.pipeline(keys.map { [Data("UNLINK".utf8), $0] })
                    for (key, reply) in zip(keys, replies) {
                        let moved = ClusterRedirect(reply, from: router.seeds[0]) != nil
                        try Self.throwIfError(moved ? router.run(key: key, [[Data("UNLINK".utf8), key]])[0] : reply)
                    }
                } else {
                    try Self.throwIfError(connection.command([Data("UNLINK".utf8)] + keys))
                }
            }
            cursor = next
        } while cursor != Data("0".utf8)
    }

    /// Subscribes to the namespace's channel on a connection and thread of its own, and
    /// returns once the first attempt succeeded (after its `.resynchronize` was handled) or
    /// failed; it retries every `subscriptionRetryInterval`. One subscriber per level:
    /// a second call throws `.invalidArgument`.
    public func subscribe(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws {
        let started = try subscriber.withLock { current -> RedisSubscriber in
            if current != nil { throw RemoteLevelError(.invalidArgument, "the level has a subscriber already") }
            let new = RedisSubscriber(candidates: router.subscriptionCandidates, connectTimeout: configuration.connectTimeout,
                                      retryDelay: configuration.subscriptionRetryInterval,
                                      checkInterval: configuration.subscriptionCheckInterval, channel: channel, nodeID: nodeID,
                                      counters: counters, handler: handler)
            current = new
            return new
        }
        started.start()
    }

    /// Stops the subscriber and waits for its thread.
    public func stopSubscription() {
        subscriber.withLock { current in
            defer { current = nil }
            return current
        }?.stop()
    }

    /// Whether the server answers now, asked past the circuit breaker: a `PING` to each
    /// server (in a cluster, each node) whose breaker is open, within the connect and command
    /// timeouts; an answer closes that breaker. Throws `.unavailable` if one does not answer.
    /// Returns at once when no breaker is open. A ``Cache``'s recovery queue calls it when a
    /// replay was refused by the breaker, so writes made during an outage are replayed within
    /// about `RemoteRecovery.retryInterval` of the server's return, not `breakDuration`.
    /// Counted in ``Statistics/probes``, not in `calls` or `failures`.
    public func probe() throws {
        for pool in router.allPools where pool.breaker.isOpen {
            counters.withLock { $0.probes += 1 }
            try pool.ping()
            counters.withLock { $0.probesAnswered += 1 }
        }
    }

    // MARK: - Calls

    func redisKey(_ key: String) -> Data {
        var redisKey = Data(capacity: keyPrefix.count + key.utf8.count)
        redisKey.append(keyPrefix)
        redisKey.append(contentsOf: key.utf8)
        return redisKey
    }

    /// Runs a write of `key` (the command `makeCommand` makes for the connection) and, with
    /// the backplane on, publishes the change in the same round trip.
    private func write(key: String, redisKey: Data, _ makeCommand: (RedisConnection) -> [Data]) throws {
        let publish = configuration.publishesChanges ? publishCommand(.key(key)) : nil
        let replies = try call {
            try router.run(key: redisKey) { connection in
                let command = makeCommand(connection)
                return publish.map { [command, $0] } ?? [command]
            }
        }
        for reply in replies { try check(reply) }
        if configuration.publishesChanges { counters.withLock { $0.changesPublished += 1 } }
    }

    private func publishCommand(_ message: InvalidationMessage.Change) -> [Data] {
        [Data("PUBLISH".utf8), channel, InvalidationMessage.encode(message, nodeID: nodeID)]
    }

    /// Runs `body` (commands through the router), counting the call and its failure.
    func call<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            let result = try body()
            counters.withLock { $0.calls += 1 }
            return result
        } catch let error as RemoteLevelError where error.code == .circuitOpen {
            throw error
        } catch {
            counters.withLock { $0.calls += 1 }
            throw failed(error)
        }
    }

    func failed(_ error: Error) -> Error {
        counters.withLock { $0.failures += 1 }
        return error
    }

    /// Throws an error reply as `.serverError`, uncounted (inside a counted call).
    private static func throwIfError(_ reply: RedisReply) throws {
        if case .error(let message) = reply { throw RemoteLevelError(.serverError, message) }
    }

    /// Throws an error reply as `.serverError`, counted as a failure.
    func check(_ reply: RedisReply) throws {
        if case .error(let message) = reply { throw failed(RemoteLevelError(.serverError, message)) }
    }

    /// The entry in a reply to `GET` read with `decodingValues`; nil if none or expired at `now`.
    private func decodeEntry(_ reply: RedisReply, now: Double) throws -> RemoteEntry? {
        switch reply {
        case .null:
            return nil
        case .value(let data, let deadline):
            if let deadline, deadline <= now { return nil }
            return RemoteEntry(data: data, expiration: Expiration(deadline: deadline))
        case .string(let bytes):
            // Read with `decodingValues`: a string, not a `.value`, is not a KVCache value.
            throw failed(RemoteValueFormat.notAValue(bytes))
        case .error(let message):
            throw failed(RemoteLevelError(.serverError, message))
        default:
            throw failed(RemoteLevelError(.unexpectedReply, "GET answered \(reply)"))
        }
    }
}

extension Data {
    /// The bytes with Redis's glob characters (`*?[]\`) escaped, for `SCAN MATCH`.
    func escapingGlob() -> Data {
        var escaped = Data(capacity: count)
        for byte in self {
            if byte == UInt8(ascii: "*") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "[")
                || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "\\") {
                escaped.append(UInt8(ascii: "\\"))
            }
            escaped.append(byte)
        }
        return escaped
    }
}
