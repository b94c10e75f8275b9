import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The SDWebImage / Kingfisher disk cache: one file per key named by MD5(key),
/// no index. Reads and writes are single files; trimming must enumerate the
/// directory, stat every file, sort by modification date and delete the oldest
/// (SDImageCache's `deleteOldFiles`, Kingfisher's size sweep).
final class FilePerKeyStrategy: TrimmableDiskStrategy {
    static let kind = DiskStrategyKind(
        name: "file-per-key (MD5)",
        open: { try FilePerKeyStrategy(directory: $0) },
        inOpenTime: false)

    private let directory: String

    init(directory: URL) throws {
        self.directory = directory.path + "/"
    }

    func setValue(_ data: Data, forKey key: String) throws {
        try FileIO.write(data, to: directory + FileName.md5(key))
    }

    func value(forKey key: String) throws -> Data? {
        try FileIO.read(directory + FileName.md5(key))
    }

    func flush() throws {}

    func trim(toCount limit: Int) throws {
        guard let stream = opendir(directory) else {
            throw FileError(operation: "opendir", path: directory, code: errno)
        }
        defer { closedir(stream) }
        let directoryFD = dirfd(stream)
        var files: [(name: String, modified: timespec)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var info = stat()
            guard fstatat(directoryFD, name, &info, 0) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append((name, info.st_mtim))
        }
        guard files.count > limit else { return }
        files.sort { lhs, rhs in
            (lhs.modified.tv_sec, lhs.modified.tv_nsec) < (rhs.modified.tv_sec, rhs.modified.tv_nsec)
        }
        for file in files.prefix(files.count - limit) {
            unlinkat(directoryFD, file.name, 0)
        }
    }

    func close() {}
}
