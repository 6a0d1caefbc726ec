"""The host side of the serial backend, layered as pyserial's ``serial.threaded`` suggests.

* :mod:`~jointlab.hardware.host.transport`: :class:`SerialTransport`, a pyserial port read by
  ``serial.threaded.ReaderThread`` (any byte-oriented backend can reuse it);
* :mod:`~jointlab.hardware.host.link`: :class:`HostLink`, frames in and out, replies routed
  by the message table, the latest state, link statistics;
* :mod:`~jointlab.hardware.host.requests`, :mod:`~jointlab.hardware.host.stream`,
  :mod:`~jointlab.hardware.host.health`, :mod:`~jointlab.hardware.host.view`,
  :mod:`~jointlab.hardware.host.flags`: requests and their retries, the command/state stream
  (real time or lockstep), when a link is dead, what ``read()`` shows;
* :mod:`~jointlab.hardware.host.session`: opening a session (handshake, description, clock);
* :mod:`~jointlab.hardware.host.robot`: :class:`SerialRobot`, the ``Robot`` interface;
* :mod:`~jointlab.hardware.host.urls`: the ``serial://`` and ``emulated://`` URLs.
"""
