"""The files that commands write and resume from (game logs, tables, checkpoints, recorded
searches): one check of an output path, one way to open a log, one bounded reader of its
lines (and of its JSON lines, with the repair of a cut last line), one way to append a
line, one way to write a file whole or not at all (`replaced`, `write_atomic`), and one
conversion of a failed write into a clear error. Below every layer: any
module may import it, and it imports nothing of lbs_pz.

Outputs and logs are regular files (or do not exist yet): a folder, a FIFO, a device
(/dev/zero, /dev/full, /dev/urandom) or a socket is refused from `os.stat` alone, before
anything opens it, so that a path cannot hang a command (a FIFO waits for a reader) or
feed it an endless stream. A log is read a line at a time, each line at most
`MAX_LINE_BYTES` long, so that memory stays bounded whatever the file holds.

A log holds whole lines only: a line is appended with unbuffered writes (`append_line`),
cut back if a write fails part way, so that nothing is left in a buffer to fail again
when the file is closed; a last line cut by a killed run is dropped with a warning and, on
resume, removed (`json_lines`), so that the lines appended after it stay valid.

A log is read the same plain or gzipped (`read_lines` and `json_lines` tell them by their
first bytes, `open_log` opens either by path): a finished run's log is kept in the
repository gzipped (`python benchmarks/house.py keep results/X.jsonl`, then `git add` the
file it names; `gzip_log` does it), and its live log (X.jsonl) stays out of git. A file
once committed is never rewritten: the first keep writes X.jsonl.gz, a later one (the run
went on, or played stale games again) only the lines not kept yet, as the next segment
X.jsonl.2.gz, X.jsonl.3.gz, ..., and a reader of X.jsonl.gz reads its segments after it,
as one log (`log_segments`). A run that continues such a log makes its live log from the
committed copy when it has none (`seed_log`); a report reads whichever is there
(`readable_log`: the live log, else the committed one). A gzipped log is read only: a run
appends to the plain one. What the repository does not ship
(a run's live logs, checkpoints, figures) is made again by the command that made it.

    check_output_path("results.json", "--json")     # ValueError: one line naming both
    with output_errors("results.json", "--json"):   # OSError (disk full) -> ValueError
        write_json(...)
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import json
import os
import re
import stat
import warnings
import zlib
from typing import Any, BinaryIO, Iterator, List, Optional, Tuple, Union

try:                    # POSIX: a log is locked while a run appends to it
    import fcntl
except ImportError:     # pragma: no cover (Windows): no lock
    fcntl = None  # type: ignore[assignment]  # tested before use

MAX_LINE_BYTES = 2**20      # the longest line a game log may hold (a logged game is ~1 KB)
READ_BYTES = 2**16          # what `read_lines` reads at a time
GZIP_MAGIC = b"\x1f\x8b"     # the first bytes of a gzip file
COMMITTED = ".gz"           # a finished log as the repository keeps it: X.jsonl -> X.jsonl.gz
MAX_SEGMENTS = 1000         # the most files one committed log is kept in (X.jsonl.K.gz)

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


def make_folder(path: str, option: str, why: str = "") -> None:
    """The folder `path`, made if missing (its parents too): ValueError (one line naming
    `option` and `path`) if something other than a folder is there (`why`: what the
    command keeps in the folder, said in the message) or it cannot be made or written in."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise ValueError(f"{option} {path!r}: not a folder{f' ({why})' if why else ''}; "
                         f"give the path of a folder (new or existing)")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise ValueError(f"{option} {path!r}: cannot make the folder "
                         f"({err.strerror or type(err).__name__})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path!r}: cannot write in that folder")


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


def open_locked(path: str, option: str) -> BinaryIO:
    """The file at `path` opened to read and append in binary, unbuffered (created if
    missing), locked (`flock`) for this run: ValueError naming `option` if it is not a
    regular file, or if another run holds its lock (two runs appending to one log would
    both play every game). The lock ends when the file is closed; closing it writes
    nothing (no buffer), so it cannot fail over an error a write raised."""
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
    return os.fdopen(fd, "r+b", buffering=0)


