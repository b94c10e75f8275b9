/// Finds the memory PSI file that best describes this process: its own
/// cgroup's `memory.pressure` (what a container's memory limit stalls on),
/// else the system-wide `/proc/pressure/memory`.
enum PressureFileLocator {
    static let systemFile = "/proc/pressure/memory"

    /// The first candidate that reads as a PSI file, or `nil` when none does
    /// (a kernel without PSI, or one booted with `psi=0`).
    static func memoryPressureFile(
        cgroupFile: String = "/proc/self/cgroup",
        cgroupRoot: String = "/sys/fs/cgroup",
        systemFile: String = systemFile
    ) -> String? {
        candidates(cgroupFile: cgroupFile, cgroupRoot: cgroupRoot, systemFile: systemFile)
            .first { (try? PressureStallInformation(contentsOf: $0)) != nil }
    }

    static func candidates(cgroupFile: String, cgroupRoot: String, systemFile: String) -> [String] {
        var candidates: [String] = []
        if let cgroup = try? readVirtualFile(atPath: cgroupFile),
           let path = unifiedCgroupPath(inProcCgroup: cgroup) {
            let relative = path == "/" ? "" : path
            // cgroup v2 is mounted at the root; hybrid v1/v2 systems mount it at "unified".
            candidates.append(cgroupRoot + relative + "/memory.pressure")
            candidates.append(cgroupRoot + "/unified" + relative + "/memory.pressure")
        }
        candidates.append(systemFile)
        return candidates
    }

    /// The cgroup v2 path in the text of `/proc/<pid>/cgroup`: the line `0::/path`.
    static func unifiedCgroupPath(inProcCgroup text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("0::") {
            let path = line.dropFirst(3)
            if path.hasPrefix("/") { return String(path) }
        }
        return nil
    }
}
