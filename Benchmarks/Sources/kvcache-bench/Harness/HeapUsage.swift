#if canImport(BenchSystem) && os(Linux)
import BenchSystem
#endif

/// Bytes currently allocated by malloc, to measure what a cache keeps per entry.
///
/// glibc's mallinfo2 covers the main arena (plus mmapped chunks) only, so
/// measure allocations made on the main thread.
enum HeapUsage {
    static func allocatedBytes() -> Int? {
        #if canImport(BenchSystem) && os(Linux)
        let info = mallinfo2()
        return Int(info.uordblks + info.hblkhd)
        #else
        return nil
        #endif
    }
}
