"""The transport layer of the serial link: a pyserial port, a write lock and a reader thread.

Layered as pyserial's ``serial.threaded`` suggests: this module moves bytes and nothing
else; framing (:class:`~jointlab.hardware.protocol.FrameDecoder`) and the backend
(:class:`~jointlab.hardware.serial_robot.SerialRobot`) sit above it, behind the
:class:`Protocol` callbacks.

Errors are kept apart by where they happen:

* **port I/O errors** (the device vanished, the bridge closed the socket) stop the reader
  and reach the protocol as a :class:`~jointlab.errors.LinkError` in ``connection_lost``,
  with :attr:`SerialTransport.error_source` ``"port"``;
* **handler errors** (an exception raised by ``data_received``, i.e. a bug above the
  transport) also stop the reader, but reach ``connection_lost`` as the original exception,
  with ``error_source`` ``"handler"``; they are never reported as link failures.

``write`` raises :class:`~jointlab.errors.LinkError` on a port error and never blocks for
longer than the port's write timeout.
"""

from __future__ import annotations

import socket
import threading

import serial

from jointlab.errors import LinkError

__all__ = ["Protocol", "SerialTransport"]


def _no_delay(port: serial.SerialBase) -> None:
    """Turn Nagle's algorithm off on a network port (``socket://``, ``rfc2217://``).

    pyserial leaves it on, so each small frame (a 133-byte NJOINT) waits for the previous
    one's acknowledgement: tens of milliseconds with delayed ACKs. Serial ports are untouched.
    """
    sock = getattr(port, "_socket", None)
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


class Protocol:
    """Callbacks of a :class:`SerialTransport`, called from its reader thread."""

    def connection_made(self, transport: SerialTransport) -> None:
        """The reader thread has started."""

    def data_received(self, data: bytes) -> None:
        """Bytes arrived (any number, at least one)."""

    def connection_lost(self, exc: BaseException | None) -> None:
        """The reader stopped: ``None`` after ``close()``, else the error that stopped it."""


class SerialTransport:
    """A serial port opened with ``serial.serial_for_url`` plus a reader thread.

    Args:
        url: A device path (``/dev/ttyUSB0``, a pty path) or any pyserial URL
            (``socket://127.0.0.1:7000``, ``rfc2217://host:port``, ``loop://``).
        baudrate: Line rate in bit/s (ignored by ptys, sockets and USB CDC devices).
        read_timeout: Seconds one blocking read waits; bounds how long ``close()`` takes
            on ports that cannot cancel a read.
        write_timeout: Seconds a write may block before it is a :class:`LinkError`.

    Raises:
        LinkError: the port cannot be opened (names the port and pyserial's reason).
    """

    #: Seconds ``close()`` waits for the reader thread.
    JOIN_TIMEOUT = 1.0

    def __init__(
        self,
        url: str,
        *,
        baudrate: int = 1_000_000,
        read_timeout: float = 0.05,
        write_timeout: float = 1.0,
    ) -> None:
        self.url = url
        try:
            self._port = serial.serial_for_url(
                url, baudrate=baudrate, timeout=read_timeout, write_timeout=write_timeout
            )
        except (serial.SerialException, ValueError, OSError) as exc:
            raise LinkError(f"cannot open serial port {url!r}: {exc}") from exc
        _no_delay(self._port)
        self._write_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._protocol: Protocol | None = None
        self._alive = False
        self._closed = False
        #: The exception that stopped the reader, or None.
        self.error: BaseException | None = None
        #: ``"port"`` or ``"handler"``: where :attr:`error` came from.
        self.error_source: str | None = None

    @property
    def port(self) -> serial.SerialBase:
        """The pyserial port object."""
        return self._port

    @property
    def is_open(self) -> bool:
        """True until ``close()`` and while the reader has not stopped on an error."""
        return not self._closed and self.error is None

    def start(self, protocol: Protocol) -> None:
        """Start the reader thread, which feeds ``protocol`` until ``close()`` or an error."""
        if self._thread is not None:
            raise RuntimeError("SerialTransport.start() called twice")
        self._protocol = protocol
        self._alive = True
        self._thread = threading.Thread(
            target=self._run, name=f"jointlab-serial-reader {self.url}", daemon=True
        )
        self._thread.start()

    def write(self, data: bytes) -> None:
        """Write ``data`` whole (thread-safe).

        Raises:
            LinkError: the port is closed or failed, or the write timed out.
        """
        with self._write_lock:
            if self._closed:
                raise LinkError(f"serial port {self.url!r} is closed")
            try:
                self._port.write(data)
            except (serial.SerialException, OSError) as exc:
                raise LinkError(f"writing to serial port {self.url!r} failed: {exc}") from exc

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

    def _run(self) -> None:
        protocol = self._protocol or Protocol()
        port = self._port
        error: BaseException | None = None
        try:
            protocol.connection_made(self)
        except Exception as exc:  # a handler error, kept apart from port errors
            self.error, self.error_source = exc, "handler"
            self._alive = False
        while self._alive:
            try:
                data = port.read(port.in_waiting or 1)
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                # TypeError/AttributeError: pyserial's posix read after a concurrent close.
                if self._alive:
                    error = LinkError(f"reading serial port {self.url!r} failed: {exc}")
                    error.__cause__ = exc
                    self.error, self.error_source = error, "port"
                break
            if not data:
                continue
            try:
                protocol.data_received(data)
            except Exception as exc:
                self.error, self.error_source = exc, "handler"
                break
        self._alive = False
        try:
            protocol.connection_lost(self.error)
        except Exception as exc:  # nothing above us to tell; keep the first error
            if self.error is None:
                self.error, self.error_source = exc, "handler"

    def close(self) -> None:
        """Stop the reader thread and close the port; safe to call twice."""
        if self._closed:
            return
        self._alive = False
        cancel = getattr(self._port, "cancel_read", None)
        if cancel is not None:
            try:
                cancel()
            except (serial.SerialException, OSError, NotImplementedError):
                pass
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.JOIN_TIMEOUT)
        with self._write_lock:
            self._closed = True
            try:
                self._port.close()
            except (serial.SerialException, OSError):
                pass

    def __enter__(self) -> SerialTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
