/// What each strategy is and its colour, the same in every chart of the report:
/// KVCache in blues, the seed designs and peers each in a colour of their own,
/// floors in greys (and dashed in line charts).
enum StrategyGuide {
    struct Entry {
        var color: String
        var summary: String
    }

    static let floorGrey = "#7a7a7a"

    static let entries: [String: Entry] = [
        // Disk
        "raw sqlite3": Entry(color: "#4a4a4a", summary: "Floor. One SQLite table, prepared statements, every value "
            + "inline, 1,000 inserts per transaction, SELECT by key: the least SQLite can do."),
        "raw files": Entry(color: "#a0a0a0", summary: "Floor. One file per key in bare syscalls "
            + "(open/write/close, open/fstat/read/close): the least the file system can do."),
        "KVCache mixed": Entry(color: "#1f77b4", summary: "KVCache DiskCache as configured by default: values "
            + "under 20 KB inside the SQLite manifest, larger ones in files; group commit; buffered access times."),
        "KVCache inline": Entry(color: "#17becf", summary: "DiskCache with every value inside SQLite."),
        "KVCache file": Entry(color: "#393b79", summary: "DiskCache with every value in its own file, the "
            + "metadata in SQLite."),
        "KVCache mixed 4K pages": Entry(color: "#6baed6", summary: "The default store with SQLite's 4 KiB pages "
            + "instead of 16 KiB (trim only)."),
        "KVCache inline 4K pages": Entry(color: "#bcbd22", summary: "Threshold sweep: inline storage, 4 KiB pages."),
        "KVCache inline 16K pages": Entry(color: "#0f8b8d", summary: "Threshold sweep: inline storage, 16 KiB "
            + "pages (the default page size)."),
        "YY-style (manifest)": Entry(color: "#ff7f0e", summary: "YYKVStorage as written: SQLite manifest, an "
            + "autocommit per set, SELECT + UPDATE of the access time per get, files from 20 KB."),
        "file-per-key (MD5)": Entry(color: "#8c564b", summary: "SDWebImage / Kingfisher's layout: a file per "
            + "key named MD5(key), no index; its trim lists and stats every file (in bare syscalls here)."),
        "file-per-key, FileManager sweep": Entry(color: "#e377c2", summary: "The same files trimmed as "
            + "SDWebImage and Kingfisher do it: FileManager's enumerator, resourceValues per file, removeItem "
            + "(trim only)."),
        "python-diskcache": Entry(color: "#d62728", summary: "python's diskcache with its defaults (SQLite, "
            + "files from 32 KB) in a subprocess, timed inside python: same keys, values and order."),
        "URLCache (Foundation)": Entry(color: "#2ca02c", summary: "Foundation's URLCache (corelibs on Linux), disk "
            + "only: a file per response (NSKeyedArchiver). It lists its whole directory on every store and "
            + "read, so it runs small batches (at most 100 operations and 512 KB)."),
        // Memory
        "Dictionary+mutex": Entry(color: "#7a7a7a", summary: "Floor. A Swift Dictionary behind a pthread mutex, "
            + "no eviction: the least a memory cache can do."),
        "KVCache MemoryCache": Entry(color: "#1f77b4", summary: "KVCache's memory level with its default policy "
            + "(adaptive W-TinyLFU): hash table plus intrusive lists and a frequency sketch under a pthread "
            + "mutex, count / cost / age limits."),
        "KVCache MemoryCache (LRU)": Entry(color: "#aec7e8", summary: "KVCache's memory level with policy: .lru "
            + "(exact LRU): hash table plus one intrusive list under a pthread mutex. In the hit-ratio tables, "
            + "replayed through its API as the adaptive one is."),
        "AutoPurging (sort on purge)": Entry(color: "#f0a000", summary: "AlamofireImage's AutoPurgingImageCache: "
            + "over the limit it sorts all entries by last access and purges to 60 %."),
        "NSCache": Entry(color: "#9467bd", summary: "swift-corelibs-foundation's NSCache: limits by count and "
            + "cost, not an LRU."),
        UnlockedReadsStrategy.name: Entry(color: "#d62728", summary: "Ceiling, not a cache: a Swift Dictionary "
            + "whose gets take no lock (sets do; no get runs beside a set here). How far the machine lets a "
            + "lookup that writes nothing scale with threads."),
        // The facade
        "levels by hand": Entry(color: "#7a7a7a", summary: "Floor. MemoryCache, then DiskCache, used directly; a "
            + "disk hit promoted to memory by hand."),
        "Cache": Entry(color: "#1f77b4", summary: "KVCache's two-level facade, default configuration."),
        "Cache (background disk writes)": Entry(color: "#17becf", summary: "The facade with "
            + "diskWrite: .background (the timed part ends with flush())."),
        // Concurrency
        "1 thread": Entry(color: "#7a7a7a", summary: "Concurrency floor: the same reader on one thread."),
        "2 threads": Entry(color: "#1f77b4", summary: "Two reading threads; 0.5× the floor's time per read is "
            + "twice its throughput."),
        "4 threads": Entry(color: "#393b79", summary: "Four reading threads on two cores."),
        "1 process": Entry(color: "#7a7a7a", summary: "python-diskcache read scaling: one process."),
        "2 processes": Entry(color: "#d62728", summary: "python-diskcache read scaling: two processes."),
        "alone": Entry(color: "#7a7a7a", summary: "Latency floor: the same read with nothing running beside it."),
        "beside the work": Entry(color: "#1f77b4", summary: "The read while slow work runs on another thread."),
        // The remote level
        "raw hiredis": Entry(color: "#7a7a7a", summary: "Floor of the remote suite. hiredis used directly on one "
            + "blocking connection (redisCommandArgv GET, SET, MGET, PUBLISH), the reply copied into Data: the "
            + "least a client can do per round trip on the same server."),
        "raw hiredis SET+PUBLISH": Entry(color: "#a0a0a0", summary: "Second floor for sets: SET and PUBLISH of an "
            + "invalidation appended and sent in one write, then both replies, as RedisLevel.setEntry does."),
        "raw hiredis, 100 GETs": Entry(color: "#ff7f0e", summary: "A batch of 100 keys fetched with 100 GETs, one "
            + "round trip each: what a batch costs without MGET."),
        "RedisLevel": Entry(color: "#1f77b4", summary: "KVCacheRedis's RedisLevel (defaults): a pooled hiredis "
            + "connection behind a circuit breaker, namespaced keys, a 14-byte value header; entries(forKeys:) "
            + "is one MGET, setEntry pipelines SET and PUBLISH."),
        "Cache memory hit": Entry(color: "#17becf", summary: "Cache<Data> with a RedisLevel: the value in memory."),
        "Cache disk hit": Entry(color: "#393b79", summary: "Cache<Data> with a RedisLevel: the value on disk only "
            + "(promoted to memory)."),
        "Cache remote hit": Entry(color: "#d62728", summary: "Cache<Data> with a RedisLevel: the value only in "
            + "Redis (a disk miss, then GET; stored on disk and in memory)."),
        "Cache with RedisLevel": Entry(color: "#2ca02c", summary: "Invalidation: Cache<Data>.setValue in one "
            + "process until a Cache<Data> in another process has dropped its memory and disk copies."),
        "Redis up": Entry(color: "#7a7a7a", summary: "Floor of the server-down rows: the same calls with the "
            + "server answering."),
        "Redis stopped (SIGSTOP)": Entry(color: "#e377c2", summary: "The run's own redis-server stopped with "
            + "SIGSTOP: connections hang until the command timeout."),
        "Redis killed": Entry(color: "#8c564b", summary: "The run's own redis-server killed: connections are "
            + "refused."),
        // Hit ratio (the policies replayed on the shared traces)
        "KVCache MemoryCache (adaptive)": Entry(color: "#1f77b4", summary: "KVCache's MemoryCache with its default "
            + "policy (adaptive W-TinyLFU), replayed through its API (value(forKey:), setValue on a miss; "
            + "countLimit = the size)."),
        "LRU": Entry(color: "#7a7a7a", summary: "Reference: least recently used, a list moved on every hit."),
        "CLOCK": Entry(color: "#8c564b", summary: "Reference: second chance; a hit sets a bit, eviction clears "
            + "set bits and evicts the first clear one in FIFO order."),
        "SIEVE": Entry(color: "#2ca02c", summary: "Reference: SIEVE (NSDI '24); a FIFO whose hand clears visited "
            + "bits and evicts the first unvisited key, survivors stay in place."),
        "S3-FIFO": Entry(color: "#d62728", summary: "Reference: S3-FIFO (SOSP '23); small FIFO 10 %, main FIFO "
            + "90 % with 2-bit frequencies, a ghost FIFO as long as the main one."),
        "ARC": Entry(color: "#9467bd", summary: "Reference: ARC (FAST '03); recency and frequency LRU lists with "
            + "ghosts, the split adapted on ghost hits."),
        "2Q": Entry(color: "#ff7f0e", summary: "Reference: full 2Q (VLDB '94); A1in FIFO 25 %, A1out ghosts 50 %, "
            + "Am LRU for keys seen again."),
        "W-TinyLFU (1%)": Entry(color: "#17becf", summary: "Reference: static W-TinyLFU; a 1 % LRU window, a "
            + "99 % segmented LRU (20 % probation, 80 % protected), admission by a count-min sketch with aging."),
    ]

    /// Colours for names not listed (none should be): distinct from the ones above.
    private static let spare = ["#e6550d", "#31a354", "#756bb1", "#636363", "#c51b8a", "#3182bd"]

    static func color(_ strategy: String) -> String {
        if let entry = entries[strategy] { return entry.color }
        let hash = strategy.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) & 0xFFFF }
        return spare[hash % spare.count]
    }

    static func summary(_ strategy: String) -> String? { entries[strategy]?.summary }
}
