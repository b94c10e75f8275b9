import Foundation
import KVCache

/// Where a Redis server listens: `redis://[:password@]host[:port][/database]`.
public struct RedisAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The TCP port. Default 6379.
    public var port: Int
    /// The password sent with `AUTH`, or nil.
    public var password: String?
    /// The database selected with `SELECT`. Default 0.
    public var database: Int

    /// An address from its parts.
    public init(host: String, port: Int = 6379, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.password = password
        self.database = database
    }

    /// Parses `redis://[:password@]host[:port][/database]`, or `host:port`.
    ///
    /// - Throws: `RemoteLevelError` with `.invalidArgument` for anything else.
    public init(_ text: String) throws {
        var rest = Substring(text)
        if rest.hasPrefix("redis://") { rest = rest.dropFirst("redis://".count) }
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            password = String(credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).last ?? "")
            rest = rest[rest.index(after: at)...]
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let text = rest[rest.index(after: slash)...]
            guard text.isEmpty || Int(text) != nil, let number = text.isEmpty ? 0 : Int(text), number >= 0 else {
                throw RemoteLevelError(.invalidArgument, "not a database number in \(text)")
            }
            database = number
            rest = rest[..<slash]
        }
        var host = rest
        var port = 6379
        if let colon = rest.lastIndex(of: ":") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(number) else {
                throw RemoteLevelError(.invalidArgument, "not a port in \(text)")
            }
            port = number
            host = rest[..<colon]
        }
        guard !host.isEmpty else { throw RemoteLevelError(.invalidArgument, "no host in \(text)") }
        self.init(host: String(host), port: port, password: password?.isEmpty == true ? nil : password,
                  database: database)
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }
}
