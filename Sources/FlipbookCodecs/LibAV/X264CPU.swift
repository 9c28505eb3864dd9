import CFFmpeg

/// The instruction sets libx264 may use for our encodes: everything it detects but AVX-512.
///
/// Why: libx264 0.164's AVX-512 code for MB-tree (the lookahead's propagation of each macroblock's cost
/// into the frames it predicts) makes the output depend on things outside the encode. With B-frames it
/// read heap memory x264 allocated and never wrote (a conversion's bytes changed with `MALLOC_PERTURB_`).
/// Without B-frames a video preview's bytes still changed with the encodes running beside it in the same
/// process: of twelve previews of one clip made at once, 2-4 differed from a fresh process's in every run
/// (`DeterminismTests`), and two `flipbook serve` replicas under 128 concurrent requests disagreed on
/// `/preview/clip.mp4?size=160` in 4 of 10 runs; one preview at a time, `MALLOC_PERTURB_` or a preload
/// that fills every `malloc` with noise never changed a byte. Masking AVX-512 (`asm=AVX2`) or turning
/// MB-tree off (`mbtree=0`, 44-49% more bytes) each removed it (0 of 16 replica runs, every test run).
/// valgrind cannot show the cause: it does not emulate AVX-512, so x264 picks its AVX2 code under it.
///
/// The remedy is per encoder (an x264 option), so the host process and its other libav users keep every
/// instruction set. AVX2 code gives the same bytes x264 makes on any AVX2 machine without AVX-512.
package enum X264CPU {
    /// The `asm` value for x264-params: "AVX2" where libavutil saw AVX-512 (every AVX-512 CPU has AVX2,
    /// FMA3, LZCNT and BMI1/2, which x264's "AVX2" set names); nil elsewhere, leaving x264's own choice.
    package static func asmWithoutAVX512() throws -> String? {
        let av = try LibAV.api()
        return av.av_get_cpu_flags() & fb_av_cpu_flag_avx512() != 0 ? "AVX2" : nil
    }
}
