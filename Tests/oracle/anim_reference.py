#!/usr/bin/python3
"""Independent reference for animated WebP and APNG (and GIF): Pillow (Debian's python3-pil, which composites
WebP with libwebp's own WebPAnimDecoder and APNG with its own reader over zlib), or headless Chromium's
ImageDecoder (WebCodecs) over the DevTools protocol. Never Flipbook's code.

  anim_reference.py frames SRC OUT [--chromium]
      Every frame as the reference composites it, RGBA straight alpha, at full canvas size. Writes OUT as one
      JSON line {"format", "width", "height", "frames", "loop", "durations"} (stored durations in ms, as the
      file says them; Chromium: as ImageDecoder reports them) followed by N raw RGBA frames.
      Exit status 3 if the reference cannot decode SRC.

  anim_reference.py ssim VIDEO SRC [--chromium] [--background RRGGBB]
      Mean SSIM (ffmpeg's ssim filter, "All": Y 4/6, Cb and Cr 1/6 each, in yuv420p) of VIDEO against SRC's
      frames composited over the background (default white), sampled at the same instants: the middle of
      each reference frame's display interval, with the browsers' timing rule (a stored duration of 10 ms or
      less plays as 100 ms). The video frame shown at an instant is the last one whose pts is not after it.
      The video is cropped to the reference's size when padded to even dimensions. Prints the mean and the
      worst frame's SSIM: "MEAN MIN". Pictures under 16 pixels a side are compared on luma alone (ffmpeg's
      filter needs 8x8 chroma planes).
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from PIL import Image


def pillow_frames(src):
    im = Image.open(src)
    frames, durations = [], []
    # Pillow shows an APNG's default image (an IDAT before any fcTL) as frame 0; browsers, and the APNG
    # specification, leave it out of the animation: so does this reference.
    first = 1 if im.info.get("default_image") else 0
    for i in range(first, getattr(im, "n_frames", 1)):
        im.seek(i)
        im.load()  # Pillow fills in a WebP frame's duration when it decodes it
        durations.append(int(im.info.get("duration", 0) or 0))
        frames.append(im.convert("RGBA").tobytes())
    meta = {"format": im.format, "width": im.width, "height": im.height, "frames": len(frames),
            "loop": im.info.get("loop"), "durations": durations}
    return meta, frames


CHROMIUM_SCRIPT = """(async () => {
  const bytes = Uint8Array.from(atob(window.__src), c => c.charCodeAt(0));
  const dec = new ImageDecoder({data: bytes, type: window.__type});
  await dec.tracks.ready; await dec.completed;
  const track = dec.tracks.selectedTrack;
  const n = track.frameCount;
  const out = []; let w = 0, h = 0;
  for (let i = 0; i < n; i++) {
    const f = (await dec.decode({frameIndex: i})).image;
    w = f.displayWidth; h = f.displayHeight;
    const c = new OffscreenCanvas(w, h); const g = c.getContext('2d');
    g.drawImage(f, 0, 0);
    const px = g.getImageData(0, 0, w, h).data;
    let s = '';
    for (let k = 0; k < px.length; k += 32768) s += String.fromCharCode.apply(null, px.subarray(k, k + 32768));
    out.push({d: f.duration === null ? 0 : f.duration / 1000, px: btoa(s)});
    f.close();
  }
  return JSON.stringify({w, h, loop: track.repetitionCount, frames: out});
})()"""


def chromium_frames(src):
    """Chromium's own decoders (libwebp's demuxer, its APNG reader) through WebCodecs' ImageDecoder.
    getImageData gives straight alpha (un-premultiplied by the canvas), so transparent areas lose colour
    precision as in any browser; frames are compared over a background, where that does not matter."""
    import websocket  # the venv's websocket-client (Makefile PIP_PACKAGES)
    kind = {"WEBP": "image/webp", "PNG": "image/png", "GIF": "image/gif"}[Image.open(src).format]
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    profile = tempfile.mkdtemp(prefix="anim-ref-")
    blank = os.path.join(profile, "blank.html")  # file:// is a secure context, which ImageDecoder needs
    open(blank, "w").write("<!doctype html><title>anim</title>")
    proc = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                             f"--remote-debugging-port={port}", "--remote-allow-origins=*", "file://" + blank],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        page = None
        for _ in range(200):
            try:
                tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
                # Wait for the file:// page itself: the first about:blank is not a secure context.
                page = [t for t in tabs if t.get("type") == "page" and t.get("url", "").startswith("file://")][0]
                break
            except Exception:
                time.sleep(0.1)
        ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=600, max_size=None)
        # ImageDecoder exists only once the secure file:// document has loaded; ask until it does.
        for attempt in range(100):
            ws.send(json.dumps({"id": 100 + attempt, "method": "Runtime.evaluate",
                                "params": {"expression": "location.protocol + typeof ImageDecoder", "returnByValue": True}}))
            while True:
                reply = json.loads(ws.recv())
                if reply.get("id") == 100 + attempt:
                    break
            if reply.get("result", {}).get("result", {}).get("value") == "file:function":
                break
            time.sleep(0.1)
        data = base64.b64encode(open(src, "rb").read()).decode()
        ws.send(json.dumps({"id": 1, "method": "Runtime.evaluate",
                            "params": {"expression": f"window.__src='{data}'; window.__type='{kind}'"}}))
        ws.send(json.dumps({"id": 2, "method": "Runtime.evaluate",
                            "params": {"expression": CHROMIUM_SCRIPT, "awaitPromise": True, "returnByValue": True}}))
        while True:
            msg = json.loads(ws.recv())
            if msg.get("id") == 2:
                break
        ws.close()
        result = msg["result"]
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description", "ImageDecoder failed"))
        value = json.loads(result["result"]["value"])
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    frames = [base64.b64decode(f["px"]) for f in value["frames"]]
    loop = value["loop"]
    # ImageDecoder's repetitionCount: Infinity (JSON null) for forever, else the repetitions after the first
    # play. Back to the file's own number: GIF's NETSCAPE count is repetitions, WebP's and APNG's are plays.
    if loop is not None and kind != "image/gif":
        loop += 1
    meta = {"format": kind, "width": value["w"], "height": value["h"], "frames": len(frames),
            "loop": 0 if loop is None else loop, "durations": [int(round(f["d"])) for f in value["frames"]]}
    return meta, frames


def load(src, chromium):
    try:
        return chromium_frames(src) if chromium else pillow_frames(src)
    except ImportError:
        raise
    except Exception as error:  # the reference cannot read it: say so with a distinct status
        print(f"reference: {error}", file=sys.stderr)
        sys.exit(3)


def displayed(ms):
    return 100 if ms <= 10 else ms


def flatten(rgba, width, height, background):
    base = Image.new("RGBA", (width, height), background + (255,))
    frame = Image.frombytes("RGBA", (width, height), rgba)
    return Image.alpha_composite(base, frame).convert("RGB").tobytes()


def video_frames(video):
    """(pts in ms, width, height, raw rgb24 frames) of VIDEO as ffmpeg decodes it, every frame, no rate change."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height:frame=pts_time", "-of", "json", video],
                           capture_output=True, text=True, check=True).stdout
    info = json.loads(probe)
    w, h = info["streams"][0]["width"], info["streams"][0]["height"]
    pts = [round(float(f["pts_time"]) * 1000) for f in info["frames"]]
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-vsync", "passthrough", "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    size = w * h * 3
    frames = [raw[k * size:(k + 1) * size] for k in range(len(raw) // size)]
    return pts[:len(frames)], w, h, frames


def crop(rgb, width, height, to_width, to_height):
    if (width, height) == (to_width, to_height):
        return rgb
    return b"".join(rgb[y * width * 3:(y * width + to_width) * 3] for y in range(to_height))


def ssim(video, src, chromium, background):
    meta, frames = load(src, chromium)
    w, h = meta["width"], meta["height"]
    pts, vw, vh, vframes = video_frames(video)
    if not vframes:
        sys.exit("no video frames")
    ref, sampled = [], []
    start = 0
    for rgba, stored in zip(frames, meta["durations"]):
        d = displayed(stored)
        instant = start + d / 2
        k = max([i for i, t in enumerate(pts) if t <= instant] or [0])
        ref.append(flatten(rgba, w, h, background))
        sampled.append(crop(vframes[k], vw, vh, w, h))
        start += d
    work = tempfile.mkdtemp(prefix="anim-ssim-")
    try:
        a, b = os.path.join(work, "video.rgb"), os.path.join(work, "ref.rgb")
        open(a, "wb").write(b"".join(sampled))
        open(b, "wb").write(b"".join(ref))
        raw = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", "1"]
        out = subprocess.run(["ffmpeg", "-hide_banner", *raw, "-i", a, *raw, "-i", b, "-lavfi",
                              "[0]format=yuv420p[v];[1]format=yuv420p[r];[v][r]ssim=stats_file=" + os.path.join(work, "s.log"),
                              "-f", "null", "-"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(out.stderr)
        # ffmpeg's ssim needs 8 samples a side per plane: with chroma planes under that (a picture under 16
        # pixels a side) it reports inf for them, so such pictures are compared on luma alone.
        key = "All:" if w >= 16 and h >= 16 else "Y:"
        per = [float(line.split(key)[1].split()[0]) for line in open(os.path.join(work, "s.log")) if key in line]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{sum(per) / len(per):.5f} {min(per):.5f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    use_chromium = "--chromium" in args
    bg = (255, 255, 255)
    if "--background" in args:
        v = int(args[args.index("--background") + 1], 16)
        bg = (v >> 16 & 255, v >> 8 & 255, v & 255)
    if args[0] == "frames":
        meta, frames = load(args[1], use_chromium)
        with open(args[2], "wb") as f:
            f.write((json.dumps(meta) + "\n").encode())
            for frame in frames:
                f.write(frame)
    elif args[0] == "ssim":
        ssim(args[1], args[2], use_chromium, bg)
    else:
        sys.exit(f"unknown command {args[0]}")
