#if Tracing
import Foundation
import Tracing

/// Package trait `Tracing`: a remote level whose every call is a client span
/// (`kvcache.remote.get`, `.get_many`, `.set`, `.remove`, `.remove_prefix`, `.acquire_lease`,
/// `.release_lease`, `.probe`), a child of the caller's span, with the error it threw.
/// A ``Cache`` wraps its remote level in one only when it has a tracer.
final class TracedRemoteLevel: RemoteLevel {
    let base: any RemoteLevel
    private let tracer: any Tracer

    init(_ base: any RemoteLevel, tracer: any Tracer) {
        self.base = base
        self.tracer = tracer
    }

    /// The tracer a cache uses: the configured one, else the bootstrapped one; nil for the
    /// no-op tracer, so that a cache without a tracer pays nothing for tracing.
    static func tracer(configured: (any Tracer)?) -> (any Tracer)? {
        let tracer = configured ?? InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    private func traced<T>(_ operation: String, _ body: (any Span) throws -> T) throws -> T {
        try tracer.withSpan("kvcache.remote.\(operation)", ofKind: .client) { span in try body(span) }
    }

    func entry(forKey key: String) throws -> RemoteEntry? {
        try traced("get") { span in
            let entry = try base.entry(forKey: key)
            span.attributes["kvcache.hit"] = entry != nil
            return entry
        }
    }

    func entries(forKeys keys: [String]) throws -> [String: RemoteEntry] {
        try traced("get_many") { span in
            let entries = try base.entries(forKeys: keys)
            span.attributes["kvcache.keys"] = keys.count
            span.attributes["kvcache.hits"] = entries.count
            return entries
        }
    }

    func setEntry(_ entry: RemoteEntry, forKey key: String) throws {
        try traced("set") { span in
            span.attributes["kvcache.bytes"] = entry.data.count
            try base.setEntry(entry, forKey: key)
        }
    }

    func removeEntry(forKey key: String) throws {
        try traced("remove") { _ in try base.removeEntry(forKey: key) }
    }

    func removeEntries(withPrefix prefix: String) throws {
        try traced("remove_prefix") { _ in try base.removeEntries(withPrefix: prefix) }
    }

    func subscribe(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws {
        try base.subscribe(handler)
    }

    func stopSubscription() {
        base.stopSubscription()
    }

    func acquireLease(forKey key: String, duration: Duration) throws -> RemoteLease? {
        try traced("acquire_lease") { span in
            let lease = try base.acquireLease(forKey: key, duration: duration)
            span.attributes["kvcache.lease.granted"] = lease != nil
            return lease
        }
    }

    func releaseLease(_ lease: RemoteLease) throws {
        try traced("release_lease") { _ in try base.releaseLease(lease) }
    }

    func probe() throws {
        try traced("probe") { _ in try base.probe() }
    }
}
#endif
