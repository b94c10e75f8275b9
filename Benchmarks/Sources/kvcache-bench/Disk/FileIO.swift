import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call in a baseline strategy.
struct FileError: Error, CustomStringConvertible {
    var operation: String
    var path: String
    var code: Int32
    var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}

/// Whole-file reads and writes with plain syscalls (open/write/close,
/// open/fstat/read/close), no fsync: the cheapest way to keep a value in a file.
enum FileIO {
    static func write(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(operation: "open", path: path, code: errno) }
        defer { close(fd) }
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw FileError(operation: "write", path: path, code: errno)
                }
                offset += written
            }
        }
    }

    /// The file's bytes, or nil if it does not exist.
    static func read(_ path: String) throws -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileError(operation: "open", path: path, code: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(operation: "fstat", path: path, code: errno) }
        let size = Int(info.st_size)
        var data = Data(count: size)
        var offset = 0
        try data.withUnsafeMutableBytes { bytes in
            while offset < size {
                let got = Glibc.read(fd, bytes.baseAddress! + offset, size - offset)
                if got < 0 {
                    if errno == EINTR { continue }
                    throw FileError(operation: "read", path: path, code: errno)
                }
                if got == 0 { break }
                offset += got
            }
        }
        if offset < size { data.count = offset }
        return data
    }

    static func remove(_ path: String) {
        unlink(path)
    }
}
