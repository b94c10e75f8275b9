import Foundation
import Testing
@testable import KVCache

struct PressureFileLocatorTests {
    @Test func findsTheUnifiedCgroupPathAmongV1Lines() {
        let text = "4:memory:/process_api/abc\n1:cpu:/\n0::/system.slice/app.service\n"
        #expect(PressureFileLocator.unifiedCgroupPath(inProcCgroup: text) == "/system.slice/app.service")
    }

    @Test func aCgroupV1OnlyProcessHasNoUnifiedPath() {
        #expect(PressureFileLocator.unifiedCgroupPath(inProcCgroup: "4:memory:/a\n1:cpu:/\n") == nil)
    }

    @Test func prefersTheProcesssCgroupFileThenTheHybridMountThenTheSystemFile() throws {
        let root = try FakePressureFile()
        defer { root.remove() }
        let base = root.directory.path
        let cgroupFile = base + "/cgroup"
        try "0::/app.slice\n".write(toFile: cgroupFile, atomically: true, encoding: .utf8)
        let systemFile = base + "/system.pressure"
        let reading = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        func locate() -> String? {
            PressureFileLocator.memoryPressureFile(cgroupFile: cgroupFile, cgroupRoot: base + "/fs", systemFile: systemFile)
        }

        #expect(locate() == nil)

        try reading.write(toFile: systemFile, atomically: true, encoding: .utf8)
        #expect(locate() == systemFile)

        let hybrid = base + "/fs/unified/app.slice"
        try FileManager.default.createDirectory(atPath: hybrid, withIntermediateDirectories: true)
        try reading.write(toFile: hybrid + "/memory.pressure", atomically: true, encoding: .utf8)
        #expect(locate() == hybrid + "/memory.pressure")

        let unified = base + "/fs/app.slice"
        try FileManager.default.createDirectory(atPath: unified, withIntermediateDirectories: true)
        try reading.write(toFile: unified + "/memory.pressure", atomically: true, encoding: .utf8)
        #expect(locate() == unified + "/memory.pressure")
    }

    @Test func aProcessInTheRootCgroupLooksAtTheRootFiles() throws {
        let root = try FakePressureFile()
        defer { root.remove() }
        let cgroupFile = root.directory.path + "/cgroup"
        try "0::/\n".write(toFile: cgroupFile, atomically: true, encoding: .utf8)

        let candidates = PressureFileLocator.candidates(cgroupFile: cgroupFile, cgroupRoot: "/cg", systemFile: "/system")

        #expect(candidates == ["/cg/memory.pressure", "/cg/unified/memory.pressure", "/system"])
    }
}
