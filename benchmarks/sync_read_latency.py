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
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time

from _report import header, load, row, write_summary

from jointlab.hardware.servo.emulator import BITS_PER_BYTE
from jointlab.hardware.servo.emulator_process import BusEmulatorProcess

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


def round_trips(robot: str, reads: int) -> tuple[list[float], float, int]:
    """Seconds per Sync Read, the wire time of one, and the failed reads."""
    import importlib

    _, module_name, protocol, address, size, delay_address = BUSES[robot]
    sdk = importlib.import_module(module_name)
    with BusEmulatorProcess(robot) as emulator:
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
    return times, wire, failed


def p99(values: list[float]) -> float:
    """The 99th percentile."""
    return statistics.quantiles(values, n=100)[98]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=2000)
    args = parser.parse_args()
    header("sync_read_latency")
    rows = []
    for busy in (0, 2):
        burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(busy)]
        for burner in burners:
            burner.start()
        try:
            for robot, (label, *_rest) in BUSES.items():
                times, wire, failed = round_trips(robot, args.reads)
                median, high = statistics.median(times), p99(times)
                what = f"{robot}, {busy} busy processes"
                print(f"  {what:28s} ({label}): wire {wire * 1e6:6.0f} µs; round trip median "
                      f"{median * 1e6:6.0f} µs ({median / wire:.2f}x), p99 {high * 1e6:6.0f} µs "
                      f"({high / wire:.2f}x); failed reads {failed} of {args.reads}")  # fmt: skip
                rows.append(row(f"{what}: Sync Read median / wire time", [median / wire], "x",
                                "<= 1.5"))  # fmt: skip
                rows.append(row(f"{what}: Sync Read p99 / wire time", [high / wire], "x",
                                "<= 1.5"))  # fmt: skip
        finally:
            for burner in burners:
                burner.terminate()
    print(f"end {load()}")
    write_summary(rows)


if __name__ == "__main__":
    main()
