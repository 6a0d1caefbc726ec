"""Log files: CSV, compressed NPZ and Parquet writers and readers.

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

import abc
import json
import os
import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.recording.log import (
    FORMAT_NAME,
    FORMAT_VERSION,
    TIME,
    Event,
    Field,
    Log,
    LogError,
    LogMetadata,
    dumps,
    fields_from_columns,
)

__all__ = [
    "FORMATS",
    "LogWriter",
    "infer_format",
    "journal_path",
    "load_log",
    "open_writer",
    "recover_log",
    "save_log",
]

#: File suffix -> format name.
FORMATS = {".csv": "csv", ".npz": "npz", ".parquet": "parquet", ".pq": "parquet"}
JOURNAL_SUFFIX = ".journal"
_META_KEY = "__jointlab__"

_RECORD = struct.Struct("<2sBxIQ")
_MAGIC = b"JL"
_HEADER, _SCHEMA, _ROWS, _EVENTS = 1, 2, 3, 4


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


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise ConfigurationError(
            "Parquet logs need the optional package pyarrow (pip install pyarrow); "
            "use a .npz or .csv log instead"
        ) from exc
    return pyarrow, pyarrow.parquet


# --------------------------------------------------------------------------- writers
class LogWriter(abc.ABC):
    """Incremental writer used by :class:`~jointlab.recording.Recorder`.

    Call order: ``write_schema`` once before the first rows, ``write_block`` per flush,
    ``close`` once. Every ``write_block`` reaches the OS before it returns.
    """

    def __init__(self, path: Path, header: dict[str, Any], fsync: bool) -> None:
        self.path = path
        self._fsync = fsync
        self._pending = b""
        self._file = open(self._data_path(), "wb")
        self._write(self._encode_header(header))

    def _data_path(self) -> Path:
        return self.path

    def _write(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    @abc.abstractmethod
    def _encode_header(self, header: dict[str, Any]) -> bytes: ...

    @abc.abstractmethod
    def _encode_schema(self, fields: Sequence[Field]) -> bytes: ...

    @abc.abstractmethod
    def _encode_block(
        self, time: np.ndarray, rows: np.ndarray, events: Sequence[Event]
    ) -> bytes: ...

    def write_schema(self, fields: Sequence[Field]) -> None:
        """Fix the columns; written together with the next block."""
        self._pending = self._encode_schema(fields)

    def write_block(self, time: np.ndarray, rows: np.ndarray, events: Sequence[Event]) -> None:
        """Append rows (``time`` shape ``(n,)``, ``rows`` shape ``(n, C)``) and events."""
        data = self._pending + self._encode_block(time, rows, events)
        self._pending = b""
        self._write(data)

    def close(self, rows: int) -> None:
        """Finish the file (``rows``: total rows written)."""
        self._file.close()


def _csv_header(header: dict[str, Any]) -> bytes:
    header = {k: v for k, v in header.items() if k != "fields"}
    return f"# {FORMAT_NAME} {dumps(header)}\n".encode()


def _csv_schema(fields: Sequence[Field]) -> bytes:
    return (",".join([TIME, *(c for f in fields for c in f.columns)]) + "\n").encode()


def _csv_block(time: np.ndarray, rows: np.ndarray, events: Sequence[Event]) -> bytes:
    lines = []
    if len(time):
        table = np.column_stack((time, rows)).tolist()
        lines = [",".join(map(repr, row)) for row in table]
    lines.extend(f"# event {dumps(e.to_json())}" for e in events)
    return "".join(line + "\n" for line in lines).encode()


def _csv_end(rows: int) -> bytes:
    return f"# end {dumps({'rows': rows})}\n".encode()


class CsvWriter(LogWriter):
    """Append-only CSV writer (see the module docstring for the layout)."""

    def _encode_header(self, header: dict[str, Any]) -> bytes:
        return _csv_header(header)

    def _encode_schema(self, fields: Sequence[Field]) -> bytes:
        return _csv_schema(fields)

    def _encode_block(self, time: np.ndarray, rows: np.ndarray, events: Sequence[Event]) -> bytes:
        return _csv_block(time, rows, events)

    def close(self, rows: int) -> None:
        """Append the ``# end`` marker and close."""
        if not self._file.closed:
            self._write(_csv_end(rows))
        super().close(rows)


def _record(kind: int, payload: bytes) -> bytes:
    return _RECORD.pack(_MAGIC, kind, zlib.crc32(payload), len(payload)) + payload


class JournalWriter(LogWriter):
    """Journal for NPZ/Parquet targets, converted into the target on close."""

    def __init__(self, path: Path, header: dict[str, Any], fsync: bool, fmt: str) -> None:
        self.format = fmt
        super().__init__(path, header, fsync)

    def _data_path(self) -> Path:
        return journal_path(self.path)

    def _encode_header(self, header: dict[str, Any]) -> bytes:
        return _record(_HEADER, dumps({**header, "file_format": self.format}).encode())

    def _encode_schema(self, fields: Sequence[Field]) -> bytes:
        return _record(_SCHEMA, dumps([f.to_json() for f in fields]).encode())

    def _encode_block(self, time: np.ndarray, rows: np.ndarray, events: Sequence[Event]) -> bytes:
        out = b""
        if len(time):
            table = np.column_stack((time, rows)).astype("<f8", copy=False)
            out += _record(_ROWS, table.tobytes())
        if events:
            out += _record(_EVENTS, dumps([e.to_json() for e in events]).encode())
        return out

    def close(self, rows: int) -> None:
        """Close the journal and convert it into the target file."""
        if self._file.closed:
            return
        super().close(rows)
        _finalise(self._data_path(), self.path, self.format, self._fsync)


