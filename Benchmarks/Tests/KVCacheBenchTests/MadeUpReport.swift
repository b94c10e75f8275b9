@testable import kvcache_bench

extension SystemInfo {
    /// A made-up machine: 2 cores, ext4 without a journal.
    static let madeUp = SystemInfo(date: "2026-01-01T00:00:00Z", cpuModel: "CPU", cores: 2, kernel: "Linux",
                                   sqliteVersion: "3.40.1", directory: "/tmp/x", fileSystem: "ext4", journal: "no",
                                   mountDevice: "/dev/x", mountOptions: "rw")
}

extension Report {
    /// An empty report of the made-up machine, for a test to add comparisons to.
    static func madeUp(quick: Bool) -> Report { Report(system: .madeUp, quick: quick) }
}
