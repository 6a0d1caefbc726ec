"""Sync-read round trips on the emulated servo buses, against their wire time.

    PYTHONPATH=. .venv/bin/python benchmarks/sync_read_latency.py [--reads 2000]

For the SO-101 (Feetech STS3215) and the Koch v1.1 (Dynamixel XL430/XL330), six servos at
1 Mbaud on a real-time emulated bus (its own process): the vendor's SDK (``scservo_sdk`` /
``dynamixel_sdk``, unchanged) runs back-to-back Sync Reads of Present Position, each timed
from the call to the parsed reply, after Return Delay Time is set to 0 on every servo (as
LeRobot's ``configure_motors`` does). The **wire time** is the bytes that crossed the line
(the instruction packet and the six status packets, counted on the port) times 10 bits at
1 Mbaud: no real bus answers sooner. Printed
per bus: median and p99 of the round trip, both as a multiple of the wire time (target:
<= 1.5x), and the reads that timed out; then the same with two CPU-bound processes running
(the SDK's own timeouts apply: a late reply is a failed read, as on a real host).

Under load each bus runs three ways: the emulator at the normal policy (niceness 0, what a
user without the privilege gets), at niceness -10 (a larger CPU share; the default of a
real-time emulator where it is granted, ``BusEmulatorProcess(nice=-10)``), and at
SCHED_FIFO priority 10 (``fifo=True``); both need root or ``CAP_SYS_NICE``, and the line says
what the process got. The host is never given a raised priority: its share of the wait is
measured apart, as **client only**: the same SDK port and reply length against an echo on a
pty that answers at once (run at SCHED_FIFO 10 where granted, so it is never the one
waiting), so its round trip is the host's own time to write, be woken and read.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pty
import statistics
import time
import tty

from _report import header, load, row, spread, write_summary

from jointlab.hardware.emulator.process import realtime_priority
from jointlab.hardware.servo_emulator.emulator import BITS_PER_BYTE
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess

BAUD = 1_000_000
IDS = range(1, 7)
#: Vendor, SDK module, protocol version, Present Position address and size, Return Delay
#: Time address (both vendors: one byte, 2 µs units).
BUSES = {
    "so101": ("Feetech STS3215", "scservo_sdk", None, 56, 2, 7),
    "koch": ("Dynamixel XL430/XL330", "dynamixel_sdk", 2.0, 132, 4, 9),
}


def _burn() -> None:
    while True:
        pass


#: How the emulator process is scheduled: label -> BusEmulatorProcess keyword arguments.
SCHEDULING = {
    "nice 0": {"nice": 0},
    "nice -10": {"nice": -10},
    "fifo 10": {"fifo": True, "nice": 0},
}


def round_trips(
    robot: str, reads: int, **scheduling: object
) -> tuple[list[float], float, int, str, tuple[int, int]]:
    """Seconds per Sync Read, the wire time of one, and the failed reads.

    Also what scheduling the emulator got and the bytes of one exchange (out, back).
    """
    import importlib

    _, module_name, protocol, address, size, delay_address = BUSES[robot]
    sdk = importlib.import_module(module_name)
    with BusEmulatorProcess(robot, **scheduling) as emulator:
        got = "SCHED_FIFO 10" if emulator.fifo else f"niceness {emulator.nice}"
        port = sdk.PortHandler(emulator.path)
        port.openPort()
        port.setBaudRate(BAUD)
        handler = sdk.PacketHandler(protocol) if protocol else sdk.PacketHandler(0)
        for servo in IDS:  # as LeRobot's configure_motors: answer without a delay
            handler.write1ByteTxRx(port, servo, delay_address, 0)
        group = sdk.GroupSyncRead(port, handler, address, size)
        for servo in IDS:
            group.addParam(servo)
        counted = {"out": 0, "in": 0}
        write, read = port.writePort, port.readPort

        def counting_write(packet):
            counted["out"] += len(packet)
            return write(packet)

        def counting_read(length):
            data = read(length)
            counted["in"] += len(data)
            return data

        port.writePort, port.readPort = counting_write, counting_read
        group.txRxPacket()  # the first read: counts the bytes of one exchange
        wire = (counted["out"] + counted["in"]) * BITS_PER_BYTE / BAUD
        port.writePort, port.readPort = write, read
        times, failed = [], 0
        for _ in range(reads):
            start = time.perf_counter()
            result = group.txRxPacket()
            times.append(time.perf_counter() - start)
            failed += result != sdk.COMM_SUCCESS
        port.closePort()
    return times, wire, failed, got, (counted["out"], counted["in"])


def _echo(fd: int, ask: int, answer: int, delay: float) -> None:
    """The client-only peer: read ``ask`` bytes, sleep ``delay`` s, write ``answer`` bytes."""
    realtime_priority()  # never the one waiting (an event-driven loop: it blocks or sleeps)
    reply = bytes(answer)
    while True:
        got = 0
        while got < ask:
            chunk = os.read(fd, ask - got)
            if not chunk:
                return
            got += len(chunk)
        time.sleep(delay)
        os.write(fd, reply)


def client_only(robot: str, reads: int, sizes: tuple[int, int], wire: float) -> list[float]:
    """Seconds per exchange of the SDK's port with a peer that answers after ``wire`` s.

    The peer sleeps the wire time (a sleep overshoots by some 60 µs) at SCHED_FIFO where
    granted, so the host polls the port as long as it does for a real reply, and the time
    beyond that is the host's own: being preempted while it polls, or woken late.
    """
    import importlib

    sdk = importlib.import_module(BUSES[robot][1])
    master, slave = pty.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    out, back = sizes
    echo = multiprocessing.Process(target=_echo, args=(master, out, back, wire), daemon=True)
    echo.start()
    port = sdk.PortHandler(os.ttyname(slave))
    port.openPort()
    port.setBaudRate(BAUD)
    packet = [0xFF] * out
    times = []
    try:
        for count in range(reads + 1):  # the first exchange waits for the peer to start
            start = time.perf_counter()
            port.writePort(packet)
            got = 0
            while got < back:  # as the SDKs' rxPacket: poll the port until the bytes are in
                got += len(port.readPort(back - got))
            if count:
                times.append(time.perf_counter() - start)
    finally:
        port.closePort()
        echo.terminate()
        echo.join()
        os.close(master)
        os.close(slave)
    return times


def p99(values: list[float]) -> float:
    """The 99th percentile."""
    return statistics.quantiles(values, n=100)[98]


def _line(what: str, medians: list[float], highs: list[float], wire: float, extra: str) -> None:
    print(
        f"  {what:34s} median {spread(medians, 1 / wire)}x, "
        f"p99 {spread(highs, 1 / wire)}x of {wire * 1e6:.0f} µs{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=1000, help="Sync Reads per round")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of every configuration, interleaved"
    )
    parser.add_argument(
        "--scheduling",
        nargs="+",
        choices=list(SCHEDULING),
        default=list(SCHEDULING),
        help="emulator scheduling",
    )
    parser.add_argument(
        "--busy",
        type=int,
        nargs="+",
        default=[0, 2],
        help="busy (CPU-bound) processes to run beside, one pass each",
    )
    args = parser.parse_args()
    header("sync_read_latency")
    rows = []
    for busy in args.busy:
        burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(busy)]
        for burner in burners:
            burner.start()
        try:
            for robot, (label, *_rest) in BUSES.items():
                print(
                    f"{robot} ({label}), {busy} busy processes, {args.rounds} rounds "
                    f"of {args.reads} reads (median [min-max] over rounds):"
                )
                found: dict[str, tuple[list[float], list[float], int, str]] = {}
                wire, sizes = 1.0, (0, 0)
                for _ in range(args.rounds):
                    for name in [*args.scheduling, "client only"]:
                        if name == "client only":
                            times, failed, got = client_only(robot, args.reads, sizes, wire), 0, ""
                        else:
                            times, wire, failed, got, sizes = round_trips(
                                robot, args.reads, **SCHEDULING[name]
                            )
                        medians, highs, fails, _ = found.get(name, ([], [], 0, ""))
                        medians.append(statistics.median(times))
                        highs.append(p99(times))
                        found[name] = (medians, highs, fails + failed, got)
                for name, (medians, highs, failed, got) in found.items():
                    if name == "client only":
                        _line(
                            "client only (peer on time)",
                            medians,
                            highs,
                            wire,
                            f"; {sizes[0]} bytes out, {sizes[1]} back",
                        )
                        what = f"{robot}, {busy} busy, client only"
                    else:
                        _line(
                            f"emulator {name} ({got})",
                            medians,
                            highs,
                            wire,
                            f"; failed reads {failed} of {args.reads * args.rounds}",
                        )
                        what = f"{robot}, {busy} busy, emulator {name}"
                        rows.append(row(f"{what}: failed Sync Reads", [failed], "", "<= 0"))
                    target = "" if name == "client only" else "<= 1.5"
                    rows.append(
                        row(
                            f"{what}: Sync Read median / wire time",
                            [m / wire for m in medians],
                            "x",
                            target,
                        )
                    )
                    rows.append(
                        row(
                            f"{what}: Sync Read p99 / wire time",
                            [h / wire for h in highs],
                            "x",
                            target,
                        )
                    )
        finally:
            for burner in burners:
                burner.terminate()
    print(f"end {load()}")
    write_summary(rows)


if __name__ == "__main__":
    main()
