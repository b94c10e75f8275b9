import Foundation

/// The file-per-key store trimmed the way SDWebImage and Kingfisher trim it, with
/// Foundation's `FileManager`: an enumerator asking for the modification date and
/// allocated size, `resourceValues` per URL, a sort by date, and `removeItem(at:)`
/// for each of the oldest. The files are the same as `FilePerKeyStrategy`'s (MD5
/// names, plain syscalls), so only the trim is timed differently; that strategy's
/// trim is the same sweep in bare syscalls, the cheapest a file-per-key cache can do.
final class FileManagerSweepStrategy: TrimmableDiskStrategy {
    static let kind = DiskStrategyKind(
        name: "file-per-key, FileManager sweep",
        open: { try FileManagerSweepStrategy(directory: $0) },
        inOpenTime: false,
        inOperations: false)

    private let files: FilePerKeyStrategy
    private let directory: URL

    init(directory: URL) throws {
        files = try FilePerKeyStrategy(directory: directory)
        self.directory = directory
    }

    func setValue(_ data: Data, forKey key: String) throws {
        try files.setValue(data, forKey: key)
    }

    func value(forKey key: String) throws -> Data? {
        try files.value(forKey: key)
    }

    func flush() throws {}

    func trim(toCount limit: Int) throws {
        // SDWebImage asks for the allocated size too (for its size limit): fetched, as there.
        let keys: [URLResourceKey] = [.isDirectoryKey, .contentModificationDateKey, .totalFileAllocatedSizeKey]
        guard let enumerator = FileManager.default.enumerator(
            at: directory, includingPropertiesForKeys: keys, options: .skipsHiddenFiles) else {
            throw FileError(operation: "enumerate", path: directory.path, code: 0)
        }
        var entries: [(url: URL, modified: Date)] = []
        let keySet = Set(keys)
        for case let url as URL in enumerator {
            guard let values = try? url.resourceValues(forKeys: keySet), values.isDirectory != true else { continue }
            entries.append((url, values.contentModificationDate ?? .distantPast))
        }
        guard entries.count > limit else { return }
        entries.sort { $0.modified < $1.modified }
        for entry in entries.prefix(entries.count - limit) {
            try FileManager.default.removeItem(at: entry.url)
        }
    }

    func close() {}
}
