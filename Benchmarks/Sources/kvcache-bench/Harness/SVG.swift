import Foundation

/// Building blocks for the report's charts: plain SVG, no scripts, readable
/// when the page is printed or the SVG is opened on its own.
enum SVG {
    static func open(width: Double, height: Double, title: String) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
        viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" \
        font-size="12" fill="#222"><title>\(escape(title))</title>
        <rect width="100%" height="100%" fill="#fff"/>

        """
    }

    static let close = "</svg>\n"

    static func text(_ x: Double, _ y: Double, _ content: String, anchor: String = "start",
                     size: Double? = nil, weight: String? = nil, fill: String? = nil) -> String {
        var attributes = "x=\"\(f(x))\" y=\"\(f(y))\""
        if anchor != "start" { attributes += " text-anchor=\"\(anchor)\"" }
        if let size { attributes += " font-size=\"\(f(size))\"" }
        if let weight { attributes += " font-weight=\"\(weight)\"" }
        if let fill { attributes += " fill=\"\(fill)\"" }
        return "<text \(attributes)>\(escape(content))</text>\n"
    }

    static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String = "#222",
                     width: Double = 1, dash: String? = nil) -> String {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\" "
            + "stroke-width=\"\(f(width))\"" + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>\n"
    }

    static func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String,
                     stroke: String? = nil) -> String {
        "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(max(0, width)))\" height=\"\(f(max(0, height)))\" "
            + "fill=\"\(fill)\"" + (stroke.map { " stroke=\"\($0)\"" } ?? "") + "/>\n"
    }

    static func circle(_ x: Double, _ y: Double, radius: Double, fill: String, stroke: String? = nil) -> String {
        "<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"\(f(radius))\" fill=\"\(fill)\""
            + (stroke.map { " stroke=\"\($0)\" stroke-width=\"1.5\"" } ?? "") + "/>\n"
    }

    static func polyline(_ points: [(Double, Double)], stroke: String, width: Double = 2,
                         dash: String? = nil) -> String {
        let list = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
        return "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"\(f(width))\" "
            + "stroke-linejoin=\"round\"" + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>\n"
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A logarithmic axis mapping values in `low...high` onto `start...end` pixels.
struct LogScale {
    var low: Double
    var high: Double
    var start: Double
    var end: Double

    /// Widens the range of `values` out to the nearest 1-2-5 steps.
    init(covering values: [Double], start: Double, end: Double) {
        let positive = values.filter { $0 > 0 && $0.isFinite }
        let minimum = positive.min() ?? 1, maximum = positive.max() ?? 10
        let low = Self.steps(around: minimum).last { $0 <= minimum } ?? minimum
        var high = Self.steps(around: maximum).first { $0 >= maximum } ?? maximum
        if high <= low { high = low * 10 }
        self.init(low: low, high: high, start: start, end: end)
    }

    /// 1, 2, 5 times the powers of ten from a decade below `value` to a decade above.
    private static func steps(around value: Double) -> [Double] {
        let decade = pow(10, floor(log10(value)))
        return [0.1, 1, 10].flatMap { scale in [1.0, 2, 5].map { $0 * decade * scale } }
    }

    init(low: Double, high: Double, start: Double, end: Double) {
        self.low = low
        self.high = high
        self.start = start
        self.end = end
    }

    func position(_ value: Double) -> Double {
        let clamped = min(max(value, low), high)
        return start + (end - start) * (log10(clamped) - log10(low)) / (log10(high) - log10(low))
    }

    /// 1-2-5 ticks inside the range; only decades when the range is wide.
    var ticks: [Double] {
        let decades = log10(high) - log10(low)
        let steps: [Double] = decades > 3.5 ? [1] : decades > 1.5 ? [1, 3] : [1, 2, 5]
        var ticks: [Double] = []
        var decade = pow(10, floor(log10(low)))
        while decade <= high * 1.0001 {
            for step in steps {
                let tick = decade * step
                if tick >= low * 0.9999 && tick <= high * 1.0001 { ticks.append(tick) }
            }
            decade *= 10
        }
        return ticks
    }
}
