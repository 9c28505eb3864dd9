"""Holds one thread of another process inside a read(2) of a chosen file, as a hung network or FUSE file system
would: the thread stops at the entry of its next `read`/`pread64` of that file and stays there, while the
process's other threads run on. With ptrace (PTRACE_SEIZE and PTRACE_INTERRUPT stop that thread alone, with no
group stop; PTRACE_GET_SYSCALL_INFO reads the syscall, Linux 5.3+), so nothing in the program under test knows
or helps. A thread stopped at a syscall's entry holds none of the program's locks that a read path does not.

Only a process's parent (or root) may trace it; `Frozen.supported()` says whether this machine lets us.
"""
import ctypes
import errno
import os
import platform
import time

PTRACE_SYSCALL = 24
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_GET_SYSCALL_INFO = 0x420E
PTRACE_O_TRACESYSGOOD = 1
SYSCALL_INFO_ENTRY = 1
WALL = 0x40000000
# read and pread64 by architecture.
READS = {"x86_64": (0, 17), "aarch64": (63, 67)}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


class _SyscallInfo(ctypes.Structure):
    # struct ptrace_syscall_info: op, pad, arch, instruction and stack pointers, then (at entry) nr and args.
    _fields_ = [("op", ctypes.c_uint8), ("pad", ctypes.c_uint8 * 3), ("arch", ctypes.c_uint32),
                ("ip", ctypes.c_uint64), ("sp", ctypes.c_uint64), ("nr", ctypes.c_uint64), ("args", ctypes.c_uint64 * 6)]


def _ptrace(request, tid, addr=0, data=0):
    result = _libc.ptrace(request, tid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, f"ptrace({request:#x}, {tid}): {os.strerror(code)}")
    return result


def _wait(tid, flags=0):
    return os.waitpid(tid, flags | WALL)


def threads_named(pid, name):
    """The ids of `pid`'s threads whose name (`comm`) is `name`."""
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() == name:
                    found.append(int(tid))
        except OSError:
            pass
    return sorted(found)


def descriptors_of(pid, path):
    """The file descriptors of `pid` open on `path` (its real path)."""
    real = os.path.realpath(path)
    fds = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == real:
                fds.add(int(fd))
        except OSError:
            pass
    return fds


class Frozen:
    """One thread held at the entry of a read of `path`. `wait_for_exit` waits for the process to end with the
    thread still held (the kernel ends a traced thread with its process); `close` lets it go on."""

    def __init__(self, pid, tid, fd):
        self.pid, self.tid, self.fd = pid, tid, fd
        self.held = True

    @staticmethod
    def supported():
        """None if this machine can run the trick, else why not."""
        if platform.machine() not in READS:
            return f"no syscall numbers for {platform.machine()}"
        if not os.path.exists("/proc/self/task"):
            return "no /proc"
        return None

    @classmethod
    def in_read(cls, pid, tid, path, ceiling=300.0):
        """Seizes thread `tid` of `pid` and lets it run from syscall to syscall until it enters a read of `path`,
        then keeps it there. Raises if it does not within `ceiling` seconds (generous: it reads every few ms)."""
        reads = READS[platform.machine()]
        _ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD)
        deadline = time.monotonic() + ceiling
        try:
            _ptrace(PTRACE_INTERRUPT, tid)
            _wait(tid)
            while time.monotonic() < deadline:
                info = _SyscallInfo()
                _ptrace(PTRACE_GET_SYSCALL_INFO, tid, ctypes.sizeof(info), ctypes.addressof(info))
                # The descriptors are looked up only at a read's entry: each other stop then costs two
                # ptrace calls and a wait, and the thread runs at nearly its own pace until its first read.
                if info.op == SYSCALL_INFO_ENTRY and info.nr in reads and info.args[0] in descriptors_of(pid, path):
                    return cls(pid, tid, int(info.args[0]))
                # Not there yet: on to its next syscall stop (entry or exit), passing no signal.
                _ptrace(PTRACE_SYSCALL, tid)
                _, status = _wait(tid)
                if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                    raise RuntimeError(f"thread {tid} ended before it read {path}")
            raise RuntimeError(f"thread {tid} never read {path} within {ceiling} s")
        except BaseException:
            try:
                _ptrace(PTRACE_DETACH, tid)
            except OSError:
                pass
            raise

    def wait_for_exit(self, ceiling):
        """Waits (the process's exit is the event; the ceiling ends a run that never exits) until the held thread
        has ended with its process, without letting it run: True if it did."""
        deadline = time.monotonic() + ceiling
        while time.monotonic() < deadline:
            try:
                tid, status = _wait(self.tid, os.WNOHANG)
            except ChildProcessError:
                self.held = False
                return True
            if tid == self.tid and (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
                self.held = False
                return True
            time.sleep(0.05)
        return False

    def close(self):
        """Lets the thread go on (its read then runs as if the file system had woken up)."""
        if self.held:
            try:
                _ptrace(PTRACE_DETACH, self.tid)
            except OSError as error:
                if error.errno != errno.ESRCH:
                    raise
            self.held = False
