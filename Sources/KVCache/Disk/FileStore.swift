import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The data folder: one file per large value, named from a hash of the key plus
/// a random suffix. Every value gets a fresh name, so a file is complete before
/// any row refers to it (see KVStorage's durability notes) and no reader can see
/// a half-written value.
struct FileStore: Sendable {
    /// Absolute path of the data folder.
    let directory: String

    enum ReadResult {
        case value(Data)
        /// The file does not exist.
        case missing
        /// The file exists but its size is not the recorded size.
        case wrongSize(Int64)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Writes `data` to a new file `name` (mode 0600); false if that name is taken.
    /// On failure nothing is left behind.
    func write(_ data: Data, named name: String, sync: Bool) throws -> Bool {
        guard let fd = try create(named: name) else { return false }
        let path = path(name)
        do {
            try data.withUnsafeBytes { try FileStore.writeAll(fd, $0, path: path) }
            if sync, fsync(fd) != 0 { throw FileStore.error("fsync", path: path, errno: errno) }
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        if close(fd) != 0 {
            let code = errno
            unlink(path)
            throw FileStore.error("close", path: path, errno: code)
        }
        return true
    }

    /// Creates the new file `name` (mode 0600) for writing and returns its descriptor; nil if
    /// that name is taken.
    func create(named name: String) throws -> Int32? {
        var recreatedFolder = false
        while true {
            let path = path(name)
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return fd }
            let code = errno
            if code == EEXIST { return nil }
            // Another process's removeAll is between moving data/ to trash/ and creating a
            // new one: create it ourselves and try again (once).
            if code == ENOENT, !recreatedFolder {
                recreatedFolder = true
                try FileStore.createSubfolder(directory)
                continue
            }
            throw FileStore.error("open", path: path, errno: code)
        }
    }

    /// Appends `data` to the file `name` open as `fd`.
    func append(_ data: Data, to fd: Int32, named name: String) throws {
        try data.withUnsafeBytes { try FileStore.writeAll(fd, $0, path: path(name)) }
    }

    /// Opens the file `name` for reading: nil where `read` would say `.missing`; its
    /// descriptor and size otherwise (the caller checks the size and closes it).
    func openForReading(_ name: String) throws -> (fd: Int32, size: Int64)? {
        guard FileStore.isPlainName(name) else { return nil }
        let path = path(name)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT || errno == ELOOP || errno == ENXIO { return nil }
            throw FileStore.error("open", path: path, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw FileStore.error("fstat", path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        return (fd, Int64(info.st_size))
    }

    /// Reads the file `name`, checking that it holds exactly `expectedSize` bytes.
    /// A name that is not one of ours (a damaged or tampered row), a symlink, or
    /// anything but a regular file is `.missing`: never followed out of data/.
    func read(_ name: String, expectedSize: Int64) throws -> ReadResult {
        guard FileStore.isPlainName(name) else { return .missing }
        let path = path(name)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            // ELOOP: a symlink; ENXIO: a socket or FIFO without writer.
            if errno == ENOENT || errno == ELOOP || errno == ENXIO { return .missing }
            throw FileStore.error("open", path: path, errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileStore.error("fstat", path: path, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .missing }
        guard Int64(info.st_size) == expectedSize else { return .wrongSize(Int64(info.st_size)) }
        let count = Int(expectedSize)
        if count == 0 { return .value(Data()) }
        guard let buffer = malloc(count) else { throw KVCacheError.io(operation: "malloc", path: path, errno: ENOMEM) }
        var offset = 0
        while offset < count {
            let n = Glibc.read(fd, buffer + offset, count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                free(buffer)
                throw FileStore.error("read", path: path, errno: code)
            }
            if n == 0 { break }  // shrank since fstat: another process truncated it
            offset += n
        }
        guard offset == count else {
            free(buffer)
            return .wrongSize(Int64(offset))
        }
        return .value(Data(bytesNoCopy: buffer, count: count, deallocator: .free))
    }

    /// Deletes the file `name`; a file that is already gone is fine. A directory put
    /// in its place is deleted with its contents; a symlink itself, never its target.
    func remove(_ name: String) {
        guard FileStore.isPlainName(name) else { return }
        if unlink(path(name)) != 0, errno == EISDIR || errno == EPERM {
            FileStore.removeTree(path(name))
        }
    }

    /// True for a name that stays inside data/: not empty, no slash, not "." or "..".
    /// Names come from rows, and a damaged or tampered manifest must not reach outside.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
    }

    /// Names of the store's files in the data folder (names it could have made:
    /// anything else there is not ours to read, count or delete). None while another
    /// process's removeAll has moved the folder to trash/ and not yet made a new one:
    /// its files went with it.
    func names() throws -> [String] {
        let entries: [FileStore.Entry]
        do {
            entries = try FileStore.entries(of: directory)
        } catch let error as KVCacheError where error.operation == "open" && error.systemErrno == ENOENT {
            return []
        }
        return entries.filter { !$0.isDirectory && FileNameHash.isFileName($0.name) }.map(\.name)
    }

    /// Last modification time of `name` in seconds since 1970, or nil if it is gone.
    func modificationTime(_ name: String) -> Double? {
        guard FileStore.isPlainName(name) else { return nil }
        var info = stat()
        guard lstat(path(name), &info) == 0 else { return nil }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }
}

// MARK: - Directory helpers

extension FileStore {
    struct Entry {
        var name: String
        var isDirectory: Bool
    }

    /// Creates a folder of the store (data/, trash/, corrupt/) with mode 0700. It must be a
    /// real directory: a symlink there would send writes and deletions out of the cache
    /// directory, so it is refused (ELOOP) rather than followed.
    static func createSubfolder(_ path: String) throws {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        var info = stat()
        if code == EEXIST, lstat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFDIR: return
            case S_IFLNK: throw KVCacheError.directoryUnavailable(path: path, errno: ELOOP)
            default: throw KVCacheError.directoryUnavailable(path: path, errno: ENOTDIR)
            }
        }
        throw KVCacheError.directoryUnavailable(path: path, errno: code)
    }

