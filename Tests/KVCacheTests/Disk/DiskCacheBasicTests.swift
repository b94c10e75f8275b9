import Foundation
import Testing
@testable import KVCache

@Suite struct DiskCacheBasicTests {
    @Test func setThenGetReturnsTheSameBytes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for size in [0, 1, 1000, 20 * 1024 - 1, 20 * 1024, 200_000] {
            let data = bytes(size, seed: UInt8(size % 251))
            try cache.setValue(data, forKey: "k\(size)")
            #expect(try cache.value(forKey: "k\(size)") == data)
        }
        #expect(try cache.value(forKey: "absent") == nil)
        #expect(try cache.totalCount == 6)
    }

    @Test func removeValueMakesItAMiss() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(10), forKey: "a")
        try cache.setValue(bytes(30_000), forKey: "b")
        try cache.removeValue(forKey: "a")
        try cache.removeValue(forKey: "b")
        try cache.removeValue(forKey: "never-set")
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(try cache.contains("a") == false)
        try cache.flush()
        #expect(dir.dataFiles().isEmpty)
        #expect(try cache.totalCount == 0)
        #expect(try cache.totalSize == 0)
    }

    @Test func valuesSurviveCloseAndReopen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing())
            try cache.setValue(bytes(100), forKey: "small", extendedData: Data("meta".utf8))
            try cache.setValue(bytes(50_000), forKey: "large")
            try cache.close()
            #expect(throws: KVCacheError.closed) { try cache.value(forKey: "small") }
        }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try cache.value(forKey: "small") == bytes(100))
        #expect(try cache.value(forKey: "large") == bytes(50_000))
        #expect(try cache.extendedData(forKey: "small") == Data("meta".utf8))
        #expect(try cache.totalCount == 2)
        #expect(try cache.totalSize == 50_100)
    }
}
