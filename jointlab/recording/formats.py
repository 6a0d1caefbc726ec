"""Log files: the CSV, compressed NPZ and Parquet layouts, and their readers.

Every format keeps the table (``time`` plus the ``<channel>.<field>[<i>]`` columns, float64,
NaN kept), the metadata and the events, and loads back exactly: floats round-trip bit for
bit (CSV writes the shortest repr that parses back to the same double; NaN payloads are not
kept by CSV).

Crash safety (a killed recorder leaves every flushed row readable):

* **CSV** is written append-only as the run goes. Line 1 is ``# jointlab-log {json
  header}``; then the column header ``time,...``; then one line per row. Events are comment
  lines ``# event {json}`` and a clean close appends ``# end {"rows": N}``. Each flush is one
  ``write`` of whole lines followed by a flush to the OS, so a crash can only cut the last
  line short, and the reader drops an incomplete last line. Other CSV tools read it with
  comment lines skipped (``pandas.read_csv(path, comment="#")``).
* **NPZ and Parquet** cannot be appended to (a zip directory and a Parquet footer are written
  last), so while recording the rows go to an append-only *journal* beside the target,
  ``<path>.journal``: a sequence of records ``b"JL" | kind u8 | pad | crc32 u32 | length
  u64 | payload`` (little-endian): a JSON header, the JSON field list, raw ``<f8`` row blocks
  (``time`` first) and JSON event lists. ``close()`` converts the journal into the target
  (written to a temporary file, then renamed) and deletes it. After a crash the journal
  stays: :func:`load_log` on the target path reads it (a torn last record fails its length or
  CRC check and is dropped) and :func:`recover_log` finalises it.
"""

from __future__ import annotations

import enum
import json
import os
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError, quote
from jointlab.recording.bounds import check_log_size, check_npz
from jointlab.recording.log import (
    FORMAT_NAME,
    FORMAT_VERSION,
    TIME,
    Field,
    Log,
    fields_from_columns,
)
from jointlab.recording.metadata import Event, LogError, LogMetadata

__all__ = [
    "FORMATS",
    "JOURNAL_SUFFIX",
    "MAGIC",
    "META_KEY",
    "RECORD",
    "Record",
    "infer_format",
    "journal_path",
    "load_log",
    "read_csv",
    "read_journal",
    "read_npz",
    "read_parquet",
    "require_pyarrow",
]

#: File suffix -> format name.
FORMATS = {".csv": "csv", ".npz": "npz", ".parquet": "parquet", ".pq": "parquet"}
JOURNAL_SUFFIX = ".journal"
META_KEY = "__jointlab__"

#: Journal record header: magic, kind, pad, CRC-32 of the payload, payload length.
RECORD = struct.Struct("<2sBxIQ")
MAGIC = b"JL"


class Record(enum.IntEnum):
    """Kinds of journal record."""

    HEADER = 1
    SCHEMA = 2
    ROWS = 3
    EVENTS = 4


def infer_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """Return ``"csv"``, ``"npz"`` or ``"parquet"`` from ``format`` or the path's suffix."""
    if format is not None:
        if format not in set(FORMATS.values()):
            raise ConfigurationError(
                f"log format {format!r} is not supported; expected one of "
                f"{sorted(set(FORMATS.values()))}"
            )
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigurationError(
            f"cannot tell the log format of {str(path)!r} from its suffix {suffix!r}; "
            f"expected one of {sorted(FORMATS)} or pass format="
        )
    return FORMATS[suffix]


def journal_path(path: str | os.PathLike[str]) -> Path:
    """Where an NPZ or Parquet log is journaled while it is recorded."""
    path = Path(path)
    return path.with_name(path.name + JOURNAL_SUFFIX)


