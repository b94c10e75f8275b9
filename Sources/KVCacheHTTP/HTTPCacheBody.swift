#if HTTP
import Foundation
import KVCache

/// A response body as a sequence of byte chunks: bytes in memory, a stored body read from its
/// file in pieces, or an origin's body as it arrives (stored on the way when the rules allow).
/// Iterate it once.
public struct HTTPCacheBody: AsyncSequence, Sendable {
    public typealias Element = Data

    enum Source: Sendable {
        case bytes(Data)
        /// `range` of a stored value, read `chunkSize` bytes at a time.
        case stored(DiskCache.ValueReader, range: Range<Int64>)
        /// Chunks as a function produces them, `count` bytes in all where that is declared.
        case chunks(count: Int64?, @Sendable () -> Chunks)
    }

    /// Produces the chunks of one iteration; nil at the end.
    typealias Chunks = () async throws -> Data?

    let source: Source
    /// How much a stored body's iteration reads at a time.
    static let chunkSize = 64 << 10

    /// A body of `bytes`, in one chunk.
    public init(_ bytes: Data) {
        source = .bytes(bytes)
    }

    /// A body whose chunks `chunks` produces, as it produces them; `count` is its size where
    /// it is declared beforehand (an origin's `Content-Length`); a negative one counts as
    /// not declared.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, count: Int64? = nil) where Chunks.Element == Data {
        source = .chunks(count: count.flatMap { $0 >= 0 ? $0 : nil }) {
            let iterator = IteratorBox(chunks.makeAsyncIterator())
            return { try await iterator.next() }
        }
    }

    init(source: Source) {
        self.source = source
    }

    /// An empty body.
    public static let empty = HTTPCacheBody(Data())

    /// Its size in bytes where it is known before it is read: for bytes in memory, stored
    /// bodies, and an origin's body that declared it; nil otherwise.
    public var knownCount: Int64? {
        switch source {
        case .bytes(let bytes): return Int64(bytes.count)
        case .stored(_, let range): return Int64(range.count)
        case .chunks(let count, _): return count
        }
    }

    /// The whole body in memory.
    ///
    /// - Throws: `KVCacheError.invalidArgument` when it is larger than `limit` bytes, and what
    ///   reading it throws.
    public func collect(upTo limit: Int = .max) async throws -> Data {
        if case .bytes(let bytes) = source, bytes.count <= limit { return bytes }
        var data = Data()
        for try await chunk in self {
            guard chunk.count <= limit - data.count else {
                throw KVCacheError.invalidArgument("the body is larger than \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    /// Reads it to the end, keeping nothing.
    func drain() async throws {
        for try await _ in self {}
    }

    public func makeAsyncIterator() -> AsyncIterator {
        switch source {
        case .bytes(let bytes):
            var bytes: Data? = bytes.isEmpty ? nil : bytes
            return AsyncIterator {
                defer { bytes = nil }
                return bytes
            }
        case .stored(let reader, let range):
            var offset = range.lowerBound
            return AsyncIterator {
                guard offset < range.upperBound else { return nil }
                let chunk = try reader.read(at: offset, count: Int(Swift.min(Int64(Self.chunkSize), range.upperBound - offset)))
                offset += Int64(chunk.count)
                return chunk.isEmpty ? nil : chunk
            }
        case .chunks(_, let make):
            return AsyncIterator(make())
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let produce: Chunks

        init(_ produce: @escaping Chunks) {
            self.produce = produce
        }

        public mutating func next() async throws -> Data? {
            try await produce()
        }
    }
}

/// One iteration's iterator, behind a reference: the closure that drives it is called by one
/// consumer at a time, as any iterator is.
private final class IteratorBox<Base: AsyncIteratorProtocol>: @unchecked Sendable where Base.Element == Data {
    var base: Base

    init(_ base: Base) {
        self.base = base
    }

    func next() async throws -> Data? {
        try await base.next()
    }
}
#endif
