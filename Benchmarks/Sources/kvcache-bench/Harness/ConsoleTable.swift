import TextTable

/// The console tables, laid out by ordo-one's TextTable: the first column (or
/// the first few) left-aligned, the figures right-aligned, two spaces between
/// columns, a rule under the header, every line indented by two. No newline
/// after the last line.
enum ConsoleTable {
    static func render(header: [String], rows: [[String]], leftAligned: Int = 1) -> String {
        let table = TextTable<[String]> { cells in
            header.indices.map { index in
                Column(title: header[index], value: index < cells.count ? cells[index] : "",
                       align: index < leftAligned ? .left : .right)
            }
        }
        guard var text = table.string(for: rows, style: Indented.self) else {
            return "  " + header.joined(separator: "  ")
        }
        while text.last == "\n" { text.removeLast() }
        return text
    }

    /// TextTable's simple style with wider gaps and an indent.
    enum Indented: TextTableStyle {
        static func prepare(_ string: String, for column: Column) -> String { Simple.prepare(string, for: column) }
        static func escape(_ string: String) -> String { string }
        static func begin(_ table: inout String, index: Int, columns: [Column]) {}
        static func end(_ table: inout String, index: Int, columns: [Column]) {}

        static func header(_ table: inout String, index: Int, columns: [Column]) {
            table += line(columns.map { $0.headerString(for: self) })
            table += "  " + columns.map { $0.repeated("-") }.joined(separator: "--") + "\n"
        }

        static func row(_ table: inout String, index: Int, columns: [Column]) {
            table += line(columns.map { $0.string(for: self) })
        }

        private static func line(_ cells: [String]) -> String {
            var text = "  " + cells.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text + "\n"
        }
    }
}
