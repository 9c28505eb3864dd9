/// GIF timing rules, in one place.
package enum GIFTiming {
    /// How long a frame is shown, in milliseconds, for a raw delay in centiseconds: browsers (Chrome,
    /// Firefox, Safari) play a delay of 0 or 1 cs as 100 ms, because such files were made for engines
    /// that ignored tiny delays; everything else is delay x 10 ms.
    package static func displayedMilliseconds(centiseconds: Int) -> Int {
        centiseconds <= 1 ? 100 : centiseconds * 10
    }
}
