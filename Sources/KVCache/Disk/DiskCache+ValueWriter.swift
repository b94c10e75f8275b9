import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskCache {
    /// Starts writing a value for `key` in pieces: what is written goes to a file of its own
    /// once it outgrows the inline threshold, so a value of any size is never held whole in
    /// memory. Nothing is stored until ``ValueWriter/commit()``; readers see the old value
    /// until then.
    ///
    /// - Throws: `KVCacheError.invalidKey` for a key the cache cannot store,
    ///   `KVCacheError.readOnly` for a cache opened read-only.
    public func makeValueWriter(forKey key: String, expiration: Expiration = .never) throws -> ValueWriter {
        try KVStorage.validate(key, options: reader.options)
        if configuration.isReadOnly { throw KVCacheError.readOnly(path: path) }
        return ValueWriter(disk: self, key: key, expiration: expiration)
    }

    /// A value written in pieces (``DiskCache/makeValueWriter(forKey:expiration:)``), stored by
    /// ``commit()``. One that is dropped, cancelled or fails leaves nothing behind: its file
    /// is deleted, and the file of one a crash interrupts is removed by the next open's sweep.
    ///
    /// The inline storage mode keeps every value in the manifest, so there the pieces are
    /// gathered in memory. In a directory that several processes share, a writer left without
    /// a write for longer than `orphanGracePeriod` may lose its file to another process's
    /// sweep of files no entry names: its commit then throws.
    public final class ValueWriter: Sendable {
        /// The key the value is stored under.
        public let key: String
        private let disk: DiskCache
        private let expiration: Expiration
        private let state = Mutex(State())

        private struct State {
            /// Bytes not yet in a file: all of them until the value outgrows the inline threshold.
            var pending = Data()
            /// The file written to, once there is one (its name stays reserved until recorded).
            var file: (name: String, fd: Int32)?
            var fileSize: Int64 = 0
            var isFinished = false
        }

        init(disk: DiskCache, key: String, expiration: Expiration) {
            self.disk = disk
            self.key = key
            self.expiration = expiration
        }

        deinit {
            cancel()
        }

        /// The bytes written so far.
        public var count: Int64 {
            state.withLock { Int64($0.pending.count) + $0.fileSize }
        }

        /// Appends `bytes` to the value.
        ///
        /// - Throws: `KVCacheError.diskFull` or `.io` when the file cannot be written (the
        ///   writer is then cancelled), `.invalidArgument` after ``commit()`` or ``cancel()``.
        public func write(_ bytes: Data) throws {
            try state.withLock { state in
                guard !state.isFinished else {
                    throw KVCacheError.invalidArgument("the value writer for \(key) was committed or cancelled")
                }
                do {
                    if let file = state.file {
                        try disk.files.append(bytes, to: file.fd, named: file.name)
                        state.fileSize += Int64(bytes.count)
                        return
                    }
                    state.pending.append(bytes)
                    let configuration = disk.configuration
                    if configuration.storageMode.storesInFile(size: state.pending.count,
                                                              inlineThreshold: configuration.inlineThreshold) {
                        try spill(&state)
                    }
                } catch {
                    discard(&state)
                    throw error
                }
            }
        }

        /// Stores the value written, replacing any value of the key.
        ///
        /// - Throws: what a `setValue` throws (a full disk, a closed cache); the writer is
        ///   finished either way.
        public func commit() throws {
            try state.withLock { state in
                guard !state.isFinished else {
                    throw KVCacheError.invalidArgument("the value writer for \(key) was committed or cancelled")
                }
                guard let file = state.file else {
                    state.isFinished = true
                    try disk.setValue(state.pending, forKey: key, expiration: expiration)
                    state.pending = Data()
                    return
                }
                do {
                    let path = disk.files.path(file.name)
                    // Another process's orphan sweep deletes a file left alone for longer than
                    // `orphanGracePeriod`: a writer that stalled that long has lost its file.
                    var info = stat()
                    if fstat(file.fd, &info) == 0, info.st_nlink == 0 {
                        throw KVCacheError.io(operation: "commit", path: path, errno: ENOENT)
                    }
                    if disk.configuration.syncsFiles, fsync(file.fd) != 0 {
                        throw FileStore.error("fsync", path: path, errno: errno)
                    }
                    let closed = Glibc.close(file.fd)
                    state.file = (file.name, -1)
                    if closed != 0 { throw FileStore.error("close", path: path, errno: errno) }
                } catch {
                    discard(&state)
                    throw error
                }
                state.isFinished = true
                state.file = nil
                let (size, key, expiration) = (state.fileSize, key, expiration)
                // On failure the store forgets the reservation and deletes the file.
                try disk.perform(needs: .roomToStage) {
                    try $0.setValue(size: Int(size), writtenTo: file.name, forKey: key, expiration: expiration,
                                    extendedData: nil)
                }
                disk.reportDirectChange(.key(key))
            }
        }

        /// Drops what was written; the stored value, if any, stays. Nothing after a commit.
        public func cancel() {
            state.withLock { discard(&$0) }
        }

        /// Moves the pending bytes into a new file under a freshly reserved name.
        private func spill(_ state: inout State) throws {
            while true {
                guard let name = try disk.store.withLock({ try $0.reserveStreamedFileName(forKey: key) }) else { return }
                let fd: Int32?
                do {
                    fd = try disk.files.create(named: name)
                } catch {
                    disk.store.withLock { $0.releaseFileName(name) }
                    throw error
                }
                guard let fd else {
                    // The name was taken (2^-64 odds): another one.
                    disk.store.withLock { $0.releaseFileName(name) }
                    continue
                }
                state.file = (name, fd)
                try disk.files.append(state.pending, to: fd, named: name)
                state.fileSize = Int64(state.pending.count)
                state.pending = Data()
                return
            }
        }

        private func discard(_ state: inout State) {
            guard !state.isFinished else { return }
            state.isFinished = true
            state.pending = Data()
            guard let file = state.file else { return }
            if file.fd >= 0 { Glibc.close(file.fd) }
            disk.files.remove(file.name)
            disk.store.withLock { $0.releaseFileName(file.name) }
            state.file = nil
        }
    }
}
