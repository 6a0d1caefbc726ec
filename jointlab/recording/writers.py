"""Writers of log files: incremental (used by the Recorder) and whole-log (:func:`save_log`).

See :mod:`jointlab.recording.formats` for the layouts and the crash-safety scheme.
"""

from __future__ import annotations

import abc
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.recording.formats import (
    JOURNAL_SUFFIX,
    MAGIC,
    META_KEY,
    RECORD,
    Record,
    infer_format,
    journal_path,
    read_journal,
    require_pyarrow,
)
from jointlab.recording.log import FORMAT_NAME, TIME, Field, Log
from jointlab.recording.metadata import Event, LogError, dumps

__all__ = ["CsvWriter", "JournalWriter", "LogWriter", "open_writer", "recover_log", "save_log"]


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
    return RECORD.pack(MAGIC, kind, zlib.crc32(payload), len(payload)) + payload


class JournalWriter(LogWriter):
    """Journal for NPZ/Parquet targets, converted into the target on close."""

    def __init__(self, path: Path, header: dict[str, Any], fsync: bool, fmt: str) -> None:
        self.format = fmt
        super().__init__(path, header, fsync)

    def _data_path(self) -> Path:
        return journal_path(self.path)

    def _encode_header(self, header: dict[str, Any]) -> bytes:
        return _record(Record.HEADER, dumps({**header, "file_format": self.format}).encode())

    def _encode_schema(self, fields: Sequence[Field]) -> bytes:
        return _record(Record.SCHEMA, dumps([f.to_json() for f in fields]).encode())

    def _encode_block(self, time: np.ndarray, rows: np.ndarray, events: Sequence[Event]) -> bytes:
        out = b""
        if len(time):
            table = np.column_stack((time, rows)).astype("<f8", copy=False)
            out += _record(Record.ROWS, table.tobytes())
        if events:
            out += _record(Record.EVENTS, dumps([e.to_json() for e in events]).encode())
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
        require_pyarrow()
    candidates = (path,) if fmt == "csv" else (path, journal_path(path))
    stale = [p for p in candidates if p.exists()]
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
    arrays[META_KEY] = np.array(dumps(_full_header(log)))
    np.savez_compressed(fh, **arrays)


def _write_parquet(log: Log, fh: Any) -> None:
    pa, pq = require_pyarrow()
    arrays = [pa.array(log.time)] + [pa.array(log.data[:, i]) for i in range(log.data.shape[1])]
    table = pa.Table.from_arrays(arrays, names=[TIME, *log.columns])
    table = table.replace_schema_metadata({META_KEY: dumps(_full_header(log))})
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


def recover_log(path: str | os.PathLike[str], format: str | None = None) -> Path:
    """Finalise the journal an interrupted NPZ/Parquet recorder left for ``path``.

    Args:
        path: The log's path (or its journal's).
        format: ``"npz"`` or ``"parquet"``; default from the suffix.

    Returns:
        The finalised log's path (``path`` itself when there was nothing to recover).
    """
    path = Path(path)
    if path.name.endswith(JOURNAL_SUFFIX):
        path = path.with_name(path.name[: -len(JOURNAL_SUFFIX)])
    journal = journal_path(path)
    if journal.exists():
        _finalise(journal, path, infer_format(path, format), fsync=True)
    elif not path.exists():
        raise LogError(f"no log at {path} and no journal {journal.name} to recover")
    return path
