import CSQLite
import Foundation
import Testing
@testable import KVCache

/// The one failure policy of a group commit, whichever connection ran it.
@Suite struct GroupCommitFailurePolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let code: Int32
        var systemErrno: Int32 = 0
        let removesEntries: Bool
        let spaceGivenBack: Bool
        let expected: GroupCommitter.Disposition
        /// Whether `giveSpaceBack` may be called at all.
        let asksForSpace: Bool
        var testDescription: String { "code \(code), errno \(systemErrno), removals \(removesEntries), space \(spaceGivenBack)" }
    }

    static let cases: [Case] = [
        Case(code: SQLITE_BUSY, removesEntries: true, spaceGivenBack: true, expected: .retry, asksForSpace: false),
        Case(code: SQLITE_LOCKED, removesEntries: false, spaceGivenBack: false, expected: .retry, asksForSpace: false),
        Case(code: SQLITE_CORRUPT, removesEntries: true, spaceGivenBack: true, expected: .retry, asksForSpace: false),
        Case(code: SQLITE_NOTADB, removesEntries: false, spaceGivenBack: false, expected: .retry, asksForSpace: false),
        Case(code: SQLITE_FULL, removesEntries: true, spaceGivenBack: true, expected: .keepRemovals, asksForSpace: true),
        Case(code: SQLITE_IOERR, systemErrno: ENOSPC, removesEntries: true, spaceGivenBack: true,
             expected: .keepRemovals, asksForSpace: true),
        Case(code: SQLITE_FULL, removesEntries: true, spaceGivenBack: false, expected: .drop, asksForSpace: true),
        Case(code: SQLITE_FULL, removesEntries: false, spaceGivenBack: true, expected: .drop, asksForSpace: false),
        Case(code: SQLITE_IOERR, systemErrno: EIO, removesEntries: true, spaceGivenBack: true, expected: .drop,
             asksForSpace: false),
        Case(code: SQLITE_TOOBIG, removesEntries: false, spaceGivenBack: false, expected: .drop, asksForSpace: false),
    ]

    @Test(arguments: cases) func disposition(_ test: Case) {
        let error = SQLiteError(extendedCode: test.code, message: "test", sql: nil, systemErrno: test.systemErrno)
        var asked = false
        let disposition = GroupCommitter.disposition(of: error, removesEntries: test.removesEntries) {
            asked = true
            return test.spaceGivenBack
        }
        #expect(disposition == test.expected)
        #expect(asked == test.asksForSpace)
    }

    @Test func anErrorThatIsNotSQLitesDropsTheWrites() {
        struct Other: Error {}
        #expect(GroupCommitter.disposition(of: Other(), removesEntries: true) { true } == .drop)
    }
}
