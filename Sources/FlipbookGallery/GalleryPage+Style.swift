extension GalleryPage {
    /// The page's CSS: a fixed-geometry grid (tiles are placed by the script), light and dark through
    /// `prefers-color-scheme`, a visible focus ring, and no motion for `prefers-reduced-motion`.
    static let style = #"""
        :root { color-scheme: light dark; --bg: #f6f6f4; --fg: #1b1b1b; --muted: #5c5c5c; --tile: #ffffff;
          --edge: #d9d9d6; --accent: #0b57d0; --box: #e8e8e4; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #121314; --fg: #ececec; --muted: #a9a9a9; --tile: #1d1f21; --edge: #313437;
            --accent: #8ab4f8; --box: #0a0a0b; }
        }
        * { box-sizing: border-box; }
        html, body { margin: 0; background: var(--bg); color: var(--fg);
          font: 14px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
        header { position: sticky; top: 0; z-index: 2; display: flex; gap: 1rem; align-items: baseline;
          justify-content: space-between; padding: .75rem 1rem; background: var(--bg);
          border-bottom: 1px solid var(--edge); }
        #crumbs a { color: var(--accent); text-decoration: none; font-weight: 600; }
        #crumbs a:hover, #crumbs a:focus-visible { text-decoration: underline; }
        #crumbs .sep { color: var(--muted); margin: 0 .35rem; }
        #count, #status { color: var(--muted); }
        main { padding: 12px 16px; }
        #grid { position: relative; }
        .tile { position: absolute; display: block; color: inherit; text-decoration: none; background: var(--tile);
          border: 1px solid var(--edge); border-radius: 8px; overflow: hidden; contain: strict; }
        .tile:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .tile:hover { border-color: var(--accent); }
        .media { position: relative; background: var(--box); }
        .media img, .media video { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: contain; }
        .media img { background-position: center; background-size: contain; background-repeat: no-repeat; }
        .media video { opacity: 0; transition: opacity .15s; }
        .media video.on { opacity: 1; }
        .folder .media::before { content: ""; position: absolute; left: 30%; right: 30%; top: 30%; bottom: 26%;
          border-radius: 4px 6px 6px 6px; background: var(--accent); opacity: .75; }
        .folder .media::after { content: ""; position: absolute; left: 30%; width: 16%; top: 25%; height: 8%;
          border-radius: 4px 4px 0 0; background: var(--accent); opacity: .75; }
        .folder img, .folder video, .image video { display: none; }
        .name { display: block; padding: 6px 8px 0; font-weight: 600; white-space: nowrap; overflow: hidden;
          text-overflow: ellipsis; }
        .meta { display: block; padding: 0 8px 6px; color: var(--muted); font-size: 12px; white-space: nowrap; }
        .badge { position: absolute; right: 6px; bottom: 6px; padding: 1px 6px; border-radius: 4px; font-size: 11px;
          background: rgba(0, 0, 0, .6); color: #fff; }
        #status { text-align: center; padding: 1rem; margin: 0; }
        @media (prefers-reduced-motion: reduce) { .media video { transition: none; } }
        """#
}
