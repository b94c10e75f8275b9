import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Progress lines on stderr, so stdout holds only the report.
enum Progress {
    private static let start = Clock.now()

    static func log(_ message: String) {
        let origin = start  // initialized on first use, before the clock is read below
        let elapsed = Double(Clock.now() - origin) / 1e9
        // Written with write(2): the C `stderr` global is not concurrency-safe in Swift 6.
        var line = "[" + String(format: "%6.1f s", elapsed) + "] " + message + "\n"
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }
}

/// Results go to stdout as soon as each comparison is complete.
enum Output {
    static func print(_ text: String) {
        Swift.print(text)
        fflush(nil)
    }
}