def is_gzipped(f: BinaryIO) -> bool:
    """Whether the binary file `f` holds gzip data from its current position (its first
    bytes are gzip's magic number); `f` is left where it was."""
    where = f.tell()
    head = f.read(len(GZIP_MAGIC))
    f.seek(where)
    return head == GZIP_MAGIC


def log_segments(path: str) -> List[str]:
    """The files the committed log `path` (X.jsonl.gz) is kept in, in order: `path`, then
    X.jsonl.2.gz, X.jsonl.3.gz, ... while they exist (each holds the lines kept after the
    files before it). A path not ending in ".gz" is one file. ValueError if a segment is
    missing before a later one (a partial checkout would otherwise lose games unseen)."""
    if not path.endswith(COMMITTED):
        return [path]
    base = path[:-len(COMMITTED)]
    found = [path]
    while os.path.lexists(f"{base}.{len(found) + 1}{COMMITTED}"):
        if len(found) == MAX_SEGMENTS:
            raise ValueError(f"{path!r}: kept in more than {MAX_SEGMENTS} files "
                             f"({base}.K{COMMITTED}); merge them into one")
        found.append(f"{base}.{len(found) + 1}{COMMITTED}")
    folder, name = os.path.split(base)
    pattern = re.compile(re.escape(name) + r"\.([0-9]+)" + re.escape(COMMITTED) + "$")
    try:
        names = os.listdir(folder or ".")
    except OSError:         # a folder it may read files in but not list: no gap to see
        names = []
    later = sorted(int(m.group(1)) for m in map(pattern.match, names)
                   if m and int(m.group(1)) > len(found))
    if later:
        raise ValueError(f"{path!r}: its segment {base}.{len(found) + 1}{COMMITTED} is "
                         f"missing but {base}.{later[0]}{COMMITTED} is there; restore it")
    return found


class _Chained:
    """The bytes of the open binary file `first` (the file at `paths[0]`, from its
    current position), then of each later file of `paths` whole, read like one file
    (`read`, `tell`, `seek` back to the start, `close`); the later files are opened when
    reached. `current` is the path being read (what an error names)."""

    def __init__(self, first: BinaryIO, paths: List[str], option: str):
        self._files, self._paths, self._option = [first], paths, option
        self._start, self._index, self._pos = first.tell(), 0, 0

    @property
    def current(self) -> str:
        return self._paths[min(self._index, len(self._paths) - 1)]

    def _file(self) -> BinaryIO:
        if self._index == len(self._files):
            self._files.append(_open_bytes(self._paths[self._index], self._option,
                                           "log segment"))
            if not is_gzipped(self._files[-1]):     # an empty or plain file lost its lines
                raise ValueError(f"{self._option} {self.current!r}: not a gzip file (a "
                                 f"segment of {self._paths[0]!r}); fetch it again")
        return self._files[self._index]

    def read(self, size: int = -1) -> bytes:
        parts = []
        while self._index < len(self._paths) and size != 0:
            chunk = self._file().read(size)
            if not chunk:
                self._index += 1
                continue
            parts.append(chunk)
            self._pos += len(chunk)
            size = size - len(chunk) if size > 0 else size
        return b"".join(parts)

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if (offset, whence) != (0, os.SEEK_SET):
            raise OSError("a log kept in segments is read from its start only")
        self._files[0].seek(self._start)
        for f in self._files[1:]:
            f.seek(0)
        self._index = self._pos = 0
        return 0

    def close(self) -> None:
        for f in self._files:
            f.close()


