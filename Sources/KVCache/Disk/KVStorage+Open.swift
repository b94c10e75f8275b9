import CSQLite
import Foundation

/// Opening the manifest, migrating it, and rebuilding it when it is corrupt.
///
/// Only SQLITE_CORRUPT and SQLITE_NOTADB rebuild: the damaged files are moved to
/// `corrupt/` and a new manifest is created (the data files it referenced become
/// orphans for the sweep). Busy, full, permission and I/O errors are thrown as
/// typed errors and never wipe the cache (YYCache wiped it on any open failure).
extension KVStorage {
    func openManifest() throws -> Database {
        do {
            return try openManifestOnce()
        } catch let error as SQLiteError where error.isCorruption {
            // Read-only: report the damage, never move or rebuild anything.
            if options.readOnly { throw KVCacheError.corrupt(path: manifestPath, message: error.message) }
            moveManifestAside()
            return try openManifestOnce()
        }
    }

    /// Opens and configures the connection. Cheap whatever the store's size: no
    /// scan, no integrity check; reading the schema and the stats row is what
    /// detects a file that is not a database.
    private func openManifestOnce() throws -> Database {
        if !options.readOnly { FileStore.makeOwnerOnly(manifestPath) }
        let database = try Database(path: manifestPath, busyTimeout: options.busyTimeout, readOnly: options.readOnly)
        self.database = database
        do {
            // Before any pragma that writes: another application's database stays as it is.
            let mark = try StoreOwnership.check(database)
            if options.readOnly {
                return try openReadOnly(database, mark: mark)
            }
            // page_size only takes effect while the file is still empty.
            try database.execute("PRAGMA page_size = \(options.pageSize)")
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute(Manifest.connectionPragmas(journalSizeLimit: options.journalSizeLimit))
            try migrate(database)
            if mark == .unmarked {
                try database.execute("PRAGMA application_id = \(Manifest.applicationID)")
                markedManifest = true
            }
            // Replaces SQLite's auto-checkpoint (see WALCheckpointer); after the
            // migration, since its connection reads the stats table. An existing store
            // keeps the page size it was created with.
            let pageSize = try database.integer("PRAGMA page_size") ?? 4096
            let checkpointer = WALCheckpointer(path: manifestPath, limitBytes: options.walAutocheckpointBytes,
                                               pageSize: Int(pageSize), reservePath: reservePath) { [readers] in
                readers.endUnusedSnapshots()
            }
            checkpointer.install(on: database)
            self.checkpointer = checkpointer
            // Prepared now, once per connection: this also reads the schema pages.
            statements = try ManifestStatements(database)
            try refreshCommittedTotals()
            // Start the time line at the newest recorded access (an indexed lookup).
            let newest = try database.statement(Manifest.selectNewestAccess).run { statement in
                try statement.step() ? statement.optionalDouble(at: 0) : nil
            }
            if let newest { buffer.withLock { $0.latestStamp = max($0.latestStamp, newest) } }
            // Opened now, like the checkpointer's, so that it holds the same WAL file
            // as this connection from the start (see WALCheckpointer.init). Without
            // it, commits run on this connection.
            groupCommitter.open(path: manifestPath, options: options, checkpointer: checkpointer)
            return database
        } catch {
            statements = nil
            checkpointer?.close()
            checkpointer = nil
            database.close()
            self.database = nil
            throw error
        }
    }

    /// The read-only open: no pragma that writes, no migration, no checkpointer and
    /// no commit connection (there is nothing to commit).
    private func openReadOnly(_ database: Database, mark: StoreOwnership.Mark) throws -> Database {
        let version = try database.integer("PRAGMA user_version") ?? 0
        guard mark != .empty, version == Manifest.version else {
            throw KVCacheError.notACache(path: manifestPath, reason: mark == .empty
                ? "the manifest is empty" : "schema version \(version), this library reads \(Manifest.version)")
        }
        try database.execute(Manifest.connectionPragmas(journalSizeLimit: options.journalSizeLimit))
        statements = try ManifestStatements(database)
        try refreshCommittedTotals()
        return database
    }

    private func migrate(_ database: Database) throws {
        let version = try database.integer("PRAGMA user_version") ?? 0
        if version == Manifest.version { return }
        if version > Manifest.version { throw newerSchemaError(version) }
        try database.execute("BEGIN IMMEDIATE")
        do {
            // Another process may have migrated while we waited for the lock: then it
            // marked the manifest too, and there is nothing to write.
            let current = try database.integer("PRAGMA user_version") ?? 0
            if current > Manifest.version { throw newerSchemaError(current) }
            if current == Manifest.version {
                try database.execute("COMMIT")
                return
            }
            for step in Int(current)..<Int(Manifest.version) {
                try database.execute(Manifest.migrations[step])
            }
            try database.execute("PRAGMA user_version = \(Manifest.version)")
            try database.execute("PRAGMA application_id = \(Manifest.applicationID)")
            try database.execute("COMMIT")
            markedManifest = true
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    private func newerSchemaError(_ version: Int64) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_ERROR,
                    message: "the manifest has schema version \(version); this library supports up to \(Manifest.version)",
                    sql: nil)
    }

    /// Moves the manifest and its WAL to `corrupt/`, keeping only the latest
    /// damaged copy (for post-mortems) so repeated corruption cannot fill the disk.
    func moveManifestAside() {
        try? FileStore.createSubfolder(corruptPath)
        for entry in (try? FileStore.entries(of: corruptPath)) ?? [] {
            FileStore.removeTree(corruptPath + "/" + entry.name)
        }
        let stamp = String(Int64(KVStorage.wallClock() * 1000))
        for suffix in ["", "-wal", "-shm"] {
            let source = manifestPath + suffix
            if suffix == "-shm" {
                unlink(source)  // shared-memory index: rebuilt from the WAL, nothing to keep
            } else {
                rename(source, corruptPath + "/manifest-\(stamp).sqlite" + suffix)
            }
        }
        buffer.withLock { $0.counters.rebuilds += 1 }
        needsOrphanSweep = true
        options.diagnostics.notice("the manifest was damaged: moved to corrupt/manifest-\(stamp).sqlite, a new one started",
                                   path: manifestPath)
    }

    /// Rebuilds after SQLite reported corruption during an operation.
    func rebuildAfterCorruption() throws {
        // Pending writes stay: their files exist and the new manifest takes their rows.
        closeCommitter()
        buffer.withLock { $0.accessTimes.removeAll() }
        statements = nil
        checkpointer?.close()
        database?.close()
        database = nil
        // Once the new manifest is open (or the open failed): read connections then reopen.
        defer { readers.invalidate() }
        moveManifestAside()
        database = try openManifest()
    }
}
