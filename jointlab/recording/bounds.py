"""Bounded reading of log files: size limits checked before anything is decompressed.

A compressed NPZ of a megabyte can declare gigabytes of arrays (a "zip bomb"); a CSV or a
journal can be any size. :func:`check_log_size` and :func:`check_npz` refuse, before a byte
of table is read:

* a file larger than :data:`MAX_LOG_BYTES`;
* an NPZ whose members decompress to more than :data:`MAX_LOG_BYTES` in total;
* an NPZ member whose array header declares more bytes than the member holds, a data type
  other than numbers or text, or an array of more than two dimensions.

Raise :data:`MAX_LOG_BYTES` (module attribute) to read a larger log on a machine with the
memory for it.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from jointlab.recording.metadata import LogError

__all__ = ["MAX_LOG_BYTES", "check_log_size", "check_npz"]

#: Largest log read, bytes on disk and decompressed (about 1 h at 1 kHz of a 12-joint robot).
MAX_LOG_BYTES = 1 << 30


def check_log_size(path: Path) -> None:
    """Refuse a log file larger than :data:`MAX_LOG_BYTES`."""
    size = os.path.getsize(path)
    if size > MAX_LOG_BYTES:
        raise LogError(f"{path}: log of {size} bytes is larger than the limit {MAX_LOG_BYTES}")


def _member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> None:
    """Check one ``.npy`` member's declared array against its decompressed size."""
    with archive.open(info) as handle:
        try:
            version = np.lib.format.read_magic(handle)
            reader = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, _fortran, dtype = reader(handle, max_header_size=10_000)
        except (ValueError, SyntaxError, TypeError) as exc:
            raise LogError(
                f"{path}: array {info.filename!r} has a malformed header: {str(exc)[:200]}"
            ) from None
    if dtype.kind not in "fiuUb" or dtype.hasobject:
        raise LogError(
            f"{path}: array {info.filename!r} has data type {dtype.str!r}; a log "
            "holds numbers and text"
        )
    if len(shape) > 2:
        raise LogError(f"{path}: array {info.filename!r} has {len(shape)} dimensions, at most 2")
    declared = int(np.prod(shape, dtype=np.float64) * dtype.itemsize)
    if declared > info.file_size:
        raise LogError(
            f"{path}: array {info.filename!r} declares {declared} bytes but holds {info.file_size}"
        )


def check_npz(path: Path) -> None:
    """Refuse an NPZ that would decompress beyond :data:`MAX_LOG_BYTES` (module docstring)."""
    check_log_size(path)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            total = sum(info.file_size for info in members)
            if total > MAX_LOG_BYTES:
                raise LogError(
                    f"{path}: NPZ decompresses to {total} bytes, more than the limit "
                    f"{MAX_LOG_BYTES}"
                )
            for info in members:
                if info.filename.endswith(".npy"):
                    _member_bytes(archive, info, path)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        NotImplementedError,
        zlib.error,
        RuntimeError,
    ) as exc:  # truncated, unsupported compression, encrypted
        raise LogError(f"{path} cannot be read as an NPZ log: {str(exc)[:200]}") from None
