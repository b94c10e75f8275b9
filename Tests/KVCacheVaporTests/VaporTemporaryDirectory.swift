#if Vapor
import Foundation

/// A fresh directory under the system's temporary directory, for one test's cache.
struct VaporTemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init(_ name: String = #function) {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvcache-vapor-\(safe.prefix(40))-\(UUID().uuidString)", isDirectory: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
#endif
