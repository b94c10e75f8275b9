import ArgumentParser
import Foundation
import KVCache
import KVCacheRedis
#if canImport(Glibc)
import Glibc
#endif

/// The other process of the invalidation rows (`kvcache-bench remote-peer`, hidden): it
/// subscribes three ways and writes, for each message, `<kind> <key> <monotonic ns>` on
/// stdout the moment it has it:
///
/// - `raw`: a hiredis connection SUBSCRIBEd to `<namespace>:raw` (the floor);
/// - `level`: a `RedisLevel`'s subscriber (namespace `<namespace>-level`), at its handler;
/// - `cache`: a `Cache<Data>` whose remote level (namespace `<namespace>-cache`) holds
///   `c0`…`c<keys-1>` in memory and on disk, once the cache has dropped its copies.
///
/// It writes `ready` once all three are subscribed, and exits at end of file on stdin.
/// CLOCK_MONOTONIC is one clock for every process of the machine, so the parent
/// subtracts its own readings from these.
struct RemotePeer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote-peer",
        abstract: "The other process of `remote`'s invalidation rows (started by `remote`, not by hand).",
        shouldDisplay: false)

    @Option var redis: String
    @Option var namespace: String
    @Option var keys: Int
    @Option var directory: String
    @Option var valueSize: Int = 1_024

    static func rawChannel(_ namespace: String) -> String { namespace + ":raw" }

    func run() throws {
        let address = try RedisAddress(redis)
        let output = PeerOutput()

        let raw = try RawRedis(address: address, timeout: nil)
        guard case .array(let parts) = try raw.command(["SUBSCRIBE", Self.rawChannel(namespace)]),
              parts.first?.data == Data("subscribe".utf8) else {
            throw ValidationError("the raw SUBSCRIBE failed")
        }
        let rawSubscriber = Thread {
            while let reply = try? raw.readReply() {
                let now = Clock.now()
                guard case .array(let parts) = reply, parts.count == 3, parts[0].data == Data("message".utf8),
                      let payload = parts[2].data else { continue }
                output.line("raw \(String(decoding: payload, as: UTF8.self)) \(now)")
            }
        }
        rawSubscriber.start()

        let level = try RedisLevel(configuration: .init(address: address, namespace: namespace + "-level"))
        try level.subscribe { change in
            let now = Clock.now()
            if case .key(let key) = change { output.line("level \(key) \(now)") }
        }

        var configuration = Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = TimedRemoteLevel(
            try RedisLevel(configuration: .init(address: address, namespace: namespace + "-cache"))) { key in
            output.line("cache \(key) \(Clock.now())")
        }
        let cache = try Cache<Data>(directory: URL(fileURLWithPath: directory, isDirectory: true),
                                    configuration: configuration)
        let value = Data((0..<valueSize).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for index in 0..<keys { try cache.setValue(value, forKey: "c\(index)") }
        try cache.flush()
        output.line("ready")

        while readLine() != nil {}
        level.stopSubscription()
        try cache.close()
        // The raw subscriber blocks in its read; the process ends it.
        Glibc.exit(0)
    }
}

/// A `RemoteLevel` that calls `delivered` with each key another node changed, once the
/// wrapped handler (the cache's: dropping its local copies) has returned.
final class TimedRemoteLevel: RemoteLevel {
    let level: any RemoteLevel
    let delivered: @Sendable (String) -> Void

    init(_ level: any RemoteLevel, delivered: @escaping @Sendable (String) -> Void) {
        self.level = level
        self.delivered = delivered
    }

    func entry(forKey key: String) throws -> RemoteEntry? { try level.entry(forKey: key) }
    func entries(forKeys keys: [String]) throws -> [String: RemoteEntry] { try level.entries(forKeys: keys) }
    func setEntry(_ entry: RemoteEntry, forKey key: String) throws { try level.setEntry(entry, forKey: key) }
    func removeEntry(forKey key: String) throws { try level.removeEntry(forKey: key) }
    func removeEntries(withPrefix prefix: String) throws { try level.removeEntries(withPrefix: prefix) }
    func stopSubscription() { level.stopSubscription() }

    func subscribe(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws {
        let delivered = self.delivered
        try level.subscribe { change in
            handler(change)
            if case .key(let key) = change { delivered(key) }
        }
    }
}

/// Lines on stdout from several threads, each in one write(2) (atomic on a pipe).
private final class PeerOutput: Sendable {
    private let lock = PthreadMutex()

    func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        lock.withLock {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 && errno == EINTR { continue }
                // The parent is gone: nothing left to report to.
                if written <= 0 { exit(1) }
                offset += written
            }
        }
    }
}
