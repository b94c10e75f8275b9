import BenchHiredis
import Foundation
import KVCacheRedis

/// The floor of `kvcache-bench remote`: one blocking hiredis connection used as plainly as
/// hiredis allows. A command is `redisCommandArgv` (or appended commands and their
/// replies, for a pipeline) with arguments prepared once by the caller; a bulk reply is
/// copied into `Data` (the level copies it too, so the floor does the same work there).
/// One thread at a time.
final class RawRedis: @unchecked Sendable {
    /// A reply, copied out of hiredis's reply object.
    enum Reply: Equatable {
        case string(Data)
        case status(String)
        case integer(Int64)
        case array([Reply])
        case null
        case error(String)

        var data: Data? {
            if case .string(let data) = self { return data }
            return nil
        }

        /// A bulk or status reply as text (INFO's, say).
        var text: String? {
            switch self {
            case .string(let data): return String(decoding: data, as: UTF8.self)
            case .status(let text): return text
            default: return nil
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let context: UnsafeMutablePointer<redisContext>

    static let get = Data("GET".utf8), set = Data("SET".utf8), mget = Data("MGET".utf8)
    static let publish = Data("PUBLISH".utf8)

    /// Connects within 2 s; each command then waits up to `timeout` seconds (nil: forever,
    /// for a subscriber).
    init(address: RedisAddress, timeout: Double? = 5) throws {
        guard let context = redisConnectWithTimeout(address.host, Int32(address.port), timeval(tv_sec: 2, tv_usec: 0))
        else { throw Failure(description: "cannot allocate a hiredis context") }
        self.context = context
        if context.pointee.err != 0 {
            throw Failure(description: "cannot connect to \(address): \(Self.errorText(context))")
        }
        if let timeout {
            let whole = Int(timeout)
            guard redisSetTimeout(context, timeval(tv_sec: whole, tv_usec: Int((timeout - Double(whole)) * 1e6)))
                    == REDIS_OK else { throw Failure(description: "cannot set the timeout") }
        }
        if let password = address.password { try expectOK(command(["AUTH", password]), "AUTH") }
        if address.database != 0 { try expectOK(command(["SELECT", String(address.database)]), "SELECT") }
    }

    deinit {
        redisFree(context)
    }

    // MARK: The floor's operations

    /// `GET key`: the value's bytes, or nil.
    @inline(__always)
    func get(_ key: Data) throws -> Data? {
        let reply = try run([Self.get, key])
        if case .error(let message) = reply { throw Failure(description: "GET: \(message)") }
        return reply.data
    }

    /// `SET key value`.
    @inline(__always)
    func set(_ key: Data, _ value: Data) throws {
        try expectOK(run([Self.set, key, value]), "SET")
    }

    /// `SET key value` and `PUBLISH channel message` in one write, then both replies.
    func setAndPublish(_ key: Data, _ value: Data, channel: Data, message: Data) throws {
        let replies = try pipeline([[Self.set, key, value], [Self.publish, channel, message]])
        try expectOK(replies[0], "SET")
        if case .error(let message) = replies[1] { throw Failure(description: "PUBLISH: \(message)") }
    }

    /// `PUBLISH channel message`.
    func publish(_ channel: Data, _ message: Data) throws {
        let reply = try run([Self.publish, channel, message])
        if case .error(let message) = reply { throw Failure(description: "PUBLISH: \(message)") }
    }

    /// `MGET keys…`: each key's bytes or nil, in order.
    func mget(_ keys: [Data]) throws -> [Data?] {
        let reply = try run([Self.mget] + keys)
        guard case .array(let values) = reply, values.count == keys.count else {
            throw Failure(description: "MGET answered \(reply)")
        }
        return values.map(\.data)
    }

    /// Any command, given as strings (set-up, INFO, DEL, PING).
    @discardableResult
    func command(_ arguments: [String]) throws -> Reply {
        try run(arguments.map { Data($0.utf8) })
    }

    /// The next reply on the connection: a subscriber's next message.
    func readReply() throws -> Reply {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw failure() }
        defer { freeReplyObject(raw) }
        return Self.copy(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// `calls` of `INFO commandstats` for each command (lowercased name → calls).
    func commandCalls() throws -> [String: Int] {
        guard let text = try command(["INFO", "commandstats"]).text else {
            throw Failure(description: "INFO commandstats answered no text")
        }
        return Self.parseCommandStats(text)
    }

    /// `cmdstat_get:calls=12,usec=…` lines → ["get": 12].
    static func parseCommandStats(_ text: String) -> [String: Int] {
        var calls: [String: Int] = [:]
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[line.index(line.startIndex, offsetBy: "cmdstat_".count)..<colon]
            for field in line[line.index(after: colon)...].split(separator: ",") where field.hasPrefix("calls=") {
                if let count = Int(field.dropFirst("calls=".count)) { calls[String(name).lowercased()] = count }
            }
        }
        return calls
    }

    // MARK: hiredis

    /// One command, its reply copied.
    @inline(__always)
    private func run(_ arguments: [Data]) throws -> Reply {
        let raw = Self.withArgv(arguments) { argv, lengths in
            redisCommandArgv(context, Int32(arguments.count), argv, lengths)
        }
        guard let raw else { throw failure() }
        defer { freeReplyObject(raw) }
        return Self.copy(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Commands appended to the output buffer, sent in one write, their replies read in order.
    private func pipeline(_ commands: [[Data]]) throws -> [Reply] {
        for arguments in commands {
            let status = Self.withArgv(arguments) { argv, lengths in
                redisAppendCommandArgv(context, Int32(arguments.count), argv, lengths)
            }
            guard status == REDIS_OK else { throw failure() }
        }
        return try commands.map { _ in try readReply() }
    }

    private func expectOK(_ reply: Reply, _ what: String) throws {
        if case .error(let message) = reply { throw Failure(description: "\(what): \(message)") }
    }

    private func failure() -> Failure {
        let text = Self.errorText(context)
        return Failure(description: text.isEmpty ? "I/O error \(context.pointee.err)" : text)
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: &context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> Reply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            return .string(value.len == 0 ? Data() : Data(bytes: value.str, count: value.len))
        case REDIS_REPLY_ARRAY:
            return .array((0..<value.elements).map { copy(bench_reply_element(reply, $0)) })
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(value.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_STATUS, REDIS_REPLY_ERROR:
            let text = value.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: value.len), as: UTF8.self) } ?? ""
            return value.type == REDIS_REPLY_STATUS ? .status(text) : .error(text)
        default:
            return .error("reply type \(value.type)")
        }
    }

    /// hiredis's argv and argvlen for `arguments`, pointing into them (no copy).
    @inline(__always)
    private static func withArgv<Result>(
        _ arguments: [Data], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: arguments.count) { pointers in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: arguments.count) { lengths in
                collect(arguments, 0, pointers, lengths, body)
            }
        }
    }

    private static func collect<Result>(
        _ arguments: [Data], _ index: Int, _ pointers: UnsafeMutableBufferPointer<UnsafePointer<CChar>?>,
        _ lengths: UnsafeMutableBufferPointer<Int>,
        _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Result
    ) -> Result {
        if index == arguments.count { return body(pointers.baseAddress!, UnsafePointer(lengths.baseAddress!)) }
        return arguments[index].withUnsafeBytes { raw in
            pointers[index] = raw.baseAddress?.assumingMemoryBound(to: CChar.self) ?? emptyArgument
            lengths[index] = raw.count
            return collect(arguments, index + 1, pointers, lengths, body)
        }
    }

    nonisolated(unsafe) private static let emptyArgument: UnsafePointer<CChar> = {
        let byte = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        byte.initialize(to: 0)
        return UnsafePointer(byte)
    }()
}
