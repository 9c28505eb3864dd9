#!/usr/bin/env python3
"""Inserts a minimal EXIF APP1 segment (IFD0 with one Orientation tag) after a JPEG's SOI marker.

Used by make-samples.sh and the tests to make files with a known orientation; written from the EXIF 2.3
and TIFF 6.0 layouts (big-endian "MM" TIFF header, one IFD entry: tag 0x0112, SHORT, count 1)."""
import struct
import sys


def exif_segment(orientation: int) -> bytes:
    tiff = b"MM" + struct.pack(">HI", 42, 8)                     # header, IFD0 at offset 8
    tiff += struct.pack(">H", 1)                                  # one entry
    tiff += struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)  # Orientation, SHORT, 1 value
    tiff += struct.pack(">I", 0)                                  # no IFD1
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def main() -> None:
    path, orientation = sys.argv[1], int(sys.argv[2])
    data = open(path, "rb").read()
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    open(path, "wb").write(data[:2] + exif_segment(orientation) + data[2:])


if __name__ == "__main__":
    main()
