"""How many corrupted NJOINT frames pass the frame checks: CRC-32 (v2) against CRC-16 (v1).

Run from the repository root (10 million frames by default, a few minutes)::

    PYTHONPATH=. .venv/bin/python benchmarks/crc_false_accept.py
    PYTHONPATH=. .venv/bin/python benchmarks/crc_false_accept.py --frames 1000000

A 6-DoF NJOINT frame is corrupted as a noisy link corrupts it (the emulator's fault
injection, ``jointlab.hardware.emulator.faults.corrupt``): every byte on the wire, the
delimiters included, is XORed with a random non-zero value with probability ``--rate``,
and one byte more is always hit, so every frame counts as corrupted. The corrupted frames go
back to back through the protocol's own streaming decoder (``FrameDecoder``: COBS, CRC,
header, payload); a **false accept** is any frame it hands over that is not the frame that
was sent. The same corrupted stream of version 1 frames (CRC-16) is checked by the version 1
rule (COBS, CRC-16 of the run is 0) for comparison, in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from binascii import crc_hqx

import numpy as np
from cobs import cobs

from jointlab.hardware.protocol import (
    HEADER,
    FrameDecoder,
    NJointCommand,
    encode_frame,
)
from jointlab.interface import NJointAction

BATCH = 50_000


def njoint_frames() -> tuple[bytes, bytes]:
    """A 6-DoF NJOINT frame in version 2 (CRC-32) and version 1 (CRC-16) format."""
    rng = np.random.default_rng(0)
    action = NJointAction.TorqueAndPosition(rng.normal(size=6), rng.normal(size=6))
    message = NJointCommand.from_action(action)
    v2 = encode_frame(message, 7)
    body = HEADER.pack(1, 1, 16, 7, message.size) + message.pack()
    v1 = b"\x00" + cobs.encode(body + crc_hqx(body, 0xFFFF).to_bytes(2, "big")) + b"\x00"
    return v2, v1


def corrupted(frame: bytes, count: int, rate: float, rng: np.random.Generator) -> bytes:
    """``count`` copies of ``frame``, each with at least one byte XORed, back to back."""
    copies = np.tile(np.frombuffer(frame, np.uint8), (count, 1))
    hit = rng.random(copies.shape) < rate
    hit[np.arange(count), rng.integers(0, copies.shape[1], count)] = True  # at least one
    copies[hit] ^= rng.integers(1, 256, int(hit.sum()), dtype=np.uint8)
    return copies.tobytes()


def v2_false_accepts(stream: bytes, sent: bytes) -> tuple[int, int]:
    """Frames the v2 decoder accepted that differ from ``sent``; frames it accepted at all."""
    frames = FrameDecoder().feed(stream)
    original = FrameDecoder().feed(sent)[0]
    wrong = sum(1 for f in frames if f.seq != original.seq or f.message != original.message)
    return wrong, len(frames)


def v1_false_accepts(stream: bytes, sent: bytes) -> tuple[int, int]:
    """The same, with version 1's rule: a COBS run whose CRC-16 (over all of it) is 0."""
    good_body = cobs.decode(sent.strip(b"\x00"))
    wrong = accepted = 0
    for chunk in stream.split(b"\x00"):
        if len(chunk) < 10:
            continue
        try:
            raw = cobs.decode(chunk)
        except cobs.DecodeError:
            continue
        if len(raw) >= 9 and crc_hqx(raw, 0xFFFF) == 0:
            accepted += 1
            wrong += raw != good_body
    return wrong, accepted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000_000, help="corrupted frames")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.01,
        help="probability that a byte is corrupted (plus one per frame)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    v2, v1 = njoint_frames()
    rng = np.random.default_rng(args.seed)
    print(
        f"{args.frames:,} corrupted 6-DoF NJOINT frames ({len(v2)} bytes v2, {len(v1)} v1), "
        f"byte error rate {args.rate} + 1 byte per frame, seed {args.seed}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )
    totals = {"v2": [0, 0], "v1": [0, 0]}
    start = time.perf_counter()
    done = 0
    while done < args.frames:
        count = min(BATCH, args.frames - done)
        for name, frame, check in (("v2", v2, v2_false_accepts), ("v1", v1, v1_false_accepts)):
            wrong, accepted = check(corrupted(frame, count, args.rate, rng), frame)
            totals[name][0] += wrong
            totals[name][1] += accepted
        done += count
        if done % 1_000_000 == 0:
            print(
                f"  {done:,} frames: CRC-32 false accepts {totals['v2'][0]}, CRC-16 "
                f"{totals['v1'][0]}",
                flush=True,
            )
    elapsed = time.perf_counter() - start
    for name, crc in (("v2", "CRC-32"), ("v1", "CRC-16")):
        wrong, accepted = totals[name]
        print(
            f"{name} ({crc}): {wrong} false accepts in {args.frames:,} corrupted frames "
            f"({wrong / args.frames:.2e}); runs with a good CRC: {accepted}"
        )
    print(f"{elapsed:.0f} s; load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