class _Gunzipped:
    """The decompressed bytes of the gzipped binary file `f`, read like a file (`read`,
    `tell`, `seek`, `close`: closing closes `f`); a damaged or cut gzip stream is a ValueError
    naming `path` (or the segment being read, `_Chained`) and `option`, not a zlib or EOF
    error."""

    def __init__(self, f: Union[BinaryIO, _Chained], path: str, option: str):
        self._raw, self._path, self._option = f, path, option
        self._stream = gzip.GzipFile(fileobj=f, mode="rb")

    def read(self, size: int = -1) -> bytes:
        try:
            return self._stream.read(size)
        except (OSError, EOFError, zlib.error) as err:
            where = getattr(self._raw, "current", self._path)
            raise ValueError(f"{self._option} {where!r}: not a whole gzip file "
                             f"({str(err)[:80] or type(err).__name__}); fetch it again, or "
                             f"give the plain log") from None

    def tell(self) -> int:
        return self._stream.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        try:
            return self._stream.seek(offset, whence)
        except (OSError, EOFError, zlib.error) as err:
            raise ValueError(f"{self._option} {self._path!r}: not a whole gzip file "
                             f"({str(err)[:80] or type(err).__name__})") from None

    def close(self) -> None:
        self._stream.close()
        self._raw.close()

    def __enter__(self) -> _Gunzipped:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def log_stream(f: BinaryIO, path: str, option: str) -> Union[BinaryIO, _Gunzipped]:
    """The lines of the binary file `f` (the file at `path`) from its current position,
    plain or gzipped: `f` itself, or, if it holds gzip data there (`is_gzipped`), a reader
    of its decompressed bytes followed by those of its later segments (`log_segments`),
    read a bounded size at a time, like `f`. The one place that tells the two."""
    if not is_gzipped(f):
        return f
    segments = log_segments(path)
    return _Gunzipped(f if len(segments) == 1 else _Chained(f, segments, option), path, option)


def open_log(path: str, option: str, what: str = "log") -> Union[BinaryIO, _Gunzipped]:
    """The log at `path` opened to read, binary, plain or gzipped alike (`log_stream`):
    close it, or use it in a `with` block. ValueError naming `option` if `path` is not a
    regular file (a FIFO or a device is refused unopened) or cannot be opened."""
    return log_stream(_open_bytes(path, option, what), path, option)


def _open_bytes(path: str, option: str, what: str = "log") -> BinaryIO:
    """The regular file at `path` opened to read its bytes, unbuffered (`open_log`'s
    checks and errors)."""
    check_input_path(path, option, what)
    try:
        fd = open_regular(path, os.O_RDONLY, option)
    except OSError as err:
        raise ValueError(f"{option} {path!r}: cannot read it ({err.strerror})") from None
    return os.fdopen(fd, "rb", buffering=0)


def readable_log(path: str) -> str:
    """The file a report of the log `path` reads: `path` if something is there (the live
    log, which a run appends to), else its committed copy `path` + ".gz" if that exists
    (a finished log as the repository keeps it), else `path` (the reader says it is
    missing)."""
    if path and not os.path.lexists(path) and os.path.lexists(path + COMMITTED):
        return path + COMMITTED
    return path


def seed_log(path: str, option: str) -> bool:
    """Make the live log `path` a run continues from its committed copy `path` + ".gz"
    when `path` does not exist yet and the copy does (a fresh clone continuing a run whose
    log the repository keeps gzipped): True if it did. Written whole or not at all
    (`replaced`), read a bounded size at a time; ValueError naming `option` for a damaged
    copy (the live log is then not made)."""
    if not path or os.path.lexists(path) or not os.path.lexists(path + COMMITTED):
        return False
    with open_log(path + COMMITTED, option) as src, replaced(path, option) as tmp:
        with open(tmp, "wb") as dst:
            for chunk in iter(lambda: src.read(READ_BYTES), b""):
                dst.write(chunk)
    return True


