"""The transport layer of a serial link: a pyserial port and pyserial's own reader thread.

Layered as pyserial's ``serial.threaded`` suggests: this module moves bytes and nothing
else. The reader is ``serial.threaded.ReaderThread``; framing and the backend sit above it,
behind a ``serial.threaded.Protocol`` (``connection_made``, ``data_received``,
``connection_lost``). Any byte-oriented backend (the JointLab protocol, a servo bus) can
reuse :class:`SerialTransport`.

Errors are kept apart by where they happen (:attr:`SerialTransport.error_source`):

* **port I/O errors** (the device vanished, the bridge closed the socket) stop the reader
  and reach the protocol's ``connection_lost`` as a :class:`~jointlab.errors.LinkError`
  naming the port (source ``"port"``);
* **handler errors** (an exception raised by ``data_received``, i.e. a bug above the
  transport) also stop the reader, but reach ``connection_lost`` as the original exception
  (source ``"handler"``); they are never reported as link failures.

``write`` raises :class:`~jointlab.errors.LinkError` on a port error and never blocks for
longer than the port's write timeout.
"""

from __future__ import annotations

import socket
import threading

import serial
import serial.threaded

from jointlab.errors import LinkError

__all__ = ["SerialTransport"]


def _no_delay(port: serial.SerialBase) -> None:
    """Turn Nagle's algorithm off on a network port (``socket://``, ``rfc2217://``).

    pyserial leaves it on, so each small frame (a 141-byte NJOINT) waits for the previous
    one's acknowledgement: tens of milliseconds with delayed ACKs. Serial ports are untouched.
    """
    sock = getattr(port, "_socket", None)
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


class _Guarded(serial.threaded.Protocol):
    """Tells the protocol's own exceptions apart from the port's, for :class:`SerialTransport`."""

    def __init__(self, owner: SerialTransport, inner: serial.threaded.Protocol) -> None:
        self.owner = owner
        self.inner = inner
        self.handler_error: BaseException | None = None

    def connection_made(self, transport: serial.threaded.ReaderThread) -> None:
        try:
            self.inner.connection_made(transport)
        except Exception as exc:
            self.handler_error = exc
            raise

    def data_received(self, data: bytes) -> None:
        try:
            self.inner.data_received(data)
        except Exception as exc:
            self.handler_error = exc
            raise

    def connection_lost(self, exc: BaseException | None) -> None:
        owner = self.owner
        if exc is not None and exc is self.handler_error:
            owner.error, owner.error_source = exc, "handler"
        elif exc is not None:
            error = LinkError(f"reading serial port {owner.url!r} failed: {exc}")
            error.__cause__ = exc
            owner.error, owner.error_source = error, "port"
            exc = error
        self.inner.connection_lost(exc)


class SerialTransport:
    """A serial port opened with ``serial.serial_for_url``, read by a ``ReaderThread``.

    Args:
        url: A device path (``/dev/ttyUSB0``, a pty path) or any pyserial URL
            (``socket://127.0.0.1:7000``, ``rfc2217://host:port``, ``loop://``).
        baudrate: Line rate in bit/s (ignored by ptys, sockets and USB CDC devices).
        read_timeout: Seconds one blocking read waits on ports that cannot cancel a read
            (sockets); bounds how long ``close()`` takes there.
        write_timeout: Seconds a write may block before it is a :class:`LinkError`.

    Raises:
        LinkError: the port cannot be opened (names the port and pyserial's reason).
    """

    def __init__(
        self,
        url: str,
        *,
        baudrate: int = 1_000_000,
        read_timeout: float = 0.05,
        write_timeout: float = 1.0,
    ) -> None:
        self.url = url
        self._read_timeout = read_timeout
        try:
            self._port = serial.serial_for_url(
                url, baudrate=baudrate, timeout=read_timeout, write_timeout=write_timeout
            )
        except (serial.SerialException, ValueError, OSError) as exc:
            raise LinkError(f"cannot open serial port {url!r}: {exc}") from exc
        _no_delay(self._port)
        self._write_lock = threading.Lock()
        self._reader: serial.threaded.ReaderThread | None = None
        self._closed = False
        #: The exception that stopped the reader, or None.
        self.error: BaseException | None = None
        #: ``"port"`` or ``"handler"``: where :attr:`error` came from.
        self.error_source: str | None = None

    @property
    def port(self) -> serial.SerialBase:
        """The pyserial port object."""
        return self._port

    def unread(self) -> int:
        """Bytes the OS holds that the reader has not read yet (0 if it cannot tell)."""
        try:
            return int(self._port.in_waiting)
        except (serial.SerialException, OSError, ValueError, TypeError, AttributeError):
            return 0

    def start(self, protocol: serial.threaded.Protocol) -> None:
        """Start the reader thread, which feeds ``protocol`` until ``close()`` or an error."""
        if self._reader is not None:
            raise RuntimeError("SerialTransport.start() called twice")
        guarded = _Guarded(self, protocol)
        reader = serial.threaded.ReaderThread(self._port, lambda: guarded)
        reader.name = f"jointlab-serial-reader {self.url}"
        self._reader = reader
        reader.start()
        try:
            reader.connect()
        except RuntimeError as exc:  # connection_made raised: the handler's error
            raise self.error or exc from exc
        if not hasattr(self._port, "cancel_read"):  # ReaderThread set 1 s; keep close() quick
            self._port.timeout = self._read_timeout

    def write(self, data: bytes) -> None:
        """Write ``data`` whole (thread-safe).

        Raises:
            LinkError: the port is closed or failed, or the write timed out.
        """
        with self._write_lock:
            self.write_locked(data)

    def locked(self) -> threading.Lock:
        """The write lock, for callers that must number and write frames atomically."""
        return self._write_lock

    def write_locked(self, data: bytes) -> None:
        """Like :meth:`write`, for a caller that already holds :meth:`locked`."""
        if self._closed:
            raise LinkError(f"serial port {self.url!r} is closed")
        try:
            self._port.write(data)
        except (serial.SerialException, OSError) as exc:
            raise LinkError(f"writing to serial port {self.url!r} failed: {exc}") from exc

    def close(self) -> None:
        """Stop the reader thread and close the port; safe to call twice."""
        if self._closed:
            return
        with self._write_lock:
            self._closed = True
        reader = self._reader
        try:
            current = threading.current_thread()
            if reader is not None and reader.is_alive() and reader is not current:
                reader.close()  # stops the thread (cancel_read, join), then closes the port
            else:
                self._port.close()
        except (serial.SerialException, OSError):
            pass

    def __enter__(self) -> SerialTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