    /// Creates `path` (and missing parents) with mode 0700; fine if it exists as a directory.
    static func createDirectory(_ path: String) throws {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        if code == EEXIST {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw KVCacheError.directoryUnavailable(path: path, errno: ENOTDIR)
        }
        if code == ENOENT {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path {
                try createDirectory(parent)
                if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
                throw KVCacheError.directoryUnavailable(path: path, errno: errno)
            }
        }
        throw KVCacheError.directoryUnavailable(path: path, errno: code)
    }

    /// The entries of a directory, without "." and "..".
    /// A symlink is not listed through (ELOOP).
    static func entries(of path: String) throws -> [Entry] {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path: path, errno: errno) }
        guard let dir = fdopendir(fd) else {
            let code = errno
            close(fd)
            throw error("fdopendir", path: path, errno: code)
        }
        defer { closedir(dir) }
        var result: [Entry] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name == "." || name == ".." { continue }
            var isDirectory = Int32(entry.pointee.d_type) == Int32(DT_DIR)
            if Int32(entry.pointee.d_type) == Int32(DT_UNKNOWN) {
                var info = stat()
                isDirectory = lstat(path + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            }
            result.append(Entry(name: name, isDirectory: isDirectory))
        }
        return result
    }

    /// Deletes `path` and everything below it; best effort, returns files removed.
    /// Symlinks are deleted, never followed (one in trash/ must not empty its target).
    @discardableResult
    static func removeTree(_ path: String) -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        if (info.st_mode & S_IFMT) != S_IFDIR { return unlink(path) == 0 ? 1 : 0 }
        var removed = 0
        if let entries = try? entries(of: path) {
            for entry in entries {
                let child = path + "/" + entry.name
                if entry.isDirectory {
                    removed += removeTree(child)
                } else if unlink(child) == 0 {
                    removed += 1
                }
            }
        }
        rmdir(path)
        return removed
    }

    /// Takes an exclusive `flock` on the folder at `path` (without following a symlink) and
    /// returns the descriptor holding it (close it to unlock), or nil if the folder cannot
    /// be opened or, unless `wait`, another holder has the lock.
    static func lockFolder(_ path: String, wait: Bool = true) -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        while flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            if errno == EINTR { continue }
            close(fd)
            return nil
        }
        return fd
    }

    /// Deletes a data folder that `removeAll` moved to the trash: the files in it
    /// whose names the store makes, then the folder if nothing else is left in it.
    @discardableResult
    static func removeDataFolder(_ path: String) -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        // Something else under a name the store makes (a symlink planted there): the
        // entry itself goes, never what it points to.
        if (info.st_mode & S_IFMT) != S_IFDIR { return unlink(path) == 0 ? 1 : 0 }
        var removed = 0
        for entry in (try? entries(of: path)) ?? [] where !entry.isDirectory && FileNameHash.isFileName(entry.name) {
            if unlink(path + "/" + entry.name) == 0 { removed += 1 }
        }
        rmdir(path)
        return removed
    }

    /// Bytes available to unprivileged users on the file system holding `path`.
    static func freeSpace(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    static func error(_ operation: String, path: String, errno code: Int32) -> KVCacheError {
        if code == ENOSPC || code == EDQUOT { return .diskFull(path: path) }
        return .io(operation: operation, path: path, errno: code)
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let n = Glibc.write(fd, base, remaining)
            if n < 0 {
                if errno == EINTR { continue }
                throw error("write", path: path, errno: errno)
            }
            base += n
            remaining -= n
        }
    }
}

