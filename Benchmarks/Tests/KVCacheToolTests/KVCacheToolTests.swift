import Foundation
import Testing

@Suite struct KVCacheToolTests {
    /// A cache directory path that does not exist yet, and its parent to remove afterwards.
    struct Scratch {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-tool-\(UUID().uuidString)")
        var cache: String { root.appendingPathComponent("cache").path }
        var dataFiles: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: cache + "/data")) ?? []).sorted() }

        func file(_ name: String, _ contents: Data) throws -> String {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let url = root.appendingPathComponent(name)
            try contents.write(to: url)
            return url.path
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    func kvcache(_ arguments: String..., input: Data = Data()) throws -> ToolProcess.Result {
        try ToolProcess.run(arguments, input: input)
    }

    /// 100 KB that is not all one byte: stored in a file (the default inline threshold is 20 KB).
    let large = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    @Test func aValueSetFromStdinOrAFileIsReadBackByteForByte() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        #expect(try kvcache("set", scratch.cache, "greeting", input: Data("hello\0world".utf8)).status == 0)
        #expect(try kvcache("get", scratch.cache, "greeting").stdout == Data("hello\0world".utf8))

        let source = try scratch.file("large.bin", large)
        #expect(try kvcache("set", scratch.cache, "large", "--file", source).status == 0)
        #expect(try kvcache("get", scratch.cache, "large").stdout == large)
        let copy = scratch.root.appendingPathComponent("copy.bin").path
        #expect(try kvcache("get", scratch.cache, "large", "--output", copy).status == 0)
        #expect(FileManager.default.contents(atPath: copy) == large)
    }

    /// `--version` prints the library's version, which is the newest version CHANGELOG.md
    /// names (with `-dev` until it is released).
    @Test func versionMatchesTheChangelog() throws {
        let result = try kvcache("--version")
        #expect(result.status == 0)
        let printed = String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let changelog = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../CHANGELOG.md").standardized
        let text = try String(contentsOf: changelog, encoding: .utf8)
        let heading = try #require(text.split(separator: "\n").first { $0.hasPrefix("## ") })
        let version = try #require(heading.dropFirst(3).split(separator: " ").first)
        let released = !heading.contains("unreleased")
        #expect(printed == (released ? String(version) : "\(version)-dev"))
    }

    /// `set` and `remove` say what they did, as redis-cli does; counts take the right plural.
    @Test func setAndRemoveReportWhatTheyDid() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        #expect(try kvcache("set", scratch.cache, "a", input: Data("hello".utf8)).text
            == "stored a: 5 bytes, inline, never expires\n")
        #expect(try kvcache("set", scratch.cache, "a", input: Data("x".utf8)).text
            == "replaced a: 1 byte, inline, never expires\n")
        let source = try scratch.file("large.bin", large)
        let big = try kvcache("set", scratch.cache, "big", "--file", source, "--expires", "3600").text
        #expect(big.hasPrefix("stored big: 97.7 KiB (100000 bytes), in a file, expires in 1 h"), "\(big)")
        #expect(try kvcache("remove", scratch.cache, "a", "nothing").text == "removed 1 value\n")
        #expect(try kvcache("remove", scratch.cache, "a").text == "removed 0 values\n")
        #expect(try kvcache("set", scratch.cache, "c", input: Data("1".utf8)).status == 0)
        #expect(try kvcache("remove", scratch.cache, "big", "c", "c").text == "removed 2 values\n")
    }

    /// `get --info` prints size, place and TTL without the value; `--json` gives `ttl` in seconds.
    @Test func getInfoShowsTheTTL() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        #expect(try kvcache("set", scratch.cache, "session", "--expires", "90", input: Data("token".utf8)).status == 0)
        #expect(try kvcache("set", scratch.cache, "forever", input: Data("x".utf8)).status == 0)
        let text = try kvcache("get", scratch.cache, "session", "--info").text
        #expect(text.hasPrefix("session: 5 bytes, inline, expires in 1 min 30 s (")
            || text.hasPrefix("session: 5 bytes, inline, expires in 1 min 29 s ("), "\(text)")
        let json = try kvcache("get", scratch.cache, "session", "--info", "--json").json()
        #expect(json["size"] as? Int == 5 && json["inFile"] as? Bool == false && json["expires"] is String)
        let ttl = try #require(json["ttl"] as? Double)
        #expect(ttl > 0 && ttl <= 90)
        let forever = try kvcache("get", scratch.cache, "forever", "--info", "--json").json()
        #expect(forever["ttl"] is NSNull && forever["expires"] is NSNull)
        #expect(try kvcache("get", scratch.cache, "forever", "--info").text == "forever: 1 byte, inline, never expires\n")
        let missing = try kvcache("get", scratch.cache, "none", "--info")
        #expect(missing.status == 1 && missing.stdout.isEmpty)
        #expect(try kvcache("get", scratch.cache, "session", "--json").status == 2)
        #expect(try kvcache("get", scratch.cache, "session", "--info", "--output", "/dev/null").status == 2)
    }

    @Test func keysWithAPrefix() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        for key in ["user:1", "user:2", "users", "team:1"] {
            #expect(try kvcache("set", scratch.cache, key, input: Data(key.utf8)).status == 0)
        }
        #expect(try kvcache("keys", scratch.cache, "--prefix", "user:").text == "user:1\nuser:2\n")
        #expect(try kvcache("keys", scratch.cache, "--prefix", "user", "--all").text == "user:1\nuser:2\nusers\n")
        let page = try kvcache("keys", scratch.cache, "--prefix", "user:", "--limit", "1", "--json").json()
        #expect(page["keys"] as? [String] == ["user:1"] && page["next"] as? String == "user:1")
        #expect(try kvcache("keys", scratch.cache, "--prefix", "user:", "--after", "user:1").text == "user:2\n")
        #expect(try kvcache("keys", scratch.cache, "--prefix", "nobody").text == "")
    }

    @Test func getOfAMissingKeyExitsOneWithAMessage() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        #expect(try kvcache("set", scratch.cache, "a", input: Data("1".utf8)).status == 0)
        let result = try kvcache("get", scratch.cache, "b")
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("no value for b"))
    }

    @Test func keysArePagedWithAfterAndLimit() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        for key in ["e", "a", "d", "b", "c"] {
            #expect(try kvcache("set", scratch.cache, key, input: Data(key.utf8)).status == 0)
        }
        let first = try kvcache("keys", scratch.cache, "--limit", "2", "--json").json()
        #expect(first["keys"] as? [String] == ["a", "b"])
        #expect(first["next"] as? String == "b")
        #expect(try kvcache("keys", scratch.cache, "--after", "b", "--limit", "2").text == "c\nd\n")
        let last = try kvcache("keys", scratch.cache, "--after", "d", "--limit", "2", "--json").json()
        #expect(last["keys"] as? [String] == ["e"])
        #expect(last["next"] is NSNull)
        #expect(try kvcache("keys", scratch.cache, "--all").text == "a\nb\nc\nd\ne\n")
    }

    @Test func removeDeletesTheValuesOfTheGivenKeys() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        for key in ["a", "b", "c"] { _ = try kvcache("set", scratch.cache, key, input: Data(key.utf8)) }
        #expect(try kvcache("remove", scratch.cache, "a", "c", "missing").status == 0)
        #expect(try kvcache("keys", scratch.cache).text == "b\n")
        #expect(try kvcache("get", scratch.cache, "a").status == 1)
    }

    @Test func statsJSONCountsInlineAndFileValues() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        _ = try kvcache("set", scratch.cache, "small", input: Data("tiny".utf8))
        _ = try kvcache("set", scratch.cache, "large", "--file", try scratch.file("large.bin", large))
        _ = try kvcache("set", scratch.cache, "brief", "--expires", "3600", input: Data("x".utf8))
        let result = try kvcache("stats", scratch.cache, "--json")
        #expect(result.status == 0)
        let stats = try result.json()
        #expect(stats["count"] as? Int == 3)
        #expect(stats["size"] as? Int == 100_005)
        #expect(stats["inlineCount"] as? Int == 2)
        #expect(stats["fileCount"] as? Int == 1)
        #expect(stats["fileSize"] as? Int == 100_000)
        #expect(stats["expiredCount"] as? Int == 0)
        #expect(stats["schemaVersion"] as? Int == 1)
        #expect(stats["oldestAccess"] is String)
        #expect(stats["walSize"] is Int)
        let text = try kvcache("stats", scratch.cache).text
        #expect(text.contains("in files       1 entry, ") && text.contains("inline         2 entries, "))
    }

    @Test func trimRemovesEntriesDownToTheCountAndReportsWhatRemains() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        for index in 0..<5 { _ = try kvcache("set", scratch.cache, "k\(index)", input: Data(count: 10)) }
        let result = try kvcache("trim", scratch.cache, "--count", "2", "--json")
        #expect(result.status == 0)
        let trim = try result.json()
        #expect((trim["removed"] as? [String: Any])?["count"] as? Int == 3)
        #expect(trim["remainingCount"] as? Int == 2)
        #expect(trim["remainingSize"] as? Int == 20)
        let bySize = try kvcache("trim", scratch.cache, "--size", "10", "--json").json()
        #expect(bySize["remainingCount"] as? Int == 1)
    }

    @Test func verifyExitsOneOnDamageAndZeroOnceRepaired() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        _ = try kvcache("set", scratch.cache, "small", input: Data("tiny".utf8))
        _ = try kvcache("set", scratch.cache, "large", "--file", try scratch.file("large.bin", large))
        _ = try kvcache("set", scratch.cache, "other", "--file", try scratch.file("other.bin", large + large))
        let healthy = try kvcache("verify", scratch.cache, "--grace-period", "0")
        #expect(healthy.status == 0)
        #expect(healthy.text.contains("result: healthy"))

        let files = scratch.dataFiles
        #expect(files.count == 2)
        #expect(unlink(scratch.cache + "/data/" + files[0]) == 0)
        // Named as the store names its files (others in data/ are not the store's).
        let orphan = "0123456789abcdef-0123456789abcdef"
        try Data("stray".utf8).write(to: URL(fileURLWithPath: scratch.cache + "/data/" + orphan))
        let damaged = try kvcache("verify", scratch.cache, "--grace-period", "0", "--json")
        #expect(damaged.status == 1)
        let report = try damaged.json()
        #expect(report["healthy"] as? Bool == false)
        #expect((report["missingFiles"] as? [[String: Any]])?.count == 1)
        #expect(report["orphanFiles"] as? [String] == [orphan])
        #expect(report["repairs"] is NSNull)

        let repaired = try kvcache("verify", scratch.cache, "--repair", "--grace-period", "0", "--json")
        #expect(repaired.status == 0)
        let repairs = try repaired.json()["repairs"] as? [String: Any]
        #expect(repairs?["removedEntries"] as? Int == 1)
        #expect(repairs?["removedOrphanFiles"] as? Int == 1)
        #expect(try kvcache("verify", scratch.cache, "--grace-period", "0").status == 0)
        #expect(try kvcache("get", scratch.cache, "small").stdout == Data("tiny".utf8))
    }

    @Test func commandsOnAMissingDirectoryFailWithoutCreatingIt() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        for command in [["stats"], ["get", "k"], ["verify"], ["keys"], ["remove", "k"], ["trim", "--count", "1"]] {
            let result = try ToolProcess.run([command[0], scratch.cache] + command.dropFirst())
            #expect(result.status == 3, "\(command)")
            #expect(result.stderr.contains("no cache at"), "\(command)")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.cache))
    }

    @Test func usageErrorsExitTwoAndOperationalErrorsExitThree() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        #expect(try kvcache("frobnicate").status == 2)
        _ = try kvcache("set", scratch.cache, "a", input: Data("1".utf8))
        #expect(try kvcache("trim", scratch.cache).status == 2)
        #expect(try kvcache("keys", scratch.cache, "--limit", "0").status == 2)
        let unreadable = try kvcache("set", scratch.cache, "b", "--file", scratch.root.appendingPathComponent("none").path)
        #expect(unreadable.status == 3)
        #expect(unreadable.stderr.hasPrefix("kvcache: error: "))
        // A key the library refuses is a usage error (issue 12: `get DIR ""` exited 3).
        for command in [["set", ""], ["get", ""], ["remove", ""]] {
            let badKey = try ToolProcess.run([command[0], scratch.cache] + command.dropFirst(), input: Data("1".utf8))
            #expect(badKey.status == 2, "\(command)")
            #expect(badKey.stderr.contains("invalid key"), "\(command)")
        }
    }

    /// Durations take units (issue 14): `--expires 10m`, `--age 500ms`, `--grace-period 1h`;
    /// negative, NaN, infinite, unknown units and more than 100 years are usage errors.
    @Test func durationsTakeUnitsAndRefuseNonsense() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let stored = try kvcache("set", scratch.cache, "a", "--expires", "10m", input: Data("1".utf8)).text
        #expect(stored.hasPrefix("stored a: 1 byte, inline, expires in 10 min"), "\(stored)")
        let day = try kvcache("set", scratch.cache, "b", "--expires", "1.5d", input: Data("1".utf8)).text
        #expect(day.hasPrefix("stored b: 1 byte, inline, expires in 1 d 12 h"), "\(day)")
        #expect(try kvcache("trim", scratch.cache, "--age", "500ms").status == 0)
        #expect(try kvcache("verify", scratch.cache, "--grace-period", "1h", "--quiet").status == 0)
        for bad in ["-1", "nan", "inf", "10y", "", "101000d", "0"] {
            let result = try kvcache("set", scratch.cache, "c", "--expires", bad, input: Data("1".utf8))
            #expect(result.status == 2, "--expires \(bad)")
        }
        for bad in ["-1s", "nan", "inf"] {
            #expect(try kvcache("trim", scratch.cache, "--age", bad).status == 2, "--age \(bad)")
        }
        #expect(try kvcache("get", scratch.cache, "c").status == 1, "no refused set stored anything")
    }

    /// Issue 12: `--limit -1` said "Missing value"; `set --file <dir>` said
    /// "NSCocoaErrorDomain error 256".
    @Test func usageMessagesSayWhatIsWrong() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        _ = try kvcache("set", scratch.cache, "a", input: Data("1".utf8))
        let negative = try kvcache("keys", scratch.cache, "--limit", "-1")
        #expect(negative.status == 2)
        #expect(negative.stderr.contains("--limit must be at least 1"), "\(negative.stderr)")
        let negativeCount = try kvcache("trim", scratch.cache, "--count", "-5")
        #expect(negativeCount.status == 2)
        #expect(negativeCount.stderr.contains("--count must not be negative"), "\(negativeCount.stderr)")
        let directory = try kvcache("set", scratch.cache, "b", "--file", scratch.root.path)
        #expect(directory.status == 3)
        #expect(directory.stderr.contains("is a directory"), "\(directory.stderr)")
        #expect(!directory.stderr.contains("NSCocoaErrorDomain"))
    }

    /// Issue 12, item 5: `keys --json` on a manifest with two damaged pages exited 0 with
    /// no keys, moved the manifest to corrupt/ and started an empty one. The commands
    /// that only read report the damage and change nothing.
    @Test func readOnlyCommandsReportADamagedManifestAndChangeNothing() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        for index in 0..<150 {
            _ = try kvcache("set", scratch.cache, "key\(index)", input: Data(repeating: UInt8(index), count: 3000))
        }
        _ = try kvcache("set", scratch.cache, "large", "--file", try scratch.file("large.bin", large))
        let manifest = scratch.cache + "/manifest.sqlite"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: manifest))
        for page in [2, 5] {
            try handle.seek(toOffset: UInt64(page * 16384))
            try handle.write(contentsOf: Data(repeating: 0xa5, count: 16384))
        }
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: manifest))
        let files = scratch.dataFiles
        for command in [["keys", "--json"], ["keys", "--all"], ["stats"], ["stats", "--json"], ["get", "key7"],
                        ["verify", "--grace-period", "0"]] {
            let result = try ToolProcess.run([command[0], scratch.cache] + command.dropFirst())
            // get and stats may not touch a damaged page (exit 0 or 1); keys must, and verify finds it.
            if command[0] == "keys" {
                #expect(result.status == 3, "\(command): \(result.stderr)")
                #expect(result.stderr.contains("verify --repair"), "\(command): \(result.stderr)")
            }
            if command[0] == "verify" { #expect(result.status == 1, "\(command): \(result.stderr)") }
            #expect(try Data(contentsOf: URL(fileURLWithPath: manifest)) == before, "\(command)")
            #expect(!FileManager.default.fileExists(atPath: scratch.cache + "/corrupt"), "\(command)")
            #expect(scratch.dataFiles == files, "\(command)")
        }
        #expect(try kvcache("verify", scratch.cache, "--repair", "--grace-period", "0").status == 0)
        #expect(try kvcache("verify", scratch.cache, "--grace-period", "0").status == 0)
    }

    @Test func aForeignDatabaseIsRefusedAndLeftAsItIs() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.cache, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(scratch.cache)/manifest.sqlite'); "
                             + "c.execute('create table users(name)'); c.commit()"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch.cache).sorted()
        for command in [["stats"], ["keys"], ["verify"], ["set", "k"]] {
            let result = try ToolProcess.run([command[0], scratch.cache] + command.dropFirst(), input: Data("1".utf8))
            #expect(result.status == 3, "\(command)")
            #expect(result.stderr.contains("not a KVCache directory"), "\(command): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.cache).sorted() == before, "\(command)")
        }
    }
}
