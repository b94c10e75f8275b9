import ArgumentParser

extension KVCacheBench {
    struct Persist: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "persist",
            abstract: "Hummingbird: one app with KVCachePersistDriver and with MemoryPersistDriver, cached GETs of 1,000 keys (router and live server, alternating); a million distinct keys within the memory level's limit.",
            discussion: "Not part of the default run (about a minute in a release build; --quick: seconds).")
        @OptionGroup var options: CommonOptions

        @Option(help: "Keys the GETs cycle through (default 1000).")
        var keys: Int = 1_000

        @Option(help: "Distinct keys set for the memory check (default 1000000; 20000 with --quick).")
        var distinctKeys: Int?

        func validate() throws {
            if keys < 1 { throw ValidationError("--keys must be at least 1") }
            if let distinctKeys, distinctKeys < 1 { throw ValidationError("--distinct-keys must be at least 1") }
        }

        func run() throws {
            try Session(options: options).run { report, workspace in
                try PersistBenchmark(options: options, workspace: workspace, keys: keys,
                                     distinctKeys: distinctKeys ?? (options.quick ? 20_000 : 1_000_000)).run(into: report)
            }
        }
    }
}
