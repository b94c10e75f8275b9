extension DiskCache {
    /// The keys that start with `prefix`, in byte-wise order, read `pageSize` at a time
    /// (each page as `keys(withPrefix:after:limit:)` reads it, on the bounded work pool).
    /// Keys set or removed while iterating may or may not appear; none appears twice.
    public func keys(withPrefix prefix: String = "", pageSize: Int = 1_000) -> KeySequence {
        KeySequence(cache: self, prefix: prefix, pageSize: max(1, pageSize))
    }

    /// The keys of a disk cache as an `AsyncSequence` (see `keys(withPrefix:pageSize:)`).
    public struct KeySequence: AsyncSequence, Sendable {
        /// A key.
        public typealias Element = String

        let cache: DiskCache
        let prefix: String
        let pageSize: Int

        /// An iterator that starts at the first key.
        public func makeAsyncIterator() -> Iterator {
            Iterator(sequence: self)
        }

        /// Reads the keys a page at a time.
        public struct Iterator: AsyncIteratorProtocol {
            let sequence: KeySequence
            var page: [String] = []
            var index = 0
            var isLastPage = false

            /// The next key, or nil after the last. Reads the next page when the current one is
            /// used up; throws `CancellationError` if the task is cancelled then, and the disk
            /// level's errors.
            public mutating func next() async throws -> String? {
                if index == page.count {
                    guard !isLastPage else { return nil }
                    try Task.checkCancellation()
                    let after = page.last
                    page = try await sequence.cache.keys(withPrefix: sequence.prefix, after: after,
                                                         limit: sequence.pageSize)
                    index = 0
                    isLastPage = page.count < sequence.pageSize
                    guard !page.isEmpty else { return nil }
                }
                defer { index += 1 }
                return page[index]
            }
        }
    }
}
