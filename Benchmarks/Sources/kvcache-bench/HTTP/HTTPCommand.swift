import ArgumentParser

extension KVCacheBench {
    struct HTTP: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "http",
            abstract: "KVCacheHTTP in process: a fresh hit, a revalidated hit (a 304) and a miss of 1 KB responses, beside a Cache<Data> doing the same storage work and Foundation's URLCache; a stored 100 MB body streamed, beside read(2) of the same bytes.",
            discussion: "Not part of the default run (seconds in a release build). The origin answers in process, so the figures are the cache's own cost.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                for comparison in try HTTPBenchmark(options: options, workspace: workspace).run() {
                    report.add(comparison)
                }
            }
        }
    }
}
