"""The files that commands write and resume from (game logs, tables, checkpoints, recorded
searches): one check of an output path, one way to open a log, one bounded reader of its
lines, and one conversion of a failed write into a clear error. Below every layer: any
module may import it, and it imports nothing of lbs_pz.

Outputs and logs are regular files (or do not exist yet): a folder, a FIFO, a device
(/dev/zero, /dev/full, /dev/urandom) or a socket is refused from `os.stat` alone, before
anything opens it, so that a path cannot hang a command (a FIFO waits for a reader) or
feed it an endless stream. A log is read a line at a time, each line at most
`MAX_LINE_BYTES` long, so that memory stays bounded whatever the file holds.

    check_output_path("results.json", "--json")     # ValueError: one line naming both
    with output_errors("results.json", "--json"):   # OSError (disk full) -> ValueError
        write_json(...)
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import BinaryIO, Iterator, Tuple

try:                    # POSIX: a log is locked while a run appends to it
    import fcntl
except ImportError:     # pragma: no cover (Windows): no lock
    fcntl = None

MAX_LINE_BYTES = 2**20      # the longest line a game log may hold (a logged game is ~1 KB)

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(path: str, mode: int, option: str,
                 hint: str = "give the path of a file (new or existing)") -> ValueError:
    if stat.S_ISDIR(mode):
        return ValueError(f"{option} {path!r} is a folder; expected a file path")
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return ValueError(f"{option} {path!r} is {kind}, not a regular file; {hint}")


def check_output_path(path: str, option: str) -> None:
    """ValueError (one line naming `option` and `path`) unless a regular file can be
    written at `path`: either one exists there and may be appended to, or nothing exists
    there and a file can be created in its (existing) folder. Anything else that exists
    there (folder, FIFO, device, socket) is refused from its `os.stat`, without opening
    it. A file created to try is removed; an existing one is left as it was. Commands
    check every output before a long run, so that a typo cannot lose the run at its end."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise ValueError(f"{option} {path!r}: cannot use it ({err.strerror})") from None
    if mode is not None:
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode, option)
        try:
            os.close(open_regular(path, os.O_WRONLY | os.O_APPEND, option))
        except OSError as err:
            raise ValueError(f"{option} {path!r}: cannot write there ({err.strerror})") from None
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{option} {path!r}: folder {folder!r} does not exist")
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as err:
        raise ValueError(f"{option} {path!r}: cannot write there ({err.strerror})") from None
    os.remove(path)


def check_input_path(path: str, option: str, what: str = "file") -> None:
    """ValueError (one line naming `option` and `path`) unless `path` is an existing
    regular file: a folder, FIFO, device or socket is refused from its `os.stat`, without
    opening it (so that it can neither block nor stream forever)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ValueError(f"{option} {path!r}: no such {what}") from None
    except OSError as err:
        raise ValueError(f"{option} {path!r}: cannot use it ({err.strerror})") from None
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode, option, "give the path of a regular file")


def open_regular(path: str, flags: int, option: str) -> int:
    """`os.open(path, flags)` (a file descriptor) if `path` is a regular file once open;
    ValueError (naming `option`) otherwise. O_NONBLOCK is added so that a FIFO swapped in
    after a check cannot block the open; a regular file ignores it."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _not_regular(path, mode, option)
    return fd


def open_locked(path: str, option: str):
    """The file at `path` opened to read and append in binary (created if missing), locked
    (`flock`) for this run: ValueError naming `option` if it is not a regular file, or if
    another run holds its lock (two runs appending to one log would both play every game).
    The lock ends when the file is closed."""
    try:
        fd = open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, option)
    except OSError as err:
        raise ValueError(f"{option} {path!r}: cannot write it ({err.strerror})") from None
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ValueError(f"{option} {path!r} is in use: another run holds its lock "
                                 f"and is writing to it; wait for that run to end, or give "
                                 f"this one another file") from None
            raise ValueError(f"{option} {path!r}: cannot lock it ({err.strerror})") from None
    return os.fdopen(fd, "r+b")


def read_lines(f: BinaryIO, path: str, option: str) -> Iterator[Tuple[int, int, bytes]]:
    """(line number from 1, offset of its first byte, its bytes with the newline, if any)
    of each line of the binary file `f` from its current position; ValueError naming `path`,
    the line and `option` for a line longer than MAX_LINE_BYTES (read no further than
    that bound: memory stays bounded)."""
    number, offset = 0, f.tell()
    while True:
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise ValueError(f"{path}, line {number}: longer than {MAX_LINE_BYTES:,} bytes "
                             f"({option}); not a line this program writes: remove the line, "
                             f"or give another file")
        yield number, offset, line
        offset += len(line)


@contextlib.contextmanager
def output_errors(path: str, option: str,
                  note: str = "the results above were printed but not saved there"):
    """An OSError in this block (a full disk, a lost mount, a file-size limit) becomes one
    ValueError naming `option` and `path`, and `note` (what became of the results): the
    command ends with that line, not a traceback, after whatever it printed before."""
    try:
        yield
    except OSError as err:
        reason = err.strerror or os.strerror(err.errno or errno.EIO)
        raise ValueError(f"{option} {path!r}: writing it failed ({reason}); {note}") from None
