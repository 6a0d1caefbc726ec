"""Device-side byte links of the emulator: a pseudo-terminal, or a loopback TCP port.

A link is what the UART is to firmware: non-blocking reads of whatever arrived, and writes
that never stall the tick (bytes the host does not read are dropped once the buffer is
full, and counted, as a UART overrun would lose them).

* :class:`PtyLink` opens a pseudo-terminal pair with ``os.openpty()`` and sets it raw; the
  host opens :attr:`PtyLink.path` (``/dev/pts/N``) exactly as it would ``/dev/ttyUSB0``.
* :class:`TcpLink` listens on ``127.0.0.1`` (loopback unless told otherwise) for one
  client at a time, for ``serial://socket://127.0.0.1:PORT`` (a ser2net-style bridge).
"""

from __future__ import annotations

import os
import socket
import tty

__all__ = ["Link", "PtyLink", "TcpLink"]

#: Bytes kept for a host that does not read before new output is dropped.
TX_BUFFER_LIMIT = 64 * 1024
_READ_SIZE = 65536


class Link:
    """Base class: ``fds()`` to wait on, ``read(fd)``, ``write(data)``, ``close()``."""

    #: Where the host connects: a device path or a pyserial URL.
    path: str = ""

    def __init__(self) -> None:
        self._tx = b""
        #: Bytes dropped because the host did not read them.
        self.tx_overrun_bytes = 0

    def fds(self) -> list[int]:
        """File descriptors to wait on for input."""
        raise NotImplementedError

    def read(self, fd: int) -> bytes:
        """Whatever arrived on ``fd`` (maybe nothing); never blocks."""
        raise NotImplementedError

    def _send(self, data: bytes) -> int:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        """Queue ``data`` and write as much as the other side accepts now."""
        self._tx += data
        try:
            sent = self._send(self._tx)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:  # no host connected
            sent = len(self._tx)
            self.tx_overrun_bytes += sent
        self._tx = self._tx[sent:]
        if len(self._tx) > TX_BUFFER_LIMIT:
            self.tx_overrun_bytes += len(self._tx)
            self._tx = b""

    def flush(self) -> None:
        """Retry writing queued bytes."""
        if self._tx:
            self.write(b"")

    def close(self) -> None:
        """Release the descriptors."""


class PtyLink(Link):
    """A raw pseudo-terminal; the host opens :attr:`path`."""

    def __init__(self) -> None:
        super().__init__()
        self._master, self._slave = os.openpty()
        # Raw on the slave side: no echo, no line editing, no CR/NL translation, 8-bit clean.
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        # The emulator keeps the slave open so that the master never sees a hang-up (EIO)
        # while no host has the port open.
        self.path = os.ttyname(self._slave)

    def line_speed(self) -> int | None:
        """The baud rate the host set on the port (termios), or None if it is non-standard."""
        import termios

        speed = termios.tcgetattr(self._slave)[4]
        for name in dir(termios):
            if name.startswith("B") and name[1:].isdigit() and getattr(termios, name) == speed:
                return int(name[1:])
        return None

    def fds(self) -> list[int]:
        """The master side."""
        return [self._master]

    def read(self, fd: int) -> bytes:
        """Bytes the host wrote (non-blocking)."""
        try:
            return os.read(self._master, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return b""

    def _send(self, data: bytes) -> int:
        return os.write(self._master, data)

    def close(self) -> None:
        """Close both sides of the pair."""
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass


class TcpLink(Link):
    """A TCP server for one client at a time (``serial://socket://HOST:PORT``).

    Args:
        port: TCP port, 0 for any free one (see :attr:`port`).
        host: Address to bind, loopback by default.
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        super().__init__()
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind((host, port))
        self._server.listen(1)
        self._server.setblocking(False)
        self._client: socket.socket | None = None
        self.port = self._server.getsockname()[1]
        self.path = f"socket://{host}:{self.port}"

    def fds(self) -> list[int]:
        """The listening socket and the client, if any."""
        fds = [self._server.fileno()]
        if self._client is not None:
            fds.append(self._client.fileno())
        return fds

    def read(self, fd: int) -> bytes:
        """Accept a new client (replacing the old one) or read from the current one."""
        if fd == self._server.fileno():
            try:
                client, _ = self._server.accept()
            except (BlockingIOError, InterruptedError):
                return b""
            self._drop_client()
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._client, self._tx = client, b""
            return b""
        if self._client is None:
            return b""
        try:
            data = self._client.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self._drop_client()
        return data

    def _send(self, data: bytes) -> int:
        if self._client is None:
            raise OSError("no client")
        return self._client.send(data)

    def _drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def close(self) -> None:
        """Close the client and the server socket."""
        self._drop_client()
        self._server.close()
