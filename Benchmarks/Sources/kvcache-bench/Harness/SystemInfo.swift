import BenchSQLite
import BenchSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where and on what the benchmark ran: figures mean little without it.
struct SystemInfo: Codable, Sendable {
    var date: String
    var cpuModel: String
    var cores: Int
    var kernel: String
    var sqliteVersion: String
    var directory: String
    var fileSystem: String
    /// "yes", "no" or "unknown" (ext4 only: whether a jbd2 journal is attached).
    var journal: String
    var mountDevice: String
    var mountOptions: String

    static func collect(directory: String) -> SystemInfo {
        let mount = MountInfo.find(for: directory)
        return SystemInfo(
            date: ISO8601DateFormatter().string(from: Date()),
            cpuModel: cpuModel(),
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            kernel: kernel(),
            sqliteVersion: String(cString: sqlite3_libversion()),
            directory: directory,
            fileSystem: fileSystemName(directory),
            journal: mount.map(journal(for:)) ?? "unknown",
            mountDevice: mount?.device ?? "unknown",
            mountOptions: mount?.options ?? "unknown")
    }

    /// "ext4, journaled", "tmpfs", ...
    var fileSystemLabel: String {
        guard fileSystem == "ext4" else { return fileSystem }
        return fileSystem + (journal == "yes" ? ", journaled" : journal == "no" ? ", NO journal" : "")
    }

    var description: String {
        var journalNote = ""
        if fileSystem == "ext4" { journalNote = journal == "yes" ? ", journaled" : journal == "no" ? ", NO journal" : "" }
        return """
            date:        \(date)
            machine:     \(cores) cores, \(cpuModel), \(kernel)
            SQLite:      \(sqliteVersion)
            directory:   \(directory)
            file system: \(fileSystem)\(journalNote) (\(mountDevice), \(mountOptions))
            """
    }

    private static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    private static func kernel() -> String {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return field(name.sysname) + " " + field(name.release)
    }

    /// statfs(2) f_type magic numbers (linux/magic.h).
    private static func fileSystemName(_ path: String) -> String {
        var info = statfs()
        guard statfs(path, &info) == 0 else { return "unknown (statfs errno \(errno))" }
        let names: [Int: String] = [
            0xEF53: "ext4", 0x0102_1994: "tmpfs", 0x5846_5342: "xfs", 0x9123_683E: "btrfs",
            0x794C_7630: "overlayfs", 0x6969: "nfs", 0x2FC1_2FC1: "zfs", 0xF2F5_2010: "f2fs",
            0x6573_5546: "fuse", 0x0102_1997: "9p/v9fs", 0x5346_544E: "ntfs", 0x4D44: "vfat",
        ]
        let type = Int(info.f_type)
        return names[type] ?? String(format: "unknown (f_type 0x%llx)", UInt64(truncatingIfNeeded: type))
    }

    /// ext4 mounts with a journal have a jbd2 entry named after the device ("vda-8").
    private static func journal(for mount: MountInfo) -> String {
        guard mount.type == "ext4" || mount.type == "ext3" else { return "unknown" }
        let device = (mount.device as NSString).lastPathComponent
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/fs/jbd2") else {
            return "unknown"
        }
        return entries.contains { $0.hasPrefix(device + "-") } ? "yes" : "no"
    }
}

/// The /proc/mounts line whose mount point is the longest prefix of a path.
struct MountInfo {
    var device: String
    var mountPoint: String
    var type: String
    var options: String

    static func find(for path: String) -> MountInfo? {
        guard let text = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return nil }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: MountInfo?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 4 else { continue }
            let point = fields[1]
            let matches = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if matches, point.count >= (best?.mountPoint.count ?? -1) {
                best = MountInfo(device: fields[0], mountPoint: point, type: fields[2], options: fields[3])
            }
        }
        return best
    }
}
