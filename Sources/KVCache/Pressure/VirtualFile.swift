import Foundation

/// Reads a small procfs or cgroupfs file as text.
///
/// Such files report a size of 0 and are generated on each read, so this reads
/// until end of file instead of trusting `stat`.
func readVirtualFile(atPath path: String, limit: Int = 64 * 1024) throws -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw KVCacheError.io(operation: "open", path: path, errno: errno) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 512)
    while bytes.count < limit {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count == 0 { break }
        if count < 0 {
            if errno == EINTR { continue }
            throw KVCacheError.io(operation: "read", path: path, errno: errno)
        }
        bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
