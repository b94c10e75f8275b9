import CHiredis
import Foundation

/// A reply from Redis, copied out of hiredis's reply object.
enum RedisReply: Sendable, Equatable {
    case string(Data)
    /// A bulk string holding a KVCache value (`RemoteValueFormat`), read with its header
    /// checked on hiredis's bytes and only the value copied: the replies to a level's gets.
    case value(Data, deadline: Double?)
    case status(String)
    case integer(Int64)
    case array([RedisReply])
    case null
    case error(String)

    /// Copies `reply` (and its elements) into Swift values; with `decodingValues`, bulk
    /// strings in the KVCache value format become `.value` (others stay `.string`).
    init(_ reply: UnsafeMutablePointer<redisReply>, decodingValues: Bool = false) {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            let bytes = UnsafeRawBufferPointer(start: value.str, count: value.str == nil ? 0 : value.len)
            if decodingValues, let decoded = RemoteValueFormat.decode(bytes) {
                self = .value(decoded.data, deadline: decoded.deadline)
            } else {
                self = .string(Data(bytes))
            }
        case REDIS_REPLY_ARRAY:
            self = .array((0..<value.elements).map {
                RedisReply(kvcache_reply_element(reply, $0), decodingValues: decodingValues)
            })
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(value.integer))
        case REDIS_REPLY_NIL:
            self = .null
        case REDIS_REPLY_STATUS:
            self = .status(Self.text(value))
        case REDIS_REPLY_ERROR:
            self = .error(Self.text(value))
        default:
            self = .error("unknown reply type \(value.type)")
        }
    }

    private static func text(_ reply: redisReply) -> String {
        guard let str = reply.str, reply.len > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: str, count: reply.len), as: UTF8.self)
    }

    /// The bulk string's bytes, or nil for anything else.
    var data: Data? {
        if case .string(let data) = self { return data }
        return nil
    }
}