def require_pyarrow() -> tuple[Any, Any]:
    """Import ``pyarrow`` and ``pyarrow.parquet``, or raise ConfigurationError."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise ConfigurationError(
            "Parquet logs need the optional package pyarrow (pip install pyarrow); "
            "use a .npz or .csv log instead"
        ) from exc
    return pyarrow, pyarrow.parquet


# --------------------------------------------------------------------------- readers
def _header(value: Any, path: Path) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("format") != FORMAT_NAME:
        raise LogError(f"{path} is not a JointLab log (no {FORMAT_NAME!r} header)")
    if int(value.get("version", 0)) > FORMAT_VERSION:
        raise LogError(
            f"{path} is log format version {value['version']}; this JointLab reads up to "
            f"{FORMAT_VERSION}"
        )
    return value


def _json(text: str | bytes, path: Path, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise LogError(f"{path}: {what} is not valid JSON: {exc}") from exc


def read_csv(path: Path) -> Log:
    """Read a CSV log, dropping an incomplete last line (a crash mid-write)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    lines.pop()  # "" after a final newline, else a torn line
    header: dict[str, Any] | None = None
    columns: list[str] | None = None
    events: list[Event] = []
    rows: list[str] = []
    finalised = False
    for number, line in enumerate(lines, 1):
        if line.startswith("#"):
            tag, _, payload = line[1:].strip().partition(" ")
            where = f"line {number}"
            if tag == FORMAT_NAME:
                header = _header({"format": tag, **_json(payload, path, where)}, path)
            elif tag == "event":
                events.append(Event.from_json(_json(payload, path, where)))
            elif tag == "end":
                finalised = True
        elif not line.strip():
            continue
        elif columns is None:
            columns = line.strip().split(",")
            if columns[0] != TIME:
                raise LogError(f"{path} line {number}: the first column must be {TIME!r}")
        else:
            rows.append(line)
    fields = fields_from_columns(columns[1:]) if columns else ()
    width = 1 + sum(f.width for f in fields)
    if rows:
        try:
            table = np.loadtxt(rows, delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as exc:
            raise LogError(f"{path}: a data row is malformed ({exc})") from exc
        if table.shape[1] != width:
            raise LogError(f"{path}: rows have {table.shape[1]} columns, header has {width}")
    else:
        table = np.empty((0, width))
    metadata = LogMetadata.from_json(header["metadata"]) if header else LogMetadata()
    return Log(table[:, 0], table[:, 1:], fields, metadata, tuple(events), finalised, path)


def read_journal(path: Path) -> Log:
    """Read an unfinalised journal; a torn or corrupt last record is dropped."""
    buffer = memoryview(path.read_bytes())
    header: dict[str, Any] | None = None
    fields: tuple[Field, ...] | None = None
    blocks: list[np.ndarray] = []
    events: list[Event] = []
    pos = 0
    while pos + RECORD.size <= len(buffer):
        magic, kind, crc, length = RECORD.unpack_from(buffer, pos)
        start, end = pos + RECORD.size, pos + RECORD.size + length
        if magic != MAGIC or end > len(buffer) or zlib.crc32(buffer[start:end]) != crc:
            break
        payload, pos = buffer[start:end], end
        if kind == Record.HEADER:
            header = _header(_json(bytes(payload), path, "journal header"), path)
        elif header is None:
            break
        elif kind == Record.SCHEMA:
            fields = tuple(Field.from_json(f) for f in _json(bytes(payload), path, "fields"))
        elif kind == Record.ROWS and fields is not None:
            width = 1 + sum(f.width for f in fields)
            if len(payload) % (8 * width):
                raise LogError(f"{path}: a row block is not a whole number of {width}-column rows")
            blocks.append(np.frombuffer(payload, dtype="<f8").reshape(-1, width))
        elif kind == Record.EVENTS:
            events.extend(Event.from_json(e) for e in _json(bytes(payload), path, "events"))
    if header is None:
        raise LogError(f"{path} is not a JointLab log journal (no valid header record)")
    fields = fields or ()
    width = 1 + sum(f.width for f in fields)
    table = np.concatenate(blocks) if blocks else np.empty((0, width))
    metadata = LogMetadata.from_json(header.get("metadata", {}))
    return Log(table[:, 0], table[:, 1:], fields, metadata, tuple(events), False, path)


def _from_header(
    header: dict[str, Any], time: np.ndarray, columns: list[np.ndarray], path: Path
) -> Log:
    fields = tuple(Field.from_json(f) for f in header.get("fields", []))
    data = (
        np.concatenate([c.reshape(len(time), -1) for c in columns], axis=1)
        if columns
        else np.empty((len(time), 0))
    )
    events = tuple(Event.from_json(e) for e in header.get("events", []))
    metadata = LogMetadata.from_json(header.get("metadata", {}))
    return Log(time, data, fields, metadata, events, True, path)


def read_npz(path: Path) -> Log:
    """Read a finalised NPZ log."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            if META_KEY not in archive.files:
                raise LogError(f"{path} is not a JointLab log (no {META_KEY} entry)")
            header = _header(_json(str(archive[META_KEY][()]), path, META_KEY), path)
            keys = [Field.from_json(f).key for f in header.get("fields", [])]
            missing = [k for k in (TIME, *keys) if k not in archive.files]
            if missing:
                raise LogError(f"{path} lacks the arrays {missing}")
            time = archive[TIME]
            columns = [archive[k] for k in keys]
    except LogError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise LogError(f"{path} cannot be read as an NPZ log: {exc}") from exc
    return _from_header(header, time, columns, path)


def read_parquet(path: Path) -> Log:
    """Read a Parquet log (needs pyarrow)."""
    _, pq = require_pyarrow()
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise LogError(f"{path} cannot be read as a Parquet log: {exc}") from exc
    raw = (table.schema.metadata or {}).get(META_KEY.encode())
    if raw is None:
        raise LogError(f"{path} is not a JointLab log (no {META_KEY} schema metadata)")
    header = _header(_json(raw, path, META_KEY), path)
    names = table.column_names
    if not names or names[0] != TIME:
        raise LogError(f"{path}: the first column must be {TIME!r}")
    time = table.column(TIME).to_numpy()
    columns = [table.column(c).to_numpy().astype(np.float64) for c in names[1:]]
    return _from_header(header, time, columns, path)


def _sniff(path: Path) -> str:
    with open(path, "rb") as fh:
        start = fh.read(len(FORMAT_NAME) + 2)
    if start.startswith(b"PK"):
        return "npz"
    if start.startswith(b"PAR1"):
        return "parquet"
    if start.startswith(MAGIC):
        return "journal"
    if start.startswith(b"#") or start.startswith(TIME.encode()):
        return "csv"
    raise LogError(f"{path} is not a JointLab log (unknown file type)")


_READERS = {"csv": read_csv, "npz": read_npz, "parquet": read_parquet, "journal": read_journal}


def load_log(source: str | os.PathLike[str] | Log) -> Log:
    """Load a log written by :class:`~jointlab.recording.Recorder` or :func:`save_log`.

    The type is detected from the content. When an NPZ/Parquet path does not exist but its
    journal does (the recorder was killed or not closed), the journal is read: the result
    has ``finalised=False`` and every row that was flushed.

    Args:
        source: A path, or a :class:`Log` (returned unchanged).

    Raises:
        LogError: no log there, or the file is not a readable JointLab log.
    """
    if isinstance(source, Log):
        return source
    try:
        path = Path(source)
        exists = path.exists()
    except (TypeError, ValueError) as exc:  # not a path, or a NUL byte in it
        raise LogError(f"not a log path: {quote(source)} ({exc})") from None
    if not exists:
        journal = journal_path(path)
        if journal.exists():
            return _read_bounded(read_journal, journal)
        raise LogError(f"no log at {path} (nor an unfinalised journal {journal.name})")
    return _read_bounded(_READERS[_sniff(path)], path)


def _read_bounded(reader: Any, path: Path) -> Log:
    """``reader(path)`` within the size bounds; a malformed file is a LogError naming it."""
    if reader is read_npz:
        check_npz(path)
    else:
        check_log_size(path)
    try:
        return reader(path)
    except LogError as exc:  # every refusal names the file
        if str(path) in str(exc):
            raise
        raise LogError(f"{path}: {exc}") from None
    except ConfigurationError:
        raise
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        ZeroDivisionError,
        RecursionError,
        struct.error,
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
    ) as exc:  # UnicodeDecodeError and json errors are ValueErrors
        raise LogError(f"{path}: malformed log: {type(exc).__name__}: {str(exc)[:200]}") from None
