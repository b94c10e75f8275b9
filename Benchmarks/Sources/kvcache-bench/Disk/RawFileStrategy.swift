import Foundation

/// The file floor: one file per key, named by the key itself (the benchmark's
/// keys are safe names), written with open/write/close and read with
/// open/fstat/read/close. Trimming unlinks the oldest by an in-memory
/// insertion order, so no directory enumeration is timed.
final class RawFileStrategy: TrimmableDiskStrategy {
    static let kind = DiskStrategyKind(
        name: "raw files", isFloor: true,
        open: { try RawFileStrategy(directory: $0) },
        inOpenTime: false)

    private let directory: String
    private var insertionOrder: [String] = []
    private var trimmed = 0

    init(directory: URL) throws {
        self.directory = directory.path + "/"
    }

    func setValue(_ data: Data, forKey key: String) throws {
        try FileIO.write(data, to: directory + key)
        insertionOrder.append(key)
    }

    func value(forKey key: String) throws -> Data? {
        try FileIO.read(directory + key)
    }

    func flush() throws {}

    func trim(toCount count: Int) throws {
        let live = insertionOrder.count - trimmed
        guard live > count else { return }
        for key in insertionOrder[trimmed..<(trimmed + live - count)] {
            FileIO.remove(directory + key)
        }
        trimmed += live - count
    }

    func close() {}
}
