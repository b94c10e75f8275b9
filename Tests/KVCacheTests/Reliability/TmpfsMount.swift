import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for one test (needs root, as in CI), unmounted by
/// `unmount()` — call it in a `defer` so it runs even when the test fails.
struct TmpfsMount {
    let path: String

    /// Mounts a tmpfs of `size` (mount(8) syntax, e.g. "1m") on a fresh folder.
    init(size: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let status = TmpfsMount.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", path])
        guard status == 0 else {
            rmdir(path)
            throw MountError(message: "mount -t tmpfs exited with \(status)")
        }
    }

    /// Remounts read-only (or back to read-write).
    func remount(readOnly: Bool) -> Bool {
        TmpfsMount.run("/bin/mount", ["-o", "remount," + (readOnly ? "ro" : "rw"), path]) == 0
    }

    func unmount() {
        // Lazy: a file a failing test left open must not keep the mount (and the folder) around.
        _ = TmpfsMount.run("/bin/umount", ["-l", path])
        rmdir(path)
    }

    struct MountError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Writes a file at `path` until the disk has not a byte left.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 1, count: 4096)
        while write(fd, block, block.count) > 0 {}
        while write(fd, block, 1) > 0 {}
        close(fd)
    }

    /// Whether tmpfs can be mounted here; when not, prints why (once) so the skip is visible.
    static let isAvailable: Bool = {
        do {
            let probe = try TmpfsMount(size: "64k")
            probe.unmount()
            return true
        } catch {
            print("[reliability] skipping tmpfs tests (disk full, read-only): \(error) — they need root and mount(8)")
            return false
        }
    }()

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
