import Foundation
import Testing
import KVCache

/// The README's quick start, kept compiling, true and verbatim.
///
/// The regions between the `// README ...: begin` and `: end` markers below are
/// the README's swift blocks as written (indented); `theReadmeBlocksAreTheCodeRunHere`
/// fails if they differ. The README's placeholders are defined around them:
/// `fetchProfile(id:)`, and `/var/cache/myapp`, which becomes a temporary directory.
/// The import is plain, not `@testable`, so the code compiles against the public API only.
@Suite struct ReadmeExampleTests {
    @Test func quickStartWorksAsWritten() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let asyncExample = try Self.quickStart(temporaryBase: temporary.url)
        try await asyncExample()
    }

    /// The first block, then the second as a closure (the first must run in a
    /// synchronous context, where `value(forKey:)` is the synchronous overload).
    static func quickStart(temporaryBase: Foundation.URL) throws -> @Sendable () async throws -> Void {
        // The placeholder directory: the README's `base` is `temporaryBase`.
        func URL(fileURLWithPath path: String) -> Foundation.URL {
            #expect(path == "/var/cache/myapp")
            return temporaryBase
        }

        // README quick start: begin
        struct Profile: Codable, Sendable { var name: String; var visits: Int }

        // Memory in front of disk, under <base>/profiles/.
        let base = URL(fileURLWithPath: "/var/cache/myapp")
        var configuration = Cache<Profile>.Configuration()
        configuration.memory.countLimit = 10_000
        configuration.disk.sizeLimit = 512 << 20            // 512 MiB, trimmed oldest access first
        let profiles = try Cache<Profile>(name: "profiles", baseDirectory: base, configuration: configuration)

        try profiles.setValue(Profile(name: "ada", visits: 1), forKey: "user:1", expiration: .after(.seconds(7 * 86_400)))
        let profile = try profiles.value(forKey: "user:1")  // memory, then disk (promoted)

        // Raw bytes pass through untouched.
        let blobs = try Cache<Data>(name: "blobs", baseDirectory: base)
        try blobs.setValue(Data(count: 100_000), forKey: "thumb/42")   // lands in a file

        // Each level can be used on its own.
        let lru = try MemoryCache<String, Data>(configuration: .init(countLimit: 1_000, costLimit: 64 << 20))
        lru.setValue(Data([1, 2, 3]), forKey: "k", cost: 3)

        let disk = try DiskCache(directory: base.appendingPathComponent("raw"))
        try disk.setValue(Data("hello".utf8), forKey: "greeting")
        try disk.flush()                                       // durable now (else within the group-commit delay)
        // README quick start: end

        #expect(profile?.name == "ada" && profile?.visits == 1)
        #expect(profiles.directory == temporaryBase.appendingPathComponent("profiles", isDirectory: true))
        #expect(blobs.disk.statistics.fileCount == 1)
        #expect(lru.totalCost == 3)
        #expect(try disk.value(forKey: "greeting") == Data("hello".utf8))
        try disk.close()

        // The placeholder the second block calls.
        @Sendable func fetchProfile(id: Int) async throws -> Profile { Profile(name: "user \(id)", visits: 0) }

        return {
            // README async example: begin
            let loaded = try await profiles.value(forKey: "user:2") {
                try await fetchProfile(id: 2)
            }
            // README async example: end

            #expect(loaded.name == "user 2")
            #expect(try await profiles.value(forKey: "user:1")?.visits == 1)
        }
    }

    // MARK: - The README and this file say the same

    @Test func theReadmeBlocksAreTheCodeRunHere() throws {
        let thisFile = URL(fileURLWithPath: #filePath)
        // Tests/KVCacheTests/Cache/ is three folders below the package root.
        let root = thisFile.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(contentsOf: thisFile, encoding: .utf8)
        // The runnable blocks are the Quick start's (the manifest snippet before it is not Swift to run).
        let quickStart = try #require(readme.range(of: "## Quick start"), "README.md has no Quick start section")
        let blocks = Self.swiftBlocks(in: String(readme[quickStart.lowerBound...]))
        try #require(blocks.count >= 2, "README.md's Quick start has fewer than two swift blocks")

        // The README's imports are this file's (`@testable import X` would count as `import X`).
        let testImports = Set(Self.lines(of: test).compactMap(Self.importedModule))
        for module in blocks[0].compactMap(Self.importedModule) {
            #expect(testImports.contains(module), "README imports \(module), this file does not")
        }

        for (index, name) in ["quick start", "async example"].enumerated() {
            // The blank line after the imports is not code.
            let readmeCode = blocks[index].filter { Self.importedModule($0) == nil }.drop { $0.isEmpty }
            let region = try Self.region(name, in: test)
            #expect(region == Array(readmeCode), "README swift block \(index + 1) differs from the \"\(name)\" region here")
        }
    }

    static func lines(of text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The trimmed lines of each ```swift block, in order.
    static func swiftBlocks(in markdown: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in lines(of: markdown) {
            if current == nil {
                if line == "```swift" { current = [] }
            } else if line == "```" {
                blocks.append(current!)
                current = nil
            } else {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The module an `import` line imports, or nil for any other line.
    static func importedModule(_ line: String) -> String? {
        var words = line.split(separator: " ")
        if words.first == "@testable" { words.removeFirst() }
        return words.count == 2 && words[0] == "import" ? String(words[1]) : nil
    }

    /// The trimmed lines between this file's `// README <name>: begin` and `: end` markers.
    static func region(_ name: String, in source: String) throws -> [String] {
        let lines = lines(of: source)
        let begin = try #require(lines.firstIndex(of: "// README \(name): begin"))
        let end = try #require(lines[begin...].firstIndex(of: "// README \(name): end"))
        return Array(lines[(begin + 1)..<end])
    }
}