def gzip_log(path: str, option: str = "--out") -> Optional[str]:
    """Keep the finished log `path` for the repository, gzipped (level 9, no name or time
    in a header, so the same lines give the same bytes), never rewriting a file kept
    before: the first time, every line as `path` + ".gz"; later, the lines of `path` that
    its kept files (`log_segments`) do not hold, in their order, as the next segment
    (X.jsonl.2.gz, ...). Each line ends with a newline, so that segments join as lines.
    The file written (whole or not at all), or None when every line is kept already; the
    plain log is left as it is. Memory: a 16-byte digest per kept line."""
    committed = path + COMMITTED
    kept = set()
    if os.path.lexists(committed):
        with _open_bytes(committed, option) as f:
            kept = {_digest(raw) for _, _, raw in read_lines(f, committed, option)}
        out = f"{path}.{len(log_segments(committed)) + 1}{COMMITTED}"
    else:
        out = committed
    wrote = False
    with _open_bytes(path, option) as src, replaced(out, option) as tmp:
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                   compresslevel=9, mtime=0) as dst:
            for _, _, line in read_lines(src, path, option):
                digest = _digest(line)
                if line.strip() and digest not in kept:
                    kept.add(digest)
                    dst.write(line if line.endswith(b"\n") else line + b"\n")
                    wrote = True
        if not wrote:
            os.remove(tmp)
    return out if wrote else None


def _digest(line: bytes) -> bytes:
    """A line's identity for `gzip_log`, newline aside."""
    return hashlib.blake2b(line.rstrip(b"\n"), digest_size=16).digest()


def read_lines(f: BinaryIO, path: str, option: str) -> Iterator[Tuple[int, int, bytes]]:
    """(line number from 1, offset of its first byte, its bytes with the newline, if any)
    of each line of the binary file `f` (buffered or not) from its current position, read
    READ_BYTES at a time; ValueError naming `path`, the line and `option` for a line
    longer than MAX_LINE_BYTES (read no further than that bound: memory stays bounded).
    A gzipped file is read decompressed (`log_stream`; offsets are then of its
    decompressed bytes); a damaged gzip stream is a ValueError naming `path`."""
    src = log_stream(f, path, option)
    number, offset = 0, src.tell()
    buf, start, scanned, ended = bytearray(), 0, 0, False   # buf[start:]: not yet yielded
    while True:
        cut = buf.find(b"\n", scanned)
        if cut < 0 and not ended and len(buf) - start <= MAX_LINE_BYTES:
            del buf[:start]
            start, scanned = 0, len(buf)
            chunk = src.read(READ_BYTES)
            ended = not chunk
            buf += chunk or b""
            continue
        end = cut + 1 if cut >= 0 else len(buf)
        if end - start > MAX_LINE_BYTES:
            raise ValueError(f"{path}, line {number + 1}: longer than {MAX_LINE_BYTES:,} "
                             f"bytes ({option}); not a line this program writes: remove the "
                             f"line, or give another file")
        if end == start:
            return
        number += 1
        yield number, offset, bytes(buf[start:end])
        offset += end - start
        start = scanned = end


