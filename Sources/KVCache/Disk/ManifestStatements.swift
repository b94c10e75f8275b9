/// The manifest statements of the hot paths (reads, group commits, trims),
/// prepared when the connection opens and held in stored properties, so a call
/// does not hash its SQL text to find them in the connection's statement cache.
/// They belong to the connection: `KVStorage` drops them when it closes it.
final class ManifestStatements {
    let begin: Statement
    let commit: Statement
    let selectValue: Statement
    let selectMetadata: Statement
    let insertNew: Statement
    let upsert: Statement
    let deleteKey: Statement
    let updateAccessTime: Statement
    let selectStats: Statement
    let addToStats: Statement

    init(_ database: Database) throws {
        begin = try database.statement("BEGIN IMMEDIATE")
        commit = try database.statement("COMMIT")
        selectValue = try database.statement(Manifest.selectValue)
        selectMetadata = try database.statement(Manifest.selectMetadata)
        insertNew = try database.statement(Manifest.insertNew)
        upsert = try database.statement(Manifest.upsert)
        deleteKey = try database.statement(Manifest.deleteKey)
        updateAccessTime = try database.statement(Manifest.updateAccessTime)
        selectStats = try database.statement(Manifest.selectStats)
        addToStats = try database.statement(Manifest.addToStats)
    }
}
