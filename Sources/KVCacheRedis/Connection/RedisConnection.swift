import CHiredis
import Foundation
import KVCache

/// One hiredis connection: one caller at a time (`RedisConnectionPool` hands it out).
/// After an I/O error or a timeout hiredis cannot use it again: `isBroken` says so.
final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    /// Set after a failure that leaves the connection unusable.
    private(set) var isBroken = false
    /// Commands (or pipelines of them) sent and answered.
    private(set) var roundTrips = 0

    /// Connects to `address` within `connectTimeout`; each later command fails after
    /// `commandTimeout` without an answer (nil: waits as long as it takes).
    init(address: RedisAddress, connectTimeout: Duration, commandTimeout: Duration?) throws {
        guard let context = redisConnectWithTimeout(address.host, Int32(address.port), Self.timeval(connectTimeout)) else {
            throw RemoteLevelError(.unavailable, "cannot allocate a Redis connection")
        }
        // Every stored property is set from here: a throw runs deinit, which frees the context.
        self.context = context
        if context.pointee.err != 0 {
            let message = Self.errorText(context)
            throw RemoteLevelError(.unavailable, "cannot connect to \(address.host):\(address.port): \(message)")
        }
        _ = redisEnableKeepAlive(context)
        if let commandTimeout, redisSetTimeout(context, Self.timeval(commandTimeout)) != REDIS_OK {
            throw RemoteLevelError(.unavailable, "cannot set the command timeout")
        }
        if let password = address.password {
            try expectStatus(command([Data("AUTH".utf8), Data(password.utf8)]), "AUTH")
        }
        if address.database != 0 {
            try expectStatus(command([Data("SELECT".utf8), Data(String(address.database).utf8)]), "SELECT")
        }
    }

    deinit {
        redisFree(context)
        scratch.deallocate()
    }

    private func expectStatus(_ reply: RedisReply, _ what: String) throws {
        if case .error(let message) = reply { throw RemoteLevelError(.serverError, "\(what): \(message)") }
    }

    /// Sends one command and returns its reply (a Redis error is a reply, not a throw).
    func command(_ arguments: [Data]) throws -> RedisReply {
        try pipeline([arguments])[0]
    }

    /// Sends `commands` in one write and reads their replies, in order; with
    /// `decodingValues`, KVCache values come back as `.value`.
    func pipeline(_ commands: [[Data]], decodingValues: Bool = false) throws -> [RedisReply] {
        guard !isBroken else { throw RemoteLevelError(.unavailable, "the connection was lost") }
        for arguments in commands {
            let status = Self.withPointers(arguments) { pointers, lengths in
                redisAppendCommandArgv(context, Int32(arguments.count), pointers, lengths)
            }
            guard status == REDIS_OK else { throw failure() }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands { replies.append(try readReply(decodingValues: decodingValues)) }
        roundTrips += 1
        return replies
    }

    /// Reads the next reply (a subscriber's next message), waiting as the command timeout allows.
    func readReply(decodingValues: Bool = false) throws -> RedisReply {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw failure() }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        if decodingValues, let value = Self.largeValue(reply) { return value }
        defer { freeReplyObject(raw) }
        return RedisReply(reply, decodingValues: decodingValues)
    }

    /// Values from this size up are not copied out of hiredis's reply: its Data frees the
    /// reply. Below it a copy costs less than the Data's deallocator.
    static let smallestUncopiedValue = 16 * 1024

    /// A value of at least `smallestUncopiedValue` bytes in the top-level string `reply`,
    /// as a `Data` over hiredis's bytes that owns (and frees) the reply; nil for anything
    /// else, the reply then still the caller's.
    private static func largeValue(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply? {
        let value = reply.pointee
        guard value.type == REDIS_REPLY_STRING, let str = value.str,
              value.len >= RemoteValueFormat.headerSize + smallestUncopiedValue else { return nil }
        let bytes = UnsafeRawBufferPointer(start: str, count: value.len)
        guard let deadline = RemoteValueFormat.deadline(ofValueIn: bytes) else { return nil }
        let address = UInt(bitPattern: reply)
        let data = Data(bytesNoCopy: UnsafeMutableRawPointer(str) + RemoteValueFormat.headerSize,
                        count: value.len - RemoteValueFormat.headerSize,
                        deallocator: .custom { _, _ in freeReplyObject(UnsafeMutableRawPointer(bitPattern: address)) })
        return .value(data, deadline: deadline)
    }

    /// Memory of this connection's own, reused by each set's encoded value up to
    /// `largestScratch` bytes: a new buffer per set of a value of 100 KB made glibc give
    /// the top of its heap back and fault it in again on every set (2.5× the raw SET).
    private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    static let largestScratch = 1 << 20

    /// `count` bytes of this connection's scratch memory, valid until the next call; nil
    /// over `largestScratch`.
    func scratch(count: Int) -> UnsafeMutableRawBufferPointer? {
        guard count <= Self.largestScratch else { return nil }
        if scratch.count < count {
            scratch.deallocate()
            scratch = .allocate(byteCount: max(count, 4096), alignment: 16)
        }
        return UnsafeMutableRawBufferPointer(rebasing: scratch[..<count])
    }

    /// The next reply if one arrives within `seconds`, else nil (the connection stays
    /// usable, unlike after a command timeout): for a subscriber that checks its server.
    func nextReply(within seconds: Double) throws -> RedisReply? {
        guard !isBroken else { throw RemoteLevelError(.unavailable, "the connection was lost") }
        let deadline = Condition.now() + max(0, seconds)
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { throw failure() }
            if let raw {
                defer { freeReplyObject(raw) }
                return RedisReply(raw.assumingMemoryBound(to: redisReply.self))
            }
            let remaining = deadline - Condition.now()
            if remaining <= 0 { return nil }
            var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, Double(Int32.max)).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                isBroken = true
                throw RemoteLevelError(.unavailable, "poll failed: errno \(errno)")
            }
            if ready == 0 { return nil }
            guard redisBufferRead(context) == REDIS_OK else { throw failure() }
        }
    }

    /// Sends a command without waiting for its reply (its reply comes from `nextReply`).
    func send(_ arguments: [Data]) throws {
        guard !isBroken else { throw RemoteLevelError(.unavailable, "the connection was lost") }
        let status = Self.withPointers(arguments) { pointers, lengths in
            redisAppendCommandArgv(context, Int32(arguments.count), pointers, lengths)
        }
        guard status == REDIS_OK else { throw failure() }
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw failure() }
        }
    }

    /// Makes a `readReply` blocked on another thread return (with an error): for stopping a subscriber.
    func interrupt() {
        _ = Glibc.shutdown(context.pointee.fd, Int32(SHUT_RDWR))
    }

    private func failure() -> RemoteLevelError {
        isBroken = true
        let code = context.pointee.err
        let message = Self.errorText(context)
        if code == REDIS_ERR_PROTOCOL { return RemoteLevelError(.unexpectedReply, "protocol error: \(message)") }
        return RemoteLevelError(.unavailable, message.isEmpty ? "I/O error \(code)" : message)
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: &context.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        let microseconds = max(0, attoseconds / 1_000_000_000_000)
        return Glibc.timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(microseconds))
    }

    /// Calls `body` with hiredis's argv and argvlen for `arguments`, without copying them.
    private static func withPointers<Result>(
        _ arguments: [Data], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Result
    ) -> Result {
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(arguments.count)
        return collect(arguments, 0, &pointers) { pointers in
            let lengths = arguments.map(\.count)
            return pointers.withUnsafeMutableBufferPointer { pointerBuffer in
                lengths.withUnsafeBufferPointer { body(pointerBuffer.baseAddress!, $0.baseAddress!) }
            }
        }
    }

    nonisolated(unsafe) private static let emptyArgument: UnsafePointer<CChar> = {
        let byte = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        byte.initialize(to: 0)
        return UnsafePointer(byte)
    }()

    private static func collect<Result>(
        _ arguments: [Data], _ index: Int, _ pointers: inout [UnsafePointer<CChar>?],
        _ body: (inout [UnsafePointer<CChar>?]) -> Result
    ) -> Result {
        if index == arguments.count { return body(&pointers) }
        return arguments[index].withUnsafeBytes { raw in
            pointers.append(raw.baseAddress?.assumingMemoryBound(to: CChar.self) ?? emptyArgument)
            return collect(arguments, index + 1, &pointers, body)
        }
    }
}
