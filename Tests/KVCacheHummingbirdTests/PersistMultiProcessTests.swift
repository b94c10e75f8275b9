#if Hummingbird
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Real app processes (KVCacheHummingbirdTestApp) on one cache directory, reached over
/// loopback HTTP with Hummingbird's test client.
@Suite(.serialized) struct PersistMultiProcessTests {
    func withClient<Value: Sendable>(
        _ app: AppProcess, _ body: @escaping @Sendable (TestClient) async throws -> Value
    ) async throws -> Value {
        try await TestClient.withClient(host: "127.0.0.1", port: app.port, operation: body)
    }

    func expectStatus(_ status: HTTPResponse.Status, _ response: TestClient.Response,
                      sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
    }

    func expectText(_ text: String, _ response: TestClient.Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .ok, sourceLocation: sourceLocation)
        #expect(response.text == text, sourceLocation: sourceLocation)
    }

    /// GET `uri` until `condition` holds for the response (another process's commit lands
    /// within the group-commit delay), at most 200 tries.
    func poll(_ client: TestClient, _ uri: String, until condition: (TestClient.Response) -> Bool) async throws -> Bool {
        for _ in 0..<200 {
            if condition(try await client.get(uri)) { return true }
            await Task.yield()
        }
        return false
    }

    @Test func aValueSetInOneProcessIsReadInAnother() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try await AppProcess(directory: directory.url)
        let second: AppProcess
        do { second = try await AppProcess(directory: directory.url) } catch { first.kill(); throw error }
        do {
            try await withClient(first) { client in
                try await expectStatus(.ok, client.put("/persist/shared/60", body: ByteBuffer(text: "from first")))
                try await expectStatus(.ok, client.post("/flush", body: ByteBuffer()))
            }
            try await withClient(second) { client in
                let seen = try await poll(client, "/persist/shared") { $0.text == "from first" }
                #expect(seen)
                let ttlText = try await client.get("/persist/shared/ttl").text
                let ttl = try #require(Int(ttlText))
                #expect(ttl > 50 && ttl <= 60)
            }
        } catch {
            first.kill()
            second.kill()
            throw error
        }
        let stoppedFirst = await first.stop()
        let stoppedSecond = await second.stop()
        #expect(stoppedFirst.stopped && stoppedFirst.exitCode == 0)
        #expect(stoppedSecond.stopped && stoppedSecond.exitCode == 0)
    }

    /// `create` is decided by the shared disk level: of two processes creating the same
    /// keys at once, exactly one wins each key, and both read the winner's value.
    @Test func createIsAtomicAcrossProcesses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let apps = [try await AppProcess(directory: directory.url), try await AppProcess(directory: directory.url)]
        let keys = (0..<50).map { "race-\($0)" }
        do {
            let wins = try await withThrowingTaskGroup(of: [String: String].self) { group in
                for (index, app) in apps.enumerated() {
                    group.addTask {
                        try await withClient(app) { client in
                            var won: [String: String] = [:]
                            for key in keys {
                                let response = try await client.put("/create/\(key)", body: ByteBuffer(text: "app\(index)"))
                                #expect(response.status == .ok || response.status == .conflict)
                                if response.status == .ok { won[key] = "app\(index)" }
                            }
                            return won
                        }
                    }
                }
                var all: [[String: String]] = []
                for try await won in group { all.append(won) }
                return all
            }
            let winners = wins.reduce(into: [String: [String]]()) { result, won in
                for (key, app) in won { result[key, default: []].append(app) }
            }
            #expect(winners.count == keys.count)
            #expect(winners.values.allSatisfy { $0.count == 1 })
            for app in apps {
                try await withClient(app) { client in
                    for key in keys {
                        let expected = try #require(winners[key]?.first)
                        let seen = try await poll(client, "/persist/\(key)") { $0.text == expected }
                        #expect(seen, "\(key): \(expected)")
                    }
                }
            }
        } catch {
            apps.forEach { $0.kill() }
            throw error
        }
        for app in apps {
            let result = await app.stop()
            #expect(result.stopped && result.exitCode == 0)
        }
    }

    /// Stop the app gracefully, start a new one on the same directory: values and their
    /// expirations are there; removed and expired ones are not.
    @Test func aRestartKeepsValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let before = try await AppProcess(directory: directory.url)
        do {
            try await withClient(before) { client in
                try await expectStatus(.ok, client.put("/persist/plain", body: ByteBuffer(text: "kept")))
                try await expectStatus(.ok, client.put("/persist/timed/3600", body: ByteBuffer(text: "timed")))
                try await expectStatus(.ok, client.put("/persist/gone", body: ByteBuffer(text: "x")))
                try await expectStatus(.noContent, client.delete("/persist/gone", body: ByteBuffer()))
                try await expectStatus(.ok, client.put("/persist/expired/0", body: ByteBuffer(text: "x")))
                try await expectStatus(.ok, client.put("/create/created", body: ByteBuffer(text: "once")))
            }
        } catch {
            before.kill()
            throw error
        }
        let stopped = await before.stop()
        #expect(stopped.stopped && stopped.exitCode == 0)

        let after = try await AppProcess(directory: directory.url)
        do {
            try await withClient(after) { client in
                try await expectText("kept", client.get("/persist/plain"))
                try await expectStatus(.noContent, client.get("/persist/plain/ttl"))
                try await expectText("timed", client.get("/persist/timed"))
                let ttlText = try await client.get("/persist/timed/ttl").text
                let ttl = try #require(Int(ttlText))
                #expect(ttl > 3_500 && ttl <= 3_600)
                try await expectStatus(.noContent, client.get("/persist/gone"))
                try await expectStatus(.noContent, client.get("/persist/expired"))
                try await expectStatus(.conflict, client.put("/create/created", body: ByteBuffer(text: "twice")))
                try await expectText("once", client.get("/persist/created"))
            }
        } catch {
            after.kill()
            throw error
        }
        let stoppedAfter = await after.stop()
        #expect(stoppedAfter.stopped && stoppedAfter.exitCode == 0)
    }
}
#endif

#if Hummingbird
extension TestClient.Response {
    /// The body as UTF-8 text ("" without a body).
    var text: String { body.map { String(buffer: $0) } ?? "" }
}
#endif