extension FileStore {
    /// Creates `path` with mode 0600 if it does not exist, or sets that mode if it does
    /// (best effort). For the manifest: SQLite would create it 0644 (less the umask),
    /// and gives its -wal and -shm files the manifest's mode.
    static func makeOwnerOnly(_ path: String) {
        let fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        fchmod(fd, 0o600)
        close(fd)
    }

    /// Makes `path` a regular file (mode 0600) of at least `size` bytes, written, so that
    /// its blocks are allocated and deleting it gives them back; grows a shorter one.
    /// False if the disk has no room (no partial file is left) or `path` is not a regular file.
    static func createReserve(_ path: String, size: Int) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        if Int(info.st_size) >= size { return true }
        let zeros = [UInt8](repeating: 0, count: size - Int(info.st_size))
        let written = zeros.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = pwrite(fd, buffer.baseAddress! + offset, buffer.count - offset, off_t(Int(info.st_size) + offset))
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        if !written { unlink(path) }
        return written
    }

    /// Deletes the reserve at `path`; true if there was one (its space is free again).
    static func releaseReserve(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return unlink(path) == 0 && info.st_size > 0
    }

    /// fsyncs a file or directory if it exists (best effort).
    static func sync(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

/// FNV-1a, 64-bit: a small, fast, non-cryptographic hash of a key's UTF-8 bytes.
/// It only spreads file names; uniqueness comes from the random suffix.
enum FileNameHash {
    static func fnv1a64(_ string: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in string.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `<hash of key>-<suffix>`, both as 16 lowercase hex digits. Never derived
    /// from the raw key, so no key can name a path outside the data folder.
    static func fileName(forKey key: String, suffix: UInt64) -> String {
        // Encoded straight into the string's storage: every file set makes a name,
        // and `String(_:radix:)` plus padding cost about a microsecond.
        String(unsafeUninitializedCapacity: 33) { buffer in
            encode(fnv1a64(key), into: buffer, at: 0)
            buffer[16] = UInt8(ascii: "-")
            encode(suffix, into: buffer, at: 17)
            return 33
        }
    }

    /// True for a name that `fileName(forKey:suffix:)` could have made: the only
    /// files in the data folder the store reads as its own or deletes.
    static func isFileName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard bytes.count == 33 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 16 {
                if byte != UInt8(ascii: "-") { return false }
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        && !(UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) {
                return false
            }
        }
        return true
    }

    /// `value` as 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            encode(value, into: buffer, at: 0)
            return 16
        }
    }

    private static func encode(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        for index in 0..<16 {
            let nibble = UInt8(truncatingIfNeeded: value >> (60 - 4 * UInt64(index))) & 0xf
            buffer[start + index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }
}

/// Suffixes for new file names: SplitMix64 over a counter that starts at a random
/// seed. Distinct within a store (the mix is a bijection of the counter), random
/// across processes (their seeds), and one `getrandom` per store instead of one per
/// file written. Collisions with another process's names are as unlikely as with
/// fresh random numbers, and `O_EXCL` catches them anyway.
struct FileNameSuffixes {
    private var state = UInt64.random(in: .min ... .max)

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
