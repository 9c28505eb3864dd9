#!/usr/bin/python3
"""What a GIF looks like, by decoders that are not Flipbook's: headless Chromium (the one users see) and Pillow.

  gif_reference.py GIF [--ref browser|pillow]
      Prints one JSON line {"width", "height", "durations": [ms...], "frames": N} and exits 0, or exits 3 when the
      reference cannot decode the GIF. (Used by the corpus test: a GIF Chromium decodes must not be rejected.)

As a module: `Reference.load(path, "browser")` -> Reference(width, height, frames, durations), each frame an
(H, W, 3) uint8 array composited over white, each duration in ms with the browser rule (<= 10 ms plays as
100 ms), and `Reference.at(t_ms)`, the frame shown at an instant. `Browser` keeps one Chromium for many GIFs.

Browser: Debian's `chromium --headless`, driven over the DevTools protocol (websocket-client from the venv). The
page decodes with WebCodecs' ImageDecoder (Chromium's own GIF decoder: its disposal, clipping and transparency
rules) and draws each frame over white on an OffscreenCanvas; frames come back one at a time as base64 RGB.
Pillow: Image.seek through the frames, RGBA composited over white, the same delay rule.
"""
import base64
import bisect
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

# Decodes the GIF in window.__bytes and keeps the frames (over white, as RGB) in window.__frames.
DECODE_JS = """(async () => {
  const bytes = Uint8Array.from(atob(window.__b64), c => c.charCodeAt(0));
  window.__b64 = null;
  const decoder = new ImageDecoder({data: bytes, type: 'image/gif'});
  await decoder.tracks.ready;
  await decoder.completed;
  const count = decoder.tracks.selectedTrack.frameCount;
  const frames = [];
  for (let i = 0; i < count; i++) {
    const image = (await decoder.decode({frameIndex: i, completeFramesOnly: true})).image;
    const w = image.displayWidth, h = image.displayHeight;
    const canvas = new OffscreenCanvas(w, h);
    const g = canvas.getContext('2d');
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, w, h);
    g.drawImage(image, 0, 0);
    const rgba = g.getImageData(0, 0, w, h).data;
    const rgb = new Uint8Array(w * h * 3);
    for (let p = 0, q = 0; p < rgba.length; p += 4, q += 3) { rgb[q] = rgba[p]; rgb[q + 1] = rgba[p + 1]; rgb[q + 2] = rgba[p + 2]; }
    frames.push({w, h, ms: (image.duration || 0) / 1000, rgb});
    image.close();
  }
  decoder.close();
  window.__frames = frames;
  return JSON.stringify(frames.map(f => [f.w, f.h, f.ms]));
})()"""

FRAME_JS = """(() => {
  const rgb = window.__frames[%d].rgb;
  let s = '';
  for (let k = 0; k < rgb.length; k += 32768) s += String.fromCharCode.apply(null, rgb.subarray(k, k + 32768));
  return btoa(s);
})()"""


def browser_duration(ms):
    """Chromium (like every current browser) plays a delay of 0 or 1 centisecond as 100 ms."""
    return 100 if ms is None or ms <= 10 else int(round(ms))


class ReferenceError(Exception):
    pass


