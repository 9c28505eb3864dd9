"""Instruction counts from valgrind's callgrind, for benches whose wall-time ratios are tight: counts repeat on
another machine where times do not, and need no hardware counters (this kind of VM exposes none to perf).
User space only: kernel work (system calls, copies into sockets) is not counted."""
import os
import re
import shutil
import subprocess
import tempfile


def available():
    return shutil.which("valgrind") is not None


def without_debug_info(binary, folder):
    """A copy of `binary` in `folder` without its debug sections (the same machine code): valgrind 3.19 gives up
    on the DWARF 5 that Swift 6.3 writes ("Possibly corrupted debuginfo file")."""
    copy = os.path.join(folder, os.path.basename(binary) + "-nodebug")
    n = 0
    while os.path.exists(copy):
        n += 1
        copy = os.path.join(folder, f"{os.path.basename(binary)}-nodebug-{n}")
    subprocess.run(["objcopy", "--strip-debug", binary, copy], check=True)
    return copy


def total(dump):
    """The instruction total of a callgrind output file."""
    with open(dump) as f:
        return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))


def count(argv):
    """Instructions `argv` executes to completion, every thread."""
    folder = tempfile.mkdtemp(prefix="flipbook-callgrind-")
    try:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return total(out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
