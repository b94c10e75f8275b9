"""Instructions per INSERT: the manifest's schema against the raw floor's.

Runs one variant: 5,000 inserts of 1 KB values in one transaction through
Python's sqlite3 (the system SQLite), 16 KiB pages, WAL. Count instructions
with callgrind and subtract the "baseline" variant (same bindings, no insert):

    PY=$(python3 -c 'import sys; print(sys.executable)')
    for v in baseline raw manifest manifest-without-access-index; do
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PY" \\
            Benchmarks/Scripts/insert_instructions.py $v DIR 2>&1 | grep refs
    done

(instructions of a variant - baseline) / 5,000 = instructions per insert.
"""
import os
import sqlite3
import sys

ROWS = 5000
MANIFEST = """
CREATE TABLE manifest (key TEXT PRIMARY KEY NOT NULL, filename TEXT, size INTEGER NOT NULL,
    modification_time REAL NOT NULL, last_access_time REAL NOT NULL, expiration_time REAL,
    lifetime REAL, extended_data BLOB, inline_data BLOB);
CREATE INDEX manifest_last_access_time ON manifest(last_access_time);
CREATE INDEX manifest_expiration_time ON manifest(expiration_time) WHERE expiration_time IS NOT NULL;
CREATE INDEX manifest_filename ON manifest(filename) WHERE filename IS NOT NULL;
"""
INSERT = """INSERT INTO manifest(key, filename, size, modification_time, last_access_time,
    expiration_time, lifetime, extended_data, inline_data)
    VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(key) DO NOTHING"""
RAW = "CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);"

VARIANTS = {
    "baseline": (RAW, "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8"),
    "raw": (RAW, "INSERT OR REPLACE INTO kv VALUES (?1, ?8)"),
    "manifest": (MANIFEST, INSERT),
    "manifest-without-access-index": (
        MANIFEST.replace("CREATE INDEX manifest_last_access_time ON manifest(last_access_time);", ""), INSERT),
}


def main():
    variant, directory = sys.argv[1], sys.argv[2]
    schema, sql = VARIANTS[variant]
    path = os.path.join(directory, "insert-instructions.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA page_size = 16384")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(schema)
    value = os.urandom(1024)
    # Every variant binds the same 8 parameters, so the baseline cancels Python's share.
    rows = [(f"key-{i}", None, 1024, 1.7e9 + i * 1e-6, None, None, None, value) for i in range(ROWS)]
    db.execute("BEGIN IMMEDIATE")
    for row in rows:
        db.execute(sql, row)
    db.execute("COMMIT")
    db.close()


if __name__ == "__main__":
    main()