class Browser:
    """One headless Chromium, reused for many GIFs. Close it (or use `with`)."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="flipbook-chromium-")
        page = os.path.join(self.profile, "index.html")  # a file:// page is a secure context: ImageDecoder needs one
        with open(page, "w") as f:
            f.write("<!doctype html><title>reference</title>")
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        self.proc = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--mute-audio",
             f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "--remote-allow-origins=*", "file://" + page],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import websocket  # from the venv (PyPI websocket-client)
        deadline = time.time() + 60
        target = None
        while time.time() < deadline and target is None:
            if self.proc.poll() is not None:
                raise ReferenceError("chromium exited at start")
            try:
                port = int(open(port_file).read().split()[0])
                tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5))
                target = next(t for t in tabs if t.get("type") == "page")
            except (OSError, ValueError, StopIteration, IndexError):
                time.sleep(0.1)
        if target is None:
            self.close()
            raise ReferenceError("chromium did not open its DevTools port within 60 s")
        # skip_utf8_validation: websocket-client checks UTF-8 in pure Python, byte by byte, which took minutes
        # for a large GIF's frames (the JSON is ASCII; base64 inside it).
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=600, max_size=None,
                                              skip_utf8_validation=True)
        self.next_id = 0
        # The first page may still be about:blank: values set there vanish when index.html replaces it.
        while self.evaluate("document.readyState === 'complete' && document.title") != "reference":
            if time.time() > deadline:
                self.close()
                raise ReferenceError("chromium did not load its page within 60 s")
            time.sleep(0.05)

    def evaluate(self, expression, await_promise=False):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": "Runtime.evaluate",
                                 "params": {"expression": expression, "awaitPromise": await_promise, "returnByValue": True}}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                break
        result = message.get("result", {})
        if "exceptionDetails" in result:
            raise ReferenceError("chromium: " + result["exceptionDetails"].get("exception", {}).get("description", "error")[:300])
        return result["result"].get("value")

    def decode(self, path):
        with open(path, "rb") as f:
            b64 = base64.b64encode(f.read()).decode()
        self.evaluate(f"window.__b64 = '{b64}'")
        meta = json.loads(self.evaluate(DECODE_JS, await_promise=True))
        if not meta:
            raise ReferenceError("chromium decoded no frames")
        frames, durations = [], []
        for i, (w, h, ms) in enumerate(meta):
            rgb = base64.b64decode(self.evaluate(FRAME_JS % i))
            frames.append(np.frombuffer(rgb, np.uint8).reshape(h, w, 3))
            durations.append(browser_duration(ms))
        self.evaluate("window.__frames = null")
        return frames, durations

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def pillow_frames(path):
    from PIL import Image
    try:
        im = Image.open(path)
        frames, durations = [], []
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i)
            rgba = im.convert("RGBA")
            canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
            canvas.alpha_composite(rgba)
            frames.append(np.asarray(canvas.convert("RGB")))
            durations.append(browser_duration(im.info.get("duration")))
    except Exception as error:
        raise ReferenceError(f"pillow: {error}")
    return frames, durations


class Reference:
    def __init__(self, frames, durations):
        self.frames = frames
        self.durations = durations
        self.height, self.width = frames[0].shape[:2]
        self.starts = list(np.cumsum([0] + durations[:-1]))
        self.total_ms = int(sum(durations))

    @staticmethod
    def load(path, kind="browser", browser=None):
        if kind == "pillow":
            return Reference(*pillow_frames(path))
        if browser is not None:
            return Reference(*browser.decode(path))
        for attempt in range(3):  # a headless browser now and then fails to start on a loaded machine
            try:
                with Browser() as b:
                    return Reference(*b.decode(path))
            except ReferenceError as error:
                if "decoded no frames" in str(error) or "chromium:" in str(error) or attempt == 2:
                    raise
                time.sleep(1)

    @staticmethod
    def cached(path, kind, browser, folder, make_browser=None):
        """`load`, kept in `folder` as .npz under the GIF's SHA-256 and the reference kind (for sweeps that
        score the same GIFs many times; a changed GIF is a new key). A failure to decode is not cached.
        `make_browser`, when given, opens a browser only if the reference must be made."""
        import hashlib
        import shutil
        with open(path, "rb") as f:
            key = hashlib.sha256(f.read()).hexdigest()[:32]
        # What renders the reference is part of the key: Chromium's binary for "browser", Pillow's version
        # otherwise; an upgraded renderer never reuses frames an earlier run kept.
        if kind == "browser":
            binary = os.path.realpath(shutil.which("chromium") or "/usr/bin/chromium")
            st = os.stat(binary) if os.path.exists(binary) else None
            renderer = f"{st.st_size}-{st.st_mtime_ns}" if st else "none"
        else:
            import PIL
            renderer = PIL.__version__
        key += "-" + hashlib.sha256(renderer.encode()).hexdigest()[:8]
        cache = os.path.join(folder, f"{key}-{kind}.npz")
        if os.path.exists(cache):
            data = np.load(cache)
            return Reference([data[f"f{i}"] for i in range(len(data["durations"]))], [int(d) for d in data["durations"]])
        if kind == "browser" and browser is None and make_browser is not None:
            browser = make_browser()
        ref = Reference.load(path, kind, browser)
        os.makedirs(folder, exist_ok=True)
        np.savez(cache + ".tmp.npz", durations=np.array(ref.durations), **{f"f{i}": f for i, f in enumerate(ref.frames)})
        os.replace(cache + ".tmp.npz", cache)
        return ref

    def index_at(self, t_ms):
        """The frame on screen at t_ms (from the start of the first loop)."""
        return max(0, bisect.bisect_right(self.starts, t_ms) - 1)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    kind = "pillow" if "--ref" in sys.argv and sys.argv[sys.argv.index("--ref") + 1] == "pillow" else "browser"
    args = [a for a in args if a not in ("browser", "pillow")]
    try:
        ref = Reference.load(args[0], kind)
    except ReferenceError as error:
        print(error, file=sys.stderr)
        sys.exit(3)
    print(json.dumps({"width": ref.width, "height": ref.height, "frames": len(ref.frames), "durations": ref.durations}))
