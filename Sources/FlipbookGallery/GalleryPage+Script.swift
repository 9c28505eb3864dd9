extension GalleryPage {
    /// The page's script. Bounded by design, whatever the folder's size:
    /// - Listing pages (`/list`, signed URLs from the server) are fetched as the user nears the end of what
    ///   is loaded; items are plain objects, tiles are DOM.
    /// - Only tiles within a screen of the viewport exist; tiles that leave that window go back to a small
    ///   pool and are reused, so the document stays a few hundred elements for 2,000 entries.
    /// - A video gets its source when its tile comes within 200 px of the viewport (IntersectionObserver
    ///   `nearObserver`) and loses it (`removeAttribute('src')`, then `load()`, which frees the decoder and
    ///   buffers) once it is 800 px out (`farObserver`) or its tile is recycled. At most `maxVideos` hold a
    ///   source; past that the one farthest from the middle of the viewport gives its source up.
    /// - At most 4 videos load at once (nearest first), so a few slow, cold previews never take all of the
    ///   browser's 6 connections from posters and listing pages.
    /// - prefers-reduced-motion: nothing plays by itself; a preview plays while hovered or focused.
    /// - Each poster <img> is painted with its item's ThumbHash (decoded here to a 32 px image, once per
    ///   hash) as its background from the moment its tile is assigned until the poster has loaded, as
    ///   LazyImage shows a placeholder: a tile never shows an empty box.
    static let script = #"""
        "use strict";
        (() => {
          const config = JSON.parse(document.getElementById("flipbook-config").textContent);
          const MAX_VIDEOS = config.maxVideos;
          // Videos fetching at once: HTTP/1.1 browsers open 6 connections per host, so at most 4 go to
          // videos that are still loading (a cold preview may take a while to make) and posters and
          // listing pages always get through.
          const MAX_LOADING = 4;
          const MIN_TILE = 200, GAP = 12, TEXT_H = 46;
          const grid = document.getElementById("grid");
          const statusLine = document.getElementById("status");
          const countLine = document.getElementById("count");
          const motion = window.matchMedia("(prefers-reduced-motion: reduce)");

          const items = [];          // every entry loaded so far (data, not DOM)
          let nextUrl = config.list; // signed by the server
          let loading = false, done = false;
          const rendered = new Map(); // item index -> tile
          const pool = [];            // spare tiles, out of the document
          const near = new Set();     // tiles within 200 px of the viewport
          const attached = new Set(); // tiles whose video holds a source
          const active = new Set();   // hovered or focused tiles
          const loadingVideos = new Set(); // attached tiles whose video has not started playing yet
          let cols = 1, colW = MIN_TILE, mediaH = 150, rowH = 200;

          // Breadcrumbs (signed links from the server).
          const crumbs = document.getElementById("crumbs");
          config.crumbs.forEach((c, i) => {
            if (i > 0) { const s = document.createElement("span"); s.className = "sep"; s.textContent = "/"; s.setAttribute("aria-hidden", "true"); crumbs.append(s); }
            const a = document.createElement("a"); a.href = c.link; a.textContent = c.name;
            if (i === config.crumbs.length - 1) a.setAttribute("aria-current", "page");
            crumbs.append(a);
          });

          // ThumbHash (Evan Wallace's format) to a small image, as a data: URL; one canvas, one URL per hash.
          const placeholders = new Map();
          const canvas = document.createElement("canvas");
          function thumbHashURL(text) {
            if (placeholders.has(text)) return placeholders.get(text);
            let url = "";
            try {
              const hash = Uint8Array.from(atob(text), c => c.charCodeAt(0));
              const { PI, min, max, cos, round } = Math;
              const h24 = hash[0] | (hash[1] << 8) | (hash[2] << 16), h16 = hash[3] | (hash[4] << 8);
              const lDC = (h24 & 63) / 63, pDC = ((h24 >> 6) & 63) / 31.5 - 1, qDC = ((h24 >> 12) & 63) / 31.5 - 1;
              const lScale = ((h24 >> 18) & 31) / 31, alpha = h24 >> 23;
              const pScale = ((h16 >> 3) & 63) / 63, qScale = ((h16 >> 9) & 63) / 63, landscape = h16 >> 15;
              const lMax = alpha ? 5 : 7, lCount = h16 & 7;
              const lx = max(3, landscape ? lMax : lCount), ly = max(3, landscape ? lCount : lMax);
              const aDC = alpha ? (hash[5] & 15) / 15 : 1, aScale = (hash[5] >> 4) / 15;
              let at = alpha ? 6 : 5, k = 0;
              const channel = (nx, ny, scale) => {
                const ac = [];
                for (let cy = 0; cy < ny; cy++)
                  for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++, k++)
                    ac.push((((hash[at + (k >> 1)] >> ((k & 1) << 2)) & 15) / 7.5 - 1) * scale);
                return ac;
              };
              const lAC = channel(lx, ly, lScale), pAC = channel(3, 3, pScale * 1.25), qAC = channel(3, 3, qScale * 1.25);
              const aAC = alpha ? channel(5, 5, aScale) : [];
              const ratio = (landscape ? lMax : lCount) / (landscape ? lCount : lMax);
              const w = round(ratio > 1 ? 32 : 32 * ratio), h = round(ratio > 1 ? 32 / ratio : 32);
              canvas.width = w; canvas.height = h;
              const context = canvas.getContext("2d"), image = context.createImageData(w, h), px = image.data;
              const fx = [], fy = [];
              for (let y = 0, i = 0; y < h; y++) {
                for (let x = 0; x < w; x++, i += 4) {
                  let l = lDC, p = pDC, q = qDC, a = aDC;
                  for (let c = 0, n = max(lx, alpha ? 5 : 3); c < n; c++) fx[c] = cos(PI / w * (x + 0.5) * c);
                  for (let c = 0, n = max(ly, alpha ? 5 : 3); c < n; c++) fy[c] = cos(PI / h * (y + 0.5) * c);
                  for (let cy = 0, j = 0; cy < ly; cy++)
                    for (let cx = cy ? 0 : 1, f = fy[cy] * 2; cx * ly < lx * (ly - cy); cx++, j++) l += lAC[j] * fx[cx] * f;
                  for (let cy = 0, j = 0; cy < 3; cy++)
                    for (let cx = cy ? 0 : 1, f = fy[cy] * 2; cx < 3 - cy; cx++, j++) { p += pAC[j] * fx[cx] * f; q += qAC[j] * fx[cx] * f; }
                  for (let cy = 0, j = 0; alpha && cy < 5; cy++)
                    for (let cx = cy ? 0 : 1, f = fy[cy] * 2; cx < 5 - cy; cx++, j++) a += aAC[j] * fx[cx] * f;
                  const b = l - 2 / 3 * p, r = (3 * l - b + q) / 2, g = r - q;
                  px[i] = max(0, 255 * min(1, r)); px[i + 1] = max(0, 255 * min(1, g));
                  px[i + 2] = max(0, 255 * min(1, b)); px[i + 3] = max(0, 255 * min(1, a));
                }
              }
              context.putImageData(image, 0, 0);
              url = canvas.toDataURL("image/png");
            } catch (e) { url = ""; }
            if (placeholders.size > 2000) placeholders.clear();
            placeholders.set(text, url);
            return url;
          }

          function describe(item) {
            const parts = [];
            if (item.kind === "folder") return "Folder";
            if (item.kind === "animation" && item.frames) parts.push(item.frames + " frames");
            if (item.durationMs != null && item.kind !== "image") parts.push((item.durationMs / 1000).toFixed(1) + " s");
            if (item.kind === "image" && item.width && item.height) parts.push(item.width + "×" + item.height);
            return parts.join(" · ");
          }

          function layout() {
            const width = grid.clientWidth || window.innerWidth;
            cols = Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
            colW = (width - GAP * (cols - 1)) / cols;
            mediaH = Math.round(colW * 0.75);
            rowH = mediaH + TEXT_H + GAP;
            grid.style.height = Math.max(0, Math.ceil(items.length / cols) * rowH - GAP) + "px";
          }

          // Tiles: one <a> holding poster, video, name and meta; reused through the pool.
          function makeTile() {
            const el = document.createElement("a");
            el.className = "tile";
            el.setAttribute("role", "listitem");
            const media = document.createElement("div"); media.className = "media";
            const img = document.createElement("img"); img.loading = "lazy"; img.decoding = "async";
            const video = document.createElement("video");
            video.muted = true; video.loop = true; video.playsInline = true; video.preload = "none";
            video.setAttribute("muted", ""); video.setAttribute("loop", ""); video.setAttribute("playsinline", "");
            video.setAttribute("preload", "none"); video.setAttribute("aria-hidden", "true"); video.tabIndex = -1;
            const name = document.createElement("span"); name.className = "name";
            const meta = document.createElement("span"); meta.className = "meta";
            media.append(img, video); el.append(media, name, meta);
            const tile = { el, media, img, video, name, meta, index: -1, item: null, timer: 0 };
            const settled = () => { if (loadingVideos.delete(tile)) schedule(); };
            video.addEventListener("playing", () => { video.classList.add("on"); settled(); });
            // The poster is in: the placeholder behind it goes (a transparent poster shows the tile, not the hash).
            img.addEventListener("load", () => { img.style.backgroundImage = ""; });
            video.addEventListener("error", settled);
            el.addEventListener("mouseenter", () => { active.add(tile); schedule(); });
            el.addEventListener("mouseleave", () => { active.delete(tile); schedule(); });
            el.addEventListener("focus", () => { active.add(tile); schedule(); });
            el.addEventListener("blur", () => { active.delete(tile); schedule(); });
            return tile;
          }

          function assign(tile, index) {
            const item = items[index];
            tile.index = index; tile.item = item;
            tile.el.className = "tile " + item.kind;
            tile.el.href = item.link;
            tile.el.setAttribute("aria-label", item.name + (item.kind === "folder" ? ", folder" : ", " + item.kind + (describe(item) ? ", " + describe(item) : "")));
            tile.name.textContent = item.name;
            tile.meta.textContent = describe(item);
            tile.media.style.height = mediaH + "px";
            if (item.poster) {
              // width/height give the aspect ratio before the poster arrives: nothing shifts.
              const w = item.width || 4, h = item.height || 3, s = Math.min(1, 320 / Math.max(w, h));
              tile.img.width = Math.max(1, Math.round(w * s)); tile.img.height = Math.max(1, Math.round(h * s));
              tile.img.alt = (item.kind === "image" ? "" : "Poster of ") + item.name;
              const url = item.thumbhash ? thumbHashURL(item.thumbhash) : "";
              tile.img.style.backgroundImage = url ? 'url("' + url + '")' : "";
              tile.img.src = item.poster;
            } else {
              tile.img.removeAttribute("src"); tile.img.alt = ""; tile.img.style.backgroundImage = "";
            }
            place(tile);
            if (item.video) { nearObserver.observe(tile.el); farObserver.observe(tile.el); }
          }

          function place(tile) {
            const row = Math.floor(tile.index / cols), col = tile.index % cols;
            const s = tile.el.style;
            s.top = row * rowH + "px"; s.left = col * (colW + GAP) + "px";
            s.width = colW + "px"; s.height = (mediaH + TEXT_H) + "px";
            tile.media.style.height = mediaH + "px";
          }

          function recycle(tile) {
            detach(tile);
            nearObserver.unobserve(tile.el); farObserver.unobserve(tile.el);
            near.delete(tile); active.delete(tile);
            tile.img.removeAttribute("src");
            tile.el.remove();
            rendered.delete(tile.index);
            tile.index = -1; tile.item = null;
            if (pool.length < 64) pool.push(tile);
          }

          // Videos.
          function attach(tile) {
            if (attached.has(tile) || !tile.item || !tile.item.video) return;
            attached.add(tile);
            loadingVideos.add(tile);
            // A video that never starts (a one-frame clip, a stalled server) gives its loading slot back.
            clearTimeout(tile.timer);
            tile.timer = setTimeout(() => { if (loadingVideos.delete(tile)) schedule(); }, 10000);
            tile.video.src = tile.item.video;
            const p = tile.video.play();
            if (p) p.catch(() => {});
          }

          function detach(tile) {
            if (!attached.has(tile)) return;
            attached.delete(tile);
            loadingVideos.delete(tile);
            clearTimeout(tile.timer);
            tile.video.pause();
            tile.video.classList.remove("on");
            tile.video.removeAttribute("src");
            tile.video.load(); // lets go of the decoder and the buffered bytes
          }

          function distance(tile) {
            const top = grid.getBoundingClientRect().top + Math.floor(tile.index / cols) * rowH;
            return Math.abs(top + rowH / 2 - window.innerHeight / 2);
          }

          function schedule() {
            const wanted = motion.matches ? [...active] : [...new Set([...active, ...near])];
            wanted.sort((a, b) => distance(a) - distance(b));
            const keep = new Set(wanted.slice(0, MAX_VIDEOS));
            if (motion.matches) {
              for (const t of [...attached]) if (!keep.has(t)) t.video.pause();
            }
            for (const t of keep) {
              if (attached.has(t)) { if (t.video.paused) { const p = t.video.play(); if (p) p.catch(() => {}); } continue; }
              if (loadingVideos.size >= MAX_LOADING && !active.has(t)) continue;
              if (attached.size >= MAX_VIDEOS) {
                let farthest = null, far = -1;
                for (const a of attached) if (!keep.has(a)) { const d = distance(a); if (d > far) { far = d; farthest = a; } }
                if (!farthest) continue;
                detach(farthest);
              }
              attach(t);
            }
          }

          const nearObserver = new IntersectionObserver((entries) => {
            for (const e of entries) {
              const tile = tileOf(e.target);
              if (!tile) continue;
              if (e.isIntersecting) near.add(tile); else near.delete(tile);
            }
            schedule();
          }, { rootMargin: "200px 0px" });

          const farObserver = new IntersectionObserver((entries) => {
            for (const e of entries) {
              const tile = tileOf(e.target);
              if (tile && !e.isIntersecting) detach(tile); // well out of view: give the source up
            }
          }, { rootMargin: "800px 0px" });

          const byElement = new WeakMap();
          function tileOf(el) { return byElement.get(el); }

          // Rendering: only rows within a screen of the viewport exist.
          function render() {
            if (!items.length) return;
            const gridTop = grid.getBoundingClientRect().top;
            const view = window.innerHeight;
            const firstRow = Math.max(0, Math.floor((-gridTop - view) / rowH));
            const lastRow = Math.max(0, Math.floor((-gridTop + 2 * view) / rowH));
            const first = firstRow * cols, last = Math.min(items.length - 1, (lastRow + 1) * cols - 1);
            for (const [index, tile] of [...rendered]) if (index < first || index > last) recycle(tile);
            for (let i = first; i <= last; i++) {
              if (rendered.has(i)) continue;
              const tile = pool.pop() || makeTile();
              byElement.set(tile.el, tile);
              rendered.set(i, tile);
              assign(tile, i);
              // Document order follows item order, so Tab walks the grid in reading order.
              let before = null;
              for (let j = i + 1; j <= last; j++) { const t = rendered.get(j); if (t && t.el.isConnected) { before = t.el; break; } }
              grid.insertBefore(tile.el, before);
            }
            if (!done && !loading && last + cols * 4 >= items.length - 1) loadMore();
          }

          async function loadMore() {
            if (loading || done || !nextUrl) return;
            loading = true;
            statusLine.textContent = "Loading…";
            try {
              const response = await fetch(nextUrl, { credentials: "same-origin" });
              if (!response.ok) throw new Error(response.status + " " + response.statusText);
              const page = await response.json();
              for (const item of page.items) items.push(item);
              nextUrl = page.nextUrl;
              done = !nextUrl;
              layout();
              countLine.textContent = items.length + (done ? "" : "+") + " items";
              statusLine.textContent = done ? (items.length ? "" : "Nothing to show here.") : "Loading…";
            } catch (error) {
              statusLine.textContent = "Could not load this folder (" + error.message + ").";
              done = true;
            } finally {
              loading = false;
            }
            for (const tile of rendered.values()) place(tile);
            render();
          }

          let frame = 0;
          function onScroll() {
            if (frame) return;
            frame = requestAnimationFrame(() => { frame = 0; render(); schedule(); });
          }
          window.addEventListener("scroll", onScroll, { passive: true });
          window.addEventListener("resize", () => { layout(); for (const t of rendered.values()) place(t); onScroll(); });
          motion.addEventListener("change", schedule);
          layout();
          loadMore();
        })();
        """#
}
