import Foundation
import KVCache

/// The backplane's receiving side: a thread holding its own connection subscribed to the
/// namespace's channel, delivering other nodes' changes, checking the server with a `PING`
/// when the channel is silent, and subscribing again (after `retryDelay`) whenever the
/// connection is lost, with a `.resynchronize` each time.
final class RedisSubscriber: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var isStopped = false
    private var isFinished = false
    private var firstAttemptDone = false
    private var current: RedisConnection?

    /// The nodes to subscribe on, tried in turn (any cluster node gets every message).
    private let candidates: @Sendable () -> [RedisAddress]
    private let connectTimeout: Duration
    private let retryDelay: Double
    private let checkInterval: Double
    private let channel: Data
    private let nodeID: Data
    private let handler: @Sendable (RemoteChange) -> Void
    private let counters: RedisLevelCounters

    init(candidates: @escaping @Sendable () -> [RedisAddress], connectTimeout: Duration, retryDelay: Duration,
         checkInterval: Duration, channel: Data, nodeID: Data,
         counters: RedisLevelCounters, handler: @escaping @Sendable (RemoteChange) -> Void) {
        self.candidates = candidates
        self.connectTimeout = connectTimeout
        self.retryDelay = max(retryDelay.seconds, 0.01)
        self.checkInterval = checkInterval.seconds
        self.channel = channel
        self.nodeID = nodeID
        self.counters = counters
        self.handler = handler
    }

    /// Starts the thread, and returns once its first subscription has been made and
    /// delivered its `.resynchronize`, or has failed.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "KVCacheRedis.subscriber"
        thread.start()
        condition.withLock { while !firstAttemptDone { condition.wait() } }
    }

    /// Stops the thread and waits for it: no handler runs after this returns.
    func stop() {
        condition.withLock {
            isStopped = true
            current?.interrupt()
            condition.broadcast()
            while !isFinished { condition.wait() }
        }
    }

    private func run() {
        while !condition.withLock({ isStopped }) {
            do {
                let connection = try connect()
                let adopted = condition.withLock { () -> Bool in
                    if isStopped { return false }
                    current = connection
                    return true
                }
                guard adopted else { break }
                try subscribe(connection)
                // Before any reader is told the subscription is on: the local copies go first.
                handler(.resynchronize)
                counters.withLock { $0.subscriptions += 1 }
                markFirstAttemptDone()
                while true {
                    if let reply = try connection.nextReply(within: checkInterval) {
                        deliver(reply)
                    } else {
                        try checkServer(connection)
                    }
                }
            } catch {
                markFirstAttemptDone()
                let stopped = condition.withLock { () -> Bool in
                    current = nil
                    return isStopped
                }
                if stopped { break }
                counters.withLock { $0.subscriptionFailures += 1 }
                condition.withLock {
                    let deadline = Date(timeIntervalSinceNow: retryDelay)
                    while !isStopped, condition.wait(until: deadline) {}
                }
            }
        }
        condition.withLock {
            current = nil
            isFinished = true
            firstAttemptDone = true
            condition.broadcast()
        }
    }

    /// A connection to the first candidate that accepts one.
    private func connect() throws -> RedisConnection {
        var lastError: Error = RemoteLevelError(.unavailable, "no server to subscribe on")
        for address in candidates() {
            do {
                // The timeout bounds AUTH and SELECT on a hung server; later reads poll.
                return try RedisConnection(address: address, connectTimeout: connectTimeout,
                                           commandTimeout: .milliseconds(Int64(checkInterval * 1000)))
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    private func markFirstAttemptDone() {
        condition.withLock {
            firstAttemptDone = true
            condition.broadcast()
        }
    }

    private func subscribe(_ connection: RedisConnection) throws {
        try connection.send([Data("SUBSCRIBE".utf8), channel])
        // A hung server accepts connections (the kernel does) but never answers.
        guard let reply = try connection.nextReply(within: checkInterval) else {
            throw RemoteLevelError(.unavailable, "SUBSCRIBE got no answer within \(checkInterval) s")
        }
        guard case .array(let parts) = reply, parts.first?.data == Data("subscribe".utf8) else {
            throw RemoteLevelError(.unexpectedReply, "SUBSCRIBE answered \(reply)")
        }
    }

    /// After `checkInterval` without a message: a `PING` the server must answer within
    /// another `checkInterval`, or the subscription counts as lost (a silent network
    /// failure or a hung server, which TCP alone notices late or never).
    private func checkServer(_ connection: RedisConnection) throws {
        try connection.send([Data("PING".utf8)])
        let deadline = Condition.now() + checkInterval
        while let reply = try connection.nextReply(within: deadline - Condition.now()) {
            // In subscribed mode a PING is answered with ["pong", ""].
            if case .array(let parts) = reply, parts.first?.data == Data("pong".utf8) { return }
            deliver(reply)
        }
        counters.withLock { $0.subscriptionsLost += 1 }
        throw RemoteLevelError(.unavailable, "the subscription's server did not answer PING within \(checkInterval) s")
    }

    /// Hands a message another node published to the handler.
    private func deliver(_ reply: RedisReply) {
        guard case .array(let parts) = reply, parts.count == 3, parts[0].data == Data("message".utf8),
              let payload = parts[2].data else { return }
        guard let message = InvalidationMessage(payload) else {
            counters.withLock { $0.malformedMessages += 1 }
            return
        }
        if message.nodeID == nodeID { return }
        handler(message.change)
        // Counted once handled: a waiter then sees the local copies dropped.
        counters.withLock { $0.changesReceived += 1 }
    }
}

/// An invalidation on the channel: `<node id> k <key>` or `<node id> p <prefix>`.
struct InvalidationMessage {
    /// What a node publishes (never `.resynchronize`, which each subscriber decides alone).
    enum Change {
        case key(String)
        case prefix(String)
    }

    var nodeID: Data
    var change: RemoteChange

    static func encode(_ change: Change, nodeID: Data) -> Data {
        var data = nodeID
        switch change {
        case .key(let key): data.append(contentsOf: Array(" k \(key)".utf8))
        case .prefix(let prefix): data.append(contentsOf: Array(" p \(prefix)".utf8))
        }
        return data
    }

    init?(_ payload: Data) {
        let bytes = [UInt8](payload)
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")), space > 0, bytes.count >= space + 3,
              bytes[space + 2] == UInt8(ascii: " ") else { return nil }
        nodeID = Data(bytes[..<space])
        let text = String(decoding: bytes[(space + 3)...], as: UTF8.self)
        switch bytes[space + 1] {
        case UInt8(ascii: "k"): change = .key(text)
        case UInt8(ascii: "p"): change = .prefix(text)
        default: return nil
        }
    }
}
