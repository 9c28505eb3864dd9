/// Builds a palette from a histogram. Variance-based median cut: start with one box holding every
/// occupied cell; repeatedly take the box with the largest squared error (population x spread), sort
/// its cells along its widest axis and cut where the two halves' summed squared error is smallest.
/// The boxes' weighted means are then refined by a few rounds of k-means (Lloyd) over the cells, which
/// moves colours towards where the pixels actually are, as pngquant's Voronoi iterations do.
package enum ColorQuantizer {
    /// An occupied histogram cell: its pixels' mean colour and their number. (Plain Doubles rather than
    /// SIMD3: the debug build the tests run is 20 times slower with SIMD types.)
    private struct Cell {
        package var r: Double, g: Double, b: Double
        package var weight: Double
        package func channel(_ axis: Int) -> Double { axis == 0 ? r : (axis == 1 ? g : b) }
    }

    /// Weighted sums over a run of cells, from which mean and squared error follow.
    private struct Moments {
        package var weight = 0.0, r = 0.0, g = 0.0, b = 0.0, squares = 0.0
        package mutating func add(_ c: Cell) {
            weight += c.weight
            r += c.weight * c.r; g += c.weight * c.g; b += c.weight * c.b
            squares += c.weight * (c.r * c.r + c.g * c.g + c.b * c.b)
        }
        package static func - (x: Moments, y: Moments) -> Moments {
            Moments(weight: x.weight - y.weight, r: x.r - y.r, g: x.g - y.g, b: x.b - y.b, squares: x.squares - y.squares)
        }
        /// Sum of weight x squared distance to the mean.
        package var error: Double { weight > 0 ? max(0, squares - (r * r + g * g + b * b) / weight) : 0 }
        package var mean: (r: Double, g: Double, b: Double) { (r / weight, g / weight, b / weight) }
    }

    private struct Box {
        package var range: Range<Int>
        package var error: Double
    }

    /// At most `maxColors` colours (fewer if the histogram has fewer occupied cells).
    package static func palette(from histogram: ColorHistogram, maxColors: Int, refinements: Int = 4) -> [RGBColor] {
        var cells: [Cell] = []
        for i in 0..<ColorHistogram.cellCount where histogram.counts[i] > 0 {
            let n = Double(histogram.counts[i])
            cells.append(Cell(r: Double(histogram.sums[3 * i]) / n, g: Double(histogram.sums[3 * i + 1]) / n,
                              b: Double(histogram.sums[3 * i + 2]) / n, weight: n))
        }
        guard !cells.isEmpty, maxColors > 0 else { return [] }

        var boxes = [Box(range: 0..<cells.count, error: moments(cells[...]).error)]
        while boxes.count < maxColors {
            guard let worst = boxes.indices.max(by: { boxes[$0].error < boxes[$1].error }), boxes[worst].error > 0 else { break }
            let (low, high) = split(&cells, boxes[worst].range)
            boxes[worst] = Box(range: low, error: moments(cells[low]).error)
            boxes.append(Box(range: high, error: moments(cells[high]).error))
        }
        var centres = boxes.map { moments(cells[$0.range]).mean }
        for _ in 0..<refinements { centres = refine(centres, cells) }
        return centres.map { c in
            func byte(_ v: Double) -> UInt8 { UInt8(min(255, max(0, v.rounded()))) }
            return RGBColor(r: byte(c.r), g: byte(c.g), b: byte(c.b))
        }
    }

    private static func moments(_ cells: ArraySlice<Cell>) -> Moments {
        var m = Moments()
        for c in cells { m.add(c) }
        return m
    }

    /// Cuts a box (at least two cells with some spread) in two along its widest axis, at the point that
    /// leaves the least squared error in the halves.
    private static func split(_ cells: inout [Cell], _ range: Range<Int>) -> (Range<Int>, Range<Int>) {
        let m = moments(cells[range])
        let (mr, mg, mb) = m.mean
        var spread = (0.0, 0.0, 0.0)
        for c in cells[range] {
            spread.0 += c.weight * (c.r - mr) * (c.r - mr)
            spread.1 += c.weight * (c.g - mg) * (c.g - mg)
            spread.2 += c.weight * (c.b - mb) * (c.b - mb)
        }
        let axis = spread.0 >= spread.1 && spread.0 >= spread.2 ? 0 : (spread.1 >= spread.2 ? 1 : 2)
        cells[range].sort { $0.channel(axis) < $1.channel(axis) }

        // Prefix moments give each half's error in O(1).
        var prefix = [Moments()]
        prefix.reserveCapacity(range.count + 1)
        for c in cells[range] {
            var next = prefix[prefix.count - 1]
            next.add(c)
            prefix.append(next)
        }
        let n = range.count, total = prefix[n]
        var best = 1, bestError = Double.infinity
        for k in 1..<n {
            let e = prefix[k].error + (total - prefix[k]).error
            if e < bestError {
                bestError = e
                best = k
            }
        }
        let cut = range.lowerBound + best
        return (range.lowerBound..<cut, cut..<range.upperBound)
    }

    /// One k-means round: each cell to its nearest centre, each centre to its cells' weighted mean (a
    /// centre that wins no cell stays where it is).
    private static func refine(_ centres: [(r: Double, g: Double, b: Double)], _ cells: [Cell]) -> [(r: Double, g: Double, b: Double)] {
        var sums = [Moments](repeating: Moments(), count: centres.count)
        centres.withUnsafeBufferPointer { centres in
            for c in cells {
                var best = 0, bestDistance = Double.infinity
                for k in 0..<centres.count {
                    let dr = c.r - centres[k].r, dg = c.g - centres[k].g, db = c.b - centres[k].b
                    let distance = dr * dr + dg * dg + db * db
                    if distance < bestDistance {
                        bestDistance = distance
                        best = k
                    }
                }
                sums[best].add(c)
            }
        }
        return centres.indices.map { sums[$0].weight > 0 ? sums[$0].mean : centres[$0] }
    }
}
