import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskCache {
    /// The value stored for `key`, opened to be read in pieces, or nil if there is none or it
    /// expired. A value kept in a file is not read into memory; the reader keeps seeing the
    /// value it opened even after the key is replaced or removed. Counts as a read
    /// (a hit or a miss, and an access).
    ///
    /// - Throws: `KVCacheError.invalidKey`, or `.io` when the file cannot be opened.
    public func valueReader(forKey key: String) throws -> ValueReader? {
        try KVStorage.validate(key, options: reader.options)
        return try readRetryingChangedFiles { try openEntry(key, $0, &$1) }
    }

    /// As `readEntry`, but it opens the file instead of reading it.
    private func openEntry(_ key: String, _ reader: DiskReader,
                           _ followUps: inout DiskReader.FollowUps) throws -> ReadOutcome<ValueReader> {
        switch try reader.lookUp(forKey: key, followUps: &followUps) {
        case .value(let data, _):
            return .found(ValueReader(bytes: data))
        case .miss:
            return .miss
        case .file(let name, let size, _):
            let swaps = reader.buffer.dataFolderSwaps
            let opened: (fd: Int32, size: Int64)?
            do {
                opened = try files.openForReading(name)
            } catch {
                _ = reader.fileReadFailed(forKey: key, filename: name, error: error, seenSwaps: swaps,
                                          followUps: &followUps)
                throw error
            }
            if let opened {
                if opened.size == size { return .found(ValueReader(fd: opened.fd, count: size, path: files.path(name))) }
                Glibc.close(opened.fd)
            }
            return reader.fileReadFailed(forKey: key, filename: name, seenSwaps: swaps, followUps: &followUps)
                ? .changed : .miss
        }
    }

    /// A stored value read in pieces (``DiskCache/valueReader(forKey:)``): in order with
    /// ``read(upTo:)``, or anywhere with ``read(at:count:)``. Its file stays open until the
    /// reader is released.
    public final class ValueReader: Sendable {
        /// The value's size in bytes.
        public let count: Int64
        private let source: Source
        private let position = Mutex<Int64>(0)

        private enum Source: Sendable {
            case bytes(Data)
            case file(fd: Int32, path: String)
        }

        init(bytes: Data) {
            count = Int64(bytes.count)
            source = .bytes(bytes)
        }

        init(fd: Int32, count: Int64, path: String) {
            self.count = count
            source = .file(fd: fd, path: path)
        }

        deinit {
            if case .file(let fd, _) = source { Glibc.close(fd) }
        }

        /// The next bytes, at most `maxCount` (at least 1) of them; empty at the end.
        ///
        /// - Throws: `KVCacheError.invalidArgument` for a count below 1, `.io` when the file
        ///   cannot be read, `.corrupt` when it ends early (it was changed by something else).
        public func read(upTo maxCount: Int) throws -> Data {
            try position.withLock { position in
                let bytes = try read(at: position, count: maxCount)
                position += Int64(bytes.count)
                return bytes
            }
        }

        /// Up to `count` bytes (at least 1) from `offset`: fewer only at the end of the value.
        ///
        /// - Throws: `KVCacheError.invalidArgument` for a count below 1 or a negative offset,
        ///   and as ``read(upTo:)``.
        public func read(at offset: Int64, count: Int) throws -> Data {
            guard count >= 1, offset >= 0 else {
                throw KVCacheError.invalidArgument("a read needs a count of at least 1 and an offset of at least 0")
            }
            let wanted = Int(min(Int64(count), max(0, self.count - offset)))
            guard wanted > 0 else { return Data() }
            switch source {
            case .bytes(let bytes):
                let start = bytes.startIndex + Int(offset)
                return bytes[start..<start + wanted]
            case .file(let fd, let path):
                var data = Data(count: wanted)
                var done = 0
                try data.withUnsafeMutableBytes { buffer in
                    while done < wanted {
                        let n = pread(fd, buffer.baseAddress! + done, wanted - done, off_t(offset) + off_t(done))
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw FileStore.error("read", path: path, errno: errno)
                        }
                        if n == 0 { break }
                        done += n
                    }
                }
                guard done == wanted else {
                    throw KVCacheError.corrupt(path: path, message: "the value's file ended after \(offset + Int64(done)) of \(self.count) bytes")
                }
                return data
            }
        }
    }
}