def open_writer(
    path: Path, fmt: str, header: dict[str, Any], *, fsync: bool, overwrite: bool
) -> LogWriter:
    """Create the writer for ``fmt`` at ``path`` (parent folders are created)."""
    if fmt == "parquet":
        _pyarrow()
    journal = journal_path(path)
    stale = [p for p in (path, journal) if p.exists()]
    if stale and not overwrite:
        raise ConfigurationError(
            f"log file {stale[0]} already exists; pass overwrite=True or choose another path"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        return CsvWriter(path, header, fsync)
    for p in stale:
        p.unlink()
    return JournalWriter(path, header, fsync, fmt)


# --------------------------------------------------------------------------- whole files
def _atomic_write(path: Path, write: Any, fsync: bool = True) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _full_header(log: Log) -> dict[str, Any]:
    return {**log.header_json(), "events": [e.to_json() for e in log.events]}


def _write_npz(log: Log, fh: Any) -> None:
    arrays = {TIME: log.time, **{f.key: log[f.key] for f in log.fields}}
    arrays[_META_KEY] = np.array(dumps(_full_header(log)))
    np.savez_compressed(fh, **arrays)


def _write_parquet(log: Log, fh: Any) -> None:
    pa, pq = _pyarrow()
    arrays = [pa.array(log.time)] + [pa.array(log.data[:, i]) for i in range(log.data.shape[1])]
    table = pa.Table.from_arrays(arrays, names=[TIME, *log.columns])
    table = table.replace_schema_metadata({_META_KEY: dumps(_full_header(log))})
    pq.write_table(table, fh)


def _write_csv(log: Log, fh: Any) -> None:
    fh.write(_csv_header(log.header_json()))
    fh.write(_csv_schema(log.fields))
    fh.write(_csv_block(log.time, log.data, log.events))
    fh.write(_csv_end(len(log)))


_WRITERS = {"csv": _write_csv, "npz": _write_npz, "parquet": _write_parquet}


def save_log(log: Log, path: str | os.PathLike[str], format: str | None = None) -> Path:
    """Write a whole :class:`Log` to ``path`` (e.g. to convert a CSV log to NPZ)."""
    path = Path(path)
    fmt = infer_format(path, format)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, lambda fh: _WRITERS[fmt](log, fh))
    return path


def _finalise(journal: Path, target: Path, fmt: str, fsync: bool) -> None:
    log = read_journal(journal)
    _atomic_write(target, lambda fh: _WRITERS[fmt](log, fh), fsync=fsync)
    journal.unlink()


def recover_log(path: str | os.PathLike[str]) -> Path:
    """Finalise the journal an interrupted NPZ/Parquet recorder left for ``path``.

    Returns:
        The finalised log's path (``path`` itself when there was nothing to recover).
    """
    path = Path(path)
    if path.name.endswith(JOURNAL_SUFFIX):
        path = path.with_name(path.name[: -len(JOURNAL_SUFFIX)])
    journal = journal_path(path)
    if journal.exists():
        _finalise(journal, path, infer_format(path), fsync=True)
    elif not path.exists():
        raise LogError(f"no log at {path} and no journal {journal.name} to recover")
    return path


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
    while pos + _RECORD.size <= len(buffer):
        magic, kind, crc, length = _RECORD.unpack_from(buffer, pos)
        start, end = pos + _RECORD.size, pos + _RECORD.size + length
        if magic != _MAGIC or end > len(buffer) or zlib.crc32(buffer[start:end]) != crc:
            break
        payload, pos = buffer[start:end], end
        if kind == _HEADER:
            header = _header(_json(bytes(payload), path, "journal header"), path)
        elif header is None:
            break
        elif kind == _SCHEMA:
            fields = tuple(Field.from_json(f) for f in _json(bytes(payload), path, "fields"))
        elif kind == _ROWS and fields is not None:
            width = 1 + sum(f.width for f in fields)
            blocks.append(np.frombuffer(payload, dtype="<f8").reshape(-1, width))
        elif kind == _EVENTS:
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
            if _META_KEY not in archive.files:
                raise LogError(f"{path} is not a JointLab log (no {_META_KEY} entry)")
            header = _header(_json(str(archive[_META_KEY][()]), path, _META_KEY), path)
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
    _, pq = _pyarrow()
    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(_META_KEY.encode())
    if raw is None:
        raise LogError(f"{path} is not a JointLab log (no {_META_KEY} schema metadata)")
    header = _header(_json(raw, path, _META_KEY), path)
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
    if start.startswith(_MAGIC):
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
    path = Path(source)
    if not path.exists():
        journal = journal_path(path)
        if journal.exists():
            return read_journal(journal)
        raise LogError(f"no log at {path} (nor an unfinalised journal {journal.name})")
    return _READERS[_sniff(path)](path)