def json_lines(f: BinaryIO, path: str, option: str, what: str, repair: bool = False,
               dropped: str = "its game is played again",
               unterminated_only: bool = False) -> Iterator[Tuple[int, Any]]:
    """(line number, value) of each JSON line of the binary file `f` (`read_lines`, from
    its current position; blank lines skipped), for a log a run appends one whole line at
    a time: `what` names what a line holds ("a logged game").

    A LAST line that is not JSON (a run killed while writing it) is dropped with a warning
    naming `path` and the line, and `dropped` (what becomes of it); with
    `unterminated_only`, only if it also lacks its final newline (a cut line never has
    it). With `repair` (`f` open to read and write) the file is then cut after its last
    complete line (a missing final newline is added), so that lines appended afterwards
    stay valid; a write failing there is one ValueError naming `path` (`output_errors`).
    A line that is not JSON before the last (or, with `unterminated_only`, a last one that
    ends with its newline) is a ValueError naming `path` and the line: that is not an
    interrupted write, and guessing could lose lines. The value of each line is the
    caller's to check. A gzipped file (a finished log as the repository keeps it) is read
    the same (`read_lines`) but never repaired: with `repair` it is a ValueError naming
    `path`, since a run appends to the plain log only."""
    if repair and is_gzipped(f):
        plain = path[:-len(COMMITTED)] if path.endswith(COMMITTED) else "a plain log"
        raise ValueError(f"{option} {path!r} is gzipped (a finished log as the repository "
                         f"keeps it): a run appends to a plain log only; give {plain} "
                         f"(made from it when missing), or decompress it (gunzip -k)")
    broken, last = None, b""
    for number, offset, raw in read_lines(f, path, option):
        last = raw
        if not raw.strip():
            continue
        if broken is not None:
            raise ValueError(f"{path}, line {broken[0]}: not {what} ({broken[2]}); this is "
                             f"not an interrupted write (the line is not the last): fix or "
                             f"remove the line, or start a new log")
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as err:
            broken = (number, offset, f"not JSON ({str(err)[:80]})")
            if unterminated_only and raw.endswith(b"\n"):
                raise ValueError(f"{path}, line {number}: not {what} ({broken[2]}); the line "
                                 f"ends with its newline, so it is not an interrupted write: "
                                 f"fix or remove the line, or start a new log") from None
            continue
        yield number, value
    if broken is not None:
        removed = " and removed" if repair else ""
        warnings.warn(f"{path}, line {broken[0]}: incomplete last line ignored{removed} "
                      f"({broken[2]}); {dropped}", stacklevel=3)
        if repair:
            with output_errors(path, option, "it is left as it was"):
                f.truncate(broken[1])
    elif repair and last and not last.endswith(b"\n"):
        with output_errors(path, option, "it is left as it was"):
            append_line(f, b"\n")


def append_line(f: BinaryIO, line: bytes) -> None:
    """Append `line` (whole lines, each ending with its newline) to the file `f` (opened
    to append: `open_locked`) with unbuffered writes of its descriptor, so that nothing is
    left in a buffer to be written again, and fail again, when the file is closed. If a
    write fails part way (a full disk, a file-size limit), the file is cut back to where it
    ended, so that it still holds whole lines only, and the OSError propagates (see
    `output_errors`)."""
    fd = f.fileno()
    end = os.fstat(fd).st_size
    rest = memoryview(line)
    try:
        while rest:
            written = os.write(fd, rest)
            if written <= 0:        # a regular file writes something or raises; never spin
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            rest = rest[written:]
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, end)
        raise


@contextlib.contextmanager
def output_errors(path: str, option: str,
                  note: str = "the results above were printed but not saved there",
                  ) -> Iterator[None]:
    """An OSError in this block (a full disk, a lost mount, a file-size limit) becomes one
    ValueError naming `option` and `path`, and `note` (what became of the results): the
    command ends with that line, not a traceback, after whatever it printed before."""
    try:
        yield
    except OSError as err:
        reason = err.strerror or os.strerror(err.errno or errno.EIO)
        raise ValueError(f"{option} {path!r}: writing it failed ({reason}); {note}") from None


@contextlib.contextmanager
def replaced(path: str, option: str = "--out") -> Iterator[str]:
    """A temporary path beside `path` (its folder, its extension: a plot picks its format
    from it) for the block to write; renamed over `path` when the block ends, removed if
    it raises, so that a run killed while writing leaves the former file whole, never
    half a file. Nothing is renamed if the block wrote nothing. An OSError (a full disk, a
    file-size limit) becomes one ValueError naming `path` and `option`."""
    root, ext = os.path.splitext(path)
    tmp = f"{root}.tmp{os.getpid()}{ext}"
    try:
        with output_errors(path, option, "the former file, if any, is kept whole; run "
                           "again to write it"):
            yield tmp
            if os.path.exists(tmp):
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def write_atomic(path: str, data: bytes, option: str = "--out") -> None:
    """`data` written to the file `path` whole or not at all (`replaced`)."""
    with replaced(path, option) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
