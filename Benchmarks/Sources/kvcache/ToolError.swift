import Foundation
import KVCache

/// Failures of the tool itself (the library throws `KVCacheError`).
enum ToolError: Error, CustomStringConvertible {
    /// The directory does not exist or holds no cache.
    case noCache(path: String)
    /// A file given on the command line could not be read or written.
    case file(path: String, message: String)

    var description: String {
        switch self {
        case .noCache(let path): return "no cache at \(path) (no manifest.sqlite there)"
        case .file(let path, let message): return "\(path): \(message)"
        }
    }

    /// A file given on the command line failed with `error`.
    static func file(_ path: String, _ error: Error) -> ToolError {
        .file(path: path, message: (error as? CocoaError).map { describeCocoa($0) } ?? describe(error))
    }

    /// The system's reason for a Foundation file error, without its path.
    static func describeCocoa(_ error: CocoaError) -> String {
        (error.underlying as? POSIXError).map { String(cString: strerror($0.code.rawValue)) } ?? error.localizedDescription
    }

    /// A one-line message for any error.
    static func describe(_ error: Error) -> String {
        switch error {
        case let error as KVCacheError: return error.description
        case let error as ToolError: return error.description
        case let error as CocoaError:
            let path = error.filePath ?? error.url?.path
            // corelibs Foundation's own text is "The operation could not be completed";
            // the system's reason is in the underlying POSIX error.
            return (path.map { $0 + ": " } ?? "") + describeCocoa(error)
        default: return String(describing: error)
        }
    }
}
