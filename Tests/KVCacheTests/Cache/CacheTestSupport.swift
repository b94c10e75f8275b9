import Foundation
@testable import KVCache

/// A temporary base directory and one manual clock for both levels of the caches made in it.
struct CacheFixture {
    let base = TemporaryDirectory("cache")
    let clock = ManualClock()

    /// A cache in `base/name/` without timers, reading time from `clock`.
    func make<Value>(
        _ name: String = "test", coder: some CacheCoder<Value>,
        configure: (inout Cache<Value>.Configuration) -> Void = { _ in },
        didJoinLoad: @escaping @Sendable (String, Int) -> Void = { _, _ in }
    ) throws -> Cache<Value> {
        var configuration = Cache<Value>.Configuration(
            memory: .init(autoTrimInterval: nil), disk: .testing { $0.clock = clock.function })
        configure(&configuration)
        return try Cache(
            directory: base.url.appendingPathComponent(name), name: name, coder: coder,
            configuration: configuration, memoryClock: CacheClock(manual: clock), didJoinLoad: didJoinLoad)
    }

    /// A cache of raw bytes.
    func make(
        _ name: String = "test", configure: (inout Cache<Data>.Configuration) -> Void = { _ in }
    ) throws -> Cache<Data> {
        try make(name, coder: DataCoder(), configure: configure)
    }

    func remove() { base.remove() }
}

/// A value for the typed-value tests.
struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

/// A coder that fails on purpose.
struct FailingCoder: CacheCoder {
    struct Failure: Error {}
    func encode(_ value: Int) throws -> Data { throw Failure() }
    func decode(_ data: Data) throws -> Int { throw Failure() }
}

/// Holds async work until the test opens it.
final class AsyncGate: Sendable {
    private let state = MutexBox<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let passes = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(waiter)
                return false
            }
            if passes { waiter.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
