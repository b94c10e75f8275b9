#if HTTP
import Foundation
import KVCache
import Synchronization

/// Keeps an origin's body as it is read through the cache: in memory up to the large-body
/// threshold, then in a disk-level value written in pieces. When the body ends, it hands what
/// it kept to `complete`, which stores the record; a body that fails, outgrows the limit or is
/// not read to the end is not stored, and its value writer leaves nothing behind. It holds the
/// URL's miss lock, if any, until the body is stored or is not going to be.
final class BodyRecorder: Sendable {
    private let disk: DiskCache
    private let threshold: Int
    private let limit: Int
    private let complete: @Sendable (StoredBody) async -> Void
    private let lock: MissLock?
    private let state = Mutex(State())

    private struct State {
        var pending = Data()
        var writer: DiskCache.ValueWriter?
        var count = 0
        var failed = false
    }

    init(disk: DiskCache, threshold: Int, limit: Int, lock: MissLock?,
         complete: @escaping @Sendable (StoredBody) async -> Void) {
        self.disk = disk
        self.lock = lock
        self.threshold = threshold
        self.limit = limit
        self.complete = complete
    }

    /// Keeps `chunk`; a failure to keep it only means the body will not be stored.
    func append(_ chunk: Data) {
        state.withLock { state in
            guard !state.failed else { return }
            state.count += chunk.count
            do {
                guard state.count <= limit else { throw KVCacheError.invalidArgument("over maximumBodySize") }
                if let writer = state.writer {
                    try writer.write(chunk)
                    return
                }
                state.pending.append(chunk)
                if state.pending.count > threshold {
                    let writer = try disk.makeValueWriter(forKey: StoredBody.newFileKey())
                    try writer.write(state.pending)
                    state.writer = writer
                    state.pending = Data()
                }
            } catch {
                state.failed = true
                state.writer?.cancel()
                state.writer = nil
                state.pending = Data()
                lock?.release()  // waiters need not wait for a body that will not be stored
            }
        }
    }

    /// The body ended: store it.
    func finish() async {
        let body = state.withLock { state -> StoredBody? in
            guard !state.failed else { return nil }
            state.failed = true  // finished: nothing more is kept
            guard let writer = state.writer else { return .bytes(state.pending) }
            state.writer = nil
            do {
                try writer.commit()
                return .file(key: writer.key, count: Int64(state.count))
            } catch {
                return nil
            }
        }
        if let body { await complete(body) }
        lock?.release()
    }

    /// The body failed: keep nothing.
    func abandon() {
        state.withLock { state in
            state.failed = true
            state.writer?.cancel()
            state.writer = nil
            state.pending = Data()
        }
        lock?.release()
    }
}

extension HTTPCacheBody {
    /// `upstream`, passed on chunk by chunk and kept by `recorder` on the way.
    static func teeing(_ upstream: HTTPCacheBody, into recorder: BodyRecorder) -> HTTPCacheBody {
        HTTPCacheBody(source: .chunks(count: upstream.knownCount) {
            let iterator = TeeIterator(upstream.makeAsyncIterator(), recorder)
            return { try await iterator.next() }
        })
    }
}

/// One iteration of a teed body, called by one consumer at a time.
private final class TeeIterator: @unchecked Sendable {
    private var upstream: HTTPCacheBody.AsyncIterator
    private let recorder: BodyRecorder
    private var isDone = false

    init(_ upstream: HTTPCacheBody.AsyncIterator, _ recorder: BodyRecorder) {
        self.upstream = upstream
        self.recorder = recorder
    }

    func next() async throws -> Data? {
        guard !isDone else { return nil }
        let chunk: Data?
        do {
            chunk = try await upstream.next()
        } catch {
            isDone = true
            recorder.abandon()
            throw error
        }
        if let chunk {
            recorder.append(chunk)
            return chunk
        }
        isDone = true
        await recorder.finish()
        return nil
    }
}
#endif
