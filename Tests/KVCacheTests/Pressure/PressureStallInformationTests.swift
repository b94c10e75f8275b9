import Foundation
import Testing
@testable import KVCache

struct PressureStallInformationTests {
    @Test func parsesBothLinesOfAMemoryPressureFile() throws {
        let text = """
            some avg10=12.34 avg60=5.67 avg300=0.89 total=1234567890
            full avg10=3.21 avg60=0.54 avg300=0.06 total=98765

            """
        let reading = try #require(PressureStallInformation(parsing: text))
        #expect(reading.some == .init(avg10: 12.34, avg60: 5.67, avg300: 0.89, total: 1_234_567_890))
        #expect(reading.full == .init(avg10: 3.21, avg60: 0.54, avg300: 0.06, total: 98765))
    }

    @Test func aFileWithOnlyASomeLineHasNoFullStall() throws {
        let reading = try #require(PressureStallInformation(parsing: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
        #expect(reading.some.avg10 == 0)
        #expect(reading.full == nil)
    }

    @Test func unknownFieldsAndLinesAreIgnored() throws {
        let text = """
            some avg10=1.50 avg60=1.00 avg300=0.50 total=10 avg1=9.99
            partial avg10=50.00 avg60=0.00 avg300=0.00 total=0
            """
        let reading = try #require(PressureStallInformation(parsing: text))
        #expect(reading.some.avg10 == 1.5)
        #expect(reading.full == nil)
    }

    @Test(arguments: [
        "",
        "not a pressure file",
        "full avg10=1.00 avg60=1.00 avg300=1.00 total=1",
        "some avg10=abc avg60=1.00 avg300=1.00 total=1",
        "some avg10=1.00 avg60=1.00 total=1",
    ])
    func textWithoutAValidSomeLineIsRejected(text: String) {
        #expect(PressureStallInformation(parsing: text) == nil)
    }

    @Test(.enabled(if: FileManager.default.isReadableFile(atPath: "/proc/pressure/memory")))
    func readsThisMachinesMemoryPressureFile() throws {
        let reading = try PressureStallInformation(contentsOf: "/proc/pressure/memory")
        #expect((0...100).contains(reading.some.avg10))
        #expect(reading.full != nil)
    }

    @Test func readingAMissingFileThrowsAnIOError() {
        #expect(throws: KVCacheError.io(operation: "open", path: "/nonexistent/memory.pressure", errno: ENOENT)) {
            try PressureStallInformation(contentsOf: "/nonexistent/memory.pressure")
        }
    }
}
