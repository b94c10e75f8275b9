/// What the store counts: entry totals, a write transaction's changes, operation counters.
extension KVStorage {
    /// Entry count and bytes, in total and for file values.
    struct Totals: Equatable, Sendable {
        var count = 0
        var size: Int64 = 0
        var fileCount = 0
        var fileSize: Int64 = 0

        static let zero = Totals()

        /// Runs `statement` (`Manifest.selectStats`, on any connection).
        static func select(with statement: Statement) throws -> Totals {
            try statement.run { statement in
                guard try statement.step() else { return .zero }
                return Totals(count: Int(statement.int64(at: 0)), size: statement.int64(at: 1),
                              fileCount: Int(statement.int64(at: 2)), fileSize: statement.int64(at: 3))
            }
        }

        // Sizes come from rows, which a damaged or tampered manifest can make absurd
        // (8 GB for a 30 KB file, Int64.max): the sums saturate instead of trapping,
        // and `verify(repair:)` recounts them.
        mutating func add(size: Int64, isFile: Bool, sign: Int = 1) {
            let delta = sign >= 0 ? size : (size == .min ? .max : -size)
            count += sign
            self.size = Self.sum(self.size, delta)
            if isFile {
                fileCount += sign
                fileSize = Self.sum(fileSize, delta)
            }
        }

        static func + (lhs: Totals, rhs: Totals) -> Totals {
            Totals(count: lhs.count + rhs.count, size: sum(lhs.size, rhs.size),
                   fileCount: lhs.fileCount + rhs.fileCount, fileSize: sum(lhs.fileSize, rhs.fileSize))
        }

        private static func sum(_ a: Int64, _ b: Int64) -> Int64 {
            let (result, overflow) = a.addingReportingOverflow(b)
            return overflow ? (b > 0 ? .max : .min) : result
        }
    }

    /// An open write transaction on either connection (`ManifestBatch.commit`): the
    /// connection its statements run on, and what it has changed so far. Bodies
    /// record here what they remove.
    struct Transaction {
        /// The connection the transaction is open on.
        let database: Database
        /// That connection's cached statements.
        let statements: ManifestStatements
        /// Whether `evictions` lists the keys removed (only with an `onEviction`).
        let recordsEvictions: Bool
        /// The stats row when the transaction began (other processes' commits included).
        var start = Totals()
        /// What the transaction has changed so far: its writes' and its body's.
        var changes = ManifestBatch.Changes()

        /// The totals as this transaction leaves them so far.
        var current: Totals { start + changes.delta }

        /// Records removed rows: their totals, their files (if any) and, if recorded, their keys.
        mutating func recordRemoved(size: Int64, file: String?, key: String? = nil, reason: EvictionReason? = nil) {
            changes.delta.add(size: size, isFile: file != nil, sign: -1)
            if let file { changes.obsoleteFiles.append(file) }
            if recordsEvictions, let key, let reason { changes.evictions.append(Eviction(key: key, reason: reason)) }
        }
    }

    /// Operation counters, read by `DiskCache.statistics`.
    struct Counters: Sendable {
        var hits = 0
        var misses = 0
        var sets = 0
        var evictions: [EvictionReason: Int] = [:]
        var commits = 0
        var failedCommits = 0
        var rebuilds = 0
        var brokenRows = 0
    }
}
