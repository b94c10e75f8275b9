extension DiskBenchmark {
    /// Starts python's diskcache for the disk tables unless `--no-peer`;
    /// when it cannot run, the report says so in one line.
    static func startPeer(options: CommonOptions, report: Report) -> PythonDiskcachePeer? {
        guard !options.noPeer else { return nil }
        switch PythonDiskcachePeer.start() {
        case .success(let peer):
            report.note("peer: \(peer.name) = \(peer.version), default settings, timed inside python "
                + "(same keys, values and order; its set batch has no flush)")
            return peer
        case .failure(let reason):
            report.note(reason.description)
            return nil
        }
    }

    /// Runs the disk suite with the peer attached for its duration.
    static func run(options: CommonOptions, workspace: Workspace, into report: Report) throws {
        var benchmark = DiskBenchmark(options: options, workspace: workspace)
        benchmark.peer = startPeer(options: options, report: report)
        defer { benchmark.peer?.stop() }
        try benchmark.run(into: report)
    }
}
