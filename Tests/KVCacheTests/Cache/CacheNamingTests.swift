import Foundation
import Testing
@testable import KVCache

struct CacheNamingTests {
    @Test func namedCachesLiveInTheirOwnFolderUnderTheBase() throws {
        let base = TemporaryDirectory()
        defer { base.remove() }

        let images = try Cache<Data>(name: "images", baseDirectory: base.url)

        #expect(images.name == "images")
        #expect(images.directory.standardizedFileURL.path == base.url.appendingPathComponent("images").path)
        #expect(FileManager.default.fileExists(atPath: base.path + "/images/manifest.sqlite"))
    }

    @Test func namedCachesSharingABaseDirectoryAreIsolated() throws {
        let base = TemporaryDirectory()
        defer { base.remove() }
        let images = try Cache<Data>(name: "images", baseDirectory: base.url)
        let thumbnails = try Cache<Data>(name: "thumbnails.v2", baseDirectory: base.url)

        try images.setValue(bytes(10, seed: 1), forKey: "same")
        try thumbnails.setValue(bytes(10, seed: 2), forKey: "same")
        try thumbnails.setValue(bytes(10), forKey: "other")
        try images.removeAll()

        #expect(try images.value(forKey: "same") == nil)
        #expect(try thumbnails.value(forKey: "same") == bytes(10, seed: 2))
        thumbnails.memory.removeAll()
        #expect(try thumbnails.result(forKey: "other").source == .disk)
    }

    @Test(arguments: ["", ".", "..", "a/b", "/", "images/", "caché", "with space", "tab\t", String(repeating: "x", count: 256)])
    func badNamesAreRejected(name: String) throws {
        let base = TemporaryDirectory()
        defer { base.remove() }

        #expect(throws: KVCacheError.self) { try Cache<Data>(name: name, baseDirectory: base.url) }
        #expect(!FileManager.default.fileExists(atPath: base.path))
    }

    @Test(arguments: ["a", "images", "Images-2_v.1", ".hidden", String(repeating: "x", count: 255)])
    func goodNamesAreAccepted(name: String) throws {
        let base = TemporaryDirectory()
        defer { base.remove() }

        let cache = try Cache<Data>(name: name, baseDirectory: base.url)

        #expect(cache.name == name)
    }

    @Test func twoCachesCannotShareOneName() throws {
        let base = TemporaryDirectory()
        defer { base.remove() }
        let first = try Cache<Data>(name: "shared", baseDirectory: base.url)

        #expect(throws: KVCacheError.self) { try Cache<Data>(name: "shared", baseDirectory: base.url) }
        _ = first
    }
}
