extension DiskCache {
    /// An entry whose value file (or inline data) is missing or not of the recorded size.
    public struct DamagedEntry: Sendable, Hashable {
        /// The entry's key.
        public var key: String
        /// The value file's name in the `data` folder; empty for an inline value.
        public var fileName: String
        /// The size recorded in the manifest.
        public var expectedSize: Int64
        /// The file's size on disk (the inline data's size), or nil when it is missing.
        public var actualSize: Int64?

        /// An entry with the given fields.
        public init(key: String, fileName: String, expectedSize: Int64, actualSize: Int64?) {
            self.key = key
            self.fileName = fileName
            self.expectedSize = expectedSize
            self.actualSize = actualSize
        }
    }

    /// What `verify(repair:)` changed.
    public struct Repairs: Sendable, Hashable {
        /// The indexes were rebuilt (`REINDEX`) because the integrity check failed.
        public var reindexed = false
        /// The manifest was still damaged after reindexing: it was moved to `corrupt/`
        /// and a new, empty one created (every entry is lost; their files become orphans).
        public var rebuiltManifest = false
        /// Entries removed because their file (or inline data) was missing or of the wrong size.
        public var removedEntries = 0
        /// Orphan files deleted.
        public var removedOrphanFiles = 0
        /// The summary of counts and sizes was recounted from the entries.
        public var recountedSummary = false

        /// No repairs.
        public init() {}
    }

    /// The result of `verify(repair:)`: what was found, and what was repaired.
    public struct VerificationReport: Sendable, Hashable {
        /// Problems reported by SQLite's `integrity_check`; empty when the database is sound.
        public var integrityErrors: [String] = []
        /// File values checked (each file's existence and size; contents are not read).
        public var checkedFiles = 0
        /// Entries whose file does not exist.
        public var missingFiles: [DamagedEntry] = []
        /// Entries whose file exists with another size than recorded.
        public var wrongSizeFiles: [DamagedEntry] = []
        /// Inline entries whose data is missing or not of the recorded size (reads miss them).
        public var damagedInlineEntries: [DamagedEntry] = []
        /// Files in the `data` folder that no entry references, older than the grace period.
        public var orphanFiles: [String] = []
        /// Unreferenced files younger than the grace period: another process may be about
        /// to commit their entries, so they are neither problems nor removed.
        public var recentUnreferencedFiles: [String] = []
        /// The maintained summary (count, sizes) agrees with the entries.
        public var summaryIsAccurate = true
        /// What was repaired; nil when `repair` was false.
        public var repairs: Repairs?

        /// An empty report: nothing checked, nothing found.
        public init() {}

        /// True when nothing was wrong (before any repair).
        public var isHealthy: Bool {
            integrityErrors.isEmpty && missingFiles.isEmpty && wrongSizeFiles.isEmpty
                && damagedInlineEntries.isEmpty && orphanFiles.isEmpty && summaryIsAccurate
        }

        /// Number of problems found (integrity errors, damaged entries, orphans, an inaccurate summary).
        public var problemCount: Int {
            integrityErrors.count + missingFiles.count + wrongSizeFiles.count + damagedInlineEntries.count
                + orphanFiles.count + (summaryIsAccurate ? 0 : 1)
        }
    }

    /// Where a running `verify` is, for progress output.
    public struct VerificationProgress: Sendable, Hashable {
        /// The steps of `verify`, in the order they run.
        public enum Phase: String, Sendable, Hashable, CaseIterable {
            /// SQLite's integrity check of the manifest.
            case integrity
            /// Each file value's file, and each inline value's data: present, of the recorded size.
            case files
            /// Each file in the `data` folder: referenced by an entry.
            case orphans
            /// The summary of counts and sizes against the entries.
            case summary
        }

        /// The step running.
        public var phase: Phase
        /// Items done in this phase.
        public var completed: Int
        /// Items in this phase, when known.
        public var total: Int?

        /// A progress report with the given fields.
        public init(phase: Phase, completed: Int, total: Int?) {
            self.phase = phase
            self.completed = completed
            self.total = total
        }
    }
}
