#!/usr/bin/env python3
"""Prints a table of savings from a `flipbook convert --report` JSON-lines file."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(f"{'file':<40} {'status':<10} {'GIF':>10} {'video':>10} {'ratio':>7} {'frames':>7} {'encoded':>8} {'ms':>7}")
total_in = total_out = 0
for r in rows:
    name = r["input"].split("/")[-1]
    gif, out = r.get("inputBytes") or 0, r.get("outputBytes") or 0
    if r["status"] in ("converted", "kept-gif", "kept-original"):
        total_in += gif
        total_out += out
    ratio = f"{gif / out:.1f}x" if out else "-"
    print(f"{name:<40} {r['status']:<10} {gif:>10} {out:>10} {ratio:>7} {r.get('frames') or '-':>7} "
          f"{r.get('encodedFrames') or '-':>8} {r['ms']:>7}")
if total_out:
    print(f"{'total':<40} {'':<10} {total_in:>10} {total_out:>10} {total_in / total_out:>6.1f}x")
