import Foundation
import KVCache
import Synchronization

/// Connections to one server, handed to one caller at a time, behind a circuit breaker.
/// A connection that failed is dropped; the next call connects anew (reconnecting).
final class RedisConnectionPool: Sendable {
    let address: RedisAddress
    let breaker: CircuitBreaker
    private let idle = MutexBox<[RedisConnection]>([])
    /// Round trips made on this pool's connections (for `RedisLevel.Statistics.roundTrips`).
    let roundTrips = Atomic<Int>(0)
    private let connectTimeout: Duration
    private let commandTimeout: Duration
    private let maxIdle: Int

    init(address: RedisAddress, connectTimeout: Duration, commandTimeout: Duration, breakDuration: Duration, maxIdle: Int) {
        self.address = address
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.maxIdle = maxIdle
        breaker = CircuitBreaker(breakDuration: breakDuration)
    }

    /// Runs `body` on a connection. Failures to reach the server open the breaker;
    /// while it is open this throws `.circuitOpen` at once, unless `pastBreaker` (a probe).
    func withConnection<Result>(pastBreaker: Bool = false, _ body: (RedisConnection) throws -> Result) throws -> Result {
        if !pastBreaker { try breaker.permit() }
        let connection: RedisConnection
        if let reused = idle.withLock({ $0.popLast() }) {
            connection = reused
        } else {
            do {
                connection = try RedisConnection(address: address, connectTimeout: connectTimeout,
                                                 commandTimeout: commandTimeout)
            } catch let error as RemoteLevelError {
                if error.code == .unavailable { breaker.failed() } else { breaker.succeeded() }
                throw error
            }
        }
        let roundTripsBefore = connection.roundTrips
        defer { roundTrips.add(connection.roundTrips - roundTripsBefore, ordering: .relaxed) }
        do {
            let result = try body(connection)
            breaker.succeeded()
            giveBack(connection)
            return result
        } catch let error as RemoteLevelError where error.code == .unavailable {
            breaker.failed()
            // The idle connections share this one's fate (a restarted or lost server): each
            // would fail once more, and open the breaker again, before a new one is made.
            close()
            throw error
        } catch {
            breaker.succeeded()
            giveBack(connection)
            throw error
        }
    }

    /// A `PING` past the breaker, within the connect and command timeouts: an answer closes
    /// the breaker, a server that cannot be reached keeps it open for another `breakDuration`.
    func ping() throws {
        try withConnection(pastBreaker: true) { connection in
            let reply = try connection.command([Data("PING".utf8)])
            guard reply == .status("PONG") else { throw RemoteLevelError(.unexpectedReply, "PING answered \(reply)") }
        }
    }

    private func giveBack(_ connection: RedisConnection) {
        guard !connection.isBroken else { return }
        idle.withLock { if $0.count < maxIdle { $0.append(connection) } }
    }

    /// Closes the idle connections.
    func close() {
        idle.withLock { $0.removeAll() }
    }
}
