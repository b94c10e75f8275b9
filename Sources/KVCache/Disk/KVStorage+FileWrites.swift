import Foundation

/// File values written without the owner's lock: `DiskCache.setValue` reserves a
/// fresh name under the lock, writes the file outside it, and records the write
/// under the lock again. A reserved name counts as uncommitted (the orphan sweep
/// keeps it) until it is recorded or released.
extension KVStorage {
    /// A name to write `key`'s value to, or nil if a value of `size` bytes is inline.
    func reserveFileName(forKey key: String, size: Int) throws -> String? {
        try validate(key)
        _ = try requireDatabase()
        try requireWritable()
        guard storesInFile(size: size) else { return nil }
        let name = FileNameHash.fileName(forKey: key, suffix: fileNameSuffixes.next())
        reservedFiles.insert(name)
        return name
    }

    /// A name for a value streamed in pieces (`DiskCache.ValueWriter`), once it has outgrown
    /// the inline threshold: nil in the inline storage mode, which keeps every value in the
    /// manifest.
    func reserveStreamedFileName(forKey key: String) throws -> String? {
        try validate(key)
        _ = try requireDatabase()
        try requireWritable()
        guard options.mode != .inline else { return nil }
        let name = FileNameHash.fileName(forKey: key, suffix: fileNameSuffixes.next())
        reservedFiles.insert(name)
        return name
    }

    /// Forgets a reservation whose file was not written.
    func releaseFileName(_ name: String) {
        reservedFiles.remove(name)
    }

    /// Records the value whose file `name` was written outside the lock, as
    /// `setValue` does; the file is deleted if the write cannot be recorded. (A
    /// `removeAll` that swaps the data folder meanwhile brings it back: `swapDataFolder`.)
    func setValue(_ data: Data, writtenTo name: String, forKey key: String,
                  expiration: Expiration, extendedData: Data?) throws {
        try setValue(size: data.count, writtenTo: name, forKey: key, expiration: expiration, extendedData: extendedData)
    }

    /// The same for a file of `size` bytes.
    func setValue(size: Int, writtenTo name: String, forKey key: String,
                  expiration: Expiration, extendedData: Data?) throws {
        // The name stays reserved until the write is recorded: `commitIfFull` may settle
        // a removeAll, whose folder swap brings back only the files of uncommitted writes.
        do {
            _ = try requireDatabase()
            try throwDroppedWritesError()
            try commitIfFull()
        } catch let error as SQLiteError where error.isCorruption {
            // The owner rebuilds the manifest and calls again: keep the file for that.
            throw error
        } catch {
            reservedFiles.remove(name)
            files.remove(name)
            throw error
        }
        reservedFiles.remove(name)
        record(size: size, filename: name, inline: nil, forKey: key, expiration: expiration,
               extendedData: extendedData)
    }
}
