"""What the subcommands share: the console, the parser, the ROBOT argument, run folders.

Conventions every subcommand follows (``jointlab --help`` states them):

* **The robot is the first positional argument, ROBOT**, in every subcommand that uses
  one: a built-in name (``arm6``), a robot file (``my_robot.yaml``, ``.urdf``) or a robot
  URL (``sim://arm6?control_dt=0.004``, ``emulated://arm6``,
  ``serial:///dev/ttyACM0?robot=arm6``). A name or a file means ``sim://`` of it.
* **Outputs go to one folder per run**, ``OUT/NAME`` (``--out``, default ``runs``;
  ``--name``, default derived from the subcommand and its inputs). A folder that holds a
  previous run is never replaced without ``--force``; a run is written to a hidden
  ``.NAME.partial`` folder first and moved into place only when it succeeds (a failed run
  leaves ``NAME.failed`` and the previous run untouched).
* **User errors exit with status 2 and one line** on stderr, with a "did you mean"
  suggestion where a name was mistyped; ``--verbose`` shows tracebacks and PyBullet's own
  output.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import re
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import parse_qs, urlsplit

from rich.console import Console

from jointlab.errors import ConfigurationError

__all__ = [
    "HelpFormatter",
    "Parser",
    "add_output_arguments",
    "add_robot_argument",
    "check_backend",
    "check_display",
    "console",
    "did_you_mean",
    "error_console",
    "positive_float",
    "positive_int",
    "robot_label",
    "robot_url",
    "run_folder",
    "write_text",
]

#: Where every subcommand prints (wide tables when stdout is not a terminal).
console = Console(width=None if sys.stdout.isatty() else 140)
#: Where errors go.
error_console = Console(stderr=True, width=None if sys.stderr.isatty() else 140)


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices``, or an empty string."""
    hint = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {hint[0]!r}?" if hint else ""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows defaults in ``--help`` (but not the meaningless ``None`` and ``False``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.default == []:
            return action.help
        return super()._get_help_string(action)


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)")


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors and "did you mean" suggestions (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` with a hint on one line and exit with status 2."""
        match = _INVALID_CHOICE.search(message)
        if match:
            choices = re.findall(r"'([^']*)'", match.group("choices"))
            message += did_you_mean(match.group("word"), choices)
        elif message.startswith("unrecognized arguments:"):
            words = message.split(":", 1)[1].split()
            options = [o for o in self._option_string_actions if o.startswith("--")]
            flags = [w.split("=", 1)[0] for w in words if w.startswith("--")]
            message += did_you_mean(flags[0], options) if flags else ""
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def positive_int(text: str) -> int:
    """An ``argparse`` type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An ``argparse`` type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


# ------------------------------------------------------------------------------ ROBOT
def add_robot_argument(
    parser: argparse.ArgumentParser, *, optional: bool = False, urls: bool = True
) -> None:
    """Add the ROBOT positional argument (see the module docstring)."""
    what = "built-in name, robot file" + (
        " or robot URL (sim://, emulated://, serial://)" if urls else ""
    )
    if optional:
        parser.add_argument("robot", metavar="ROBOT", nargs="?", default="arm6", help=what)
    else:
        parser.add_argument("robot", metavar="ROBOT", help=what)


def robot_url(robot: str, *, gui: bool = False) -> str:
    """The robot URL of a ROBOT argument; checks it before anything connects.

    A name or a file becomes ``sim://`` of it (loaded here, so a typo fails at once with a
    suggestion); a URL is parsed. ``gui`` adds ``gui=1`` to a ``sim://`` robot.

    Raises:
        ConfigurationError: a malformed URL, or ``gui`` with a non-simulated robot or with a
            URL that sets ``gui`` itself.
        DescriptionError: an unknown robot name or an invalid robot file.
    """
    from jointlab.connection import parse_url, query_bool

    if "://" not in robot:
        from jointlab.robots import load_robot

        load_robot(robot)
        if gui:
            check_display(robot)
        return f"sim://{robot}" + ("?gui=1" if gui else "")
    parsed = parse_url(robot)
    check_backend(parsed)
    if gui:
        if parsed.scheme != "sim":
            raise ConfigurationError(f"--gui needs a simulated robot; {robot} is not sim://")
        if "gui" in parsed.query:
            raise ConfigurationError(f"--gui conflicts with gui= in {robot}: give one of them")
        check_display(robot)
        return robot + ("&" if "?" in robot else "?") + "gui=1"
    if parsed.scheme == "sim" and _flag(parsed.query.get("gui", "0"), query_bool):
        check_display(robot)
    return robot


def _flag(text: str, parse: Any) -> bool:
    """A query flag's value; an invalid one is False here (connect() names it)."""
    try:
        return bool(parse(text))
    except ValueError:
        return False


def check_display(robot: str) -> None:
    """Raise before anything starts when the engine's GUI cannot open here (no display).

    Raises:
        ConfigurationError: neither DISPLAY nor WAYLAND_DISPLAY is set (on Linux).
    """
    from jointlab.sim.quiet import has_display

    if not has_display():
        raise ConfigurationError(
            f"{robot}: the engine's GUI (--gui, gui=1) needs a display, but neither DISPLAY nor "
            "WAYLAND_DISPLAY is set: run without it, start a display (e.g. xvfb-run), or "
            "watch in the browser (jointlab view ROBOT)"
        )


def check_backend(parsed: Any) -> None:
    """What a robot URL's backend needs installed, checked before anything starts.

    A servo arm (``feetech://``, ``dynamixel://``, ``emulated://`` of a robot with a ``bus``
    section) needs its vendor's SDK; a missing one is one line (exit status 2) before a run
    folder is made or an emulator started.

    Args:
        parsed: A :class:`jointlab.connection.RobotURL`.

    Raises:
        MissingDependencyError: the vendor SDK is not installed (names the package).
        DescriptionError: ``emulated://`` of an unknown robot name or an invalid file.
    """
    from jointlab.hardware.servo_host.driver import check_sdk
    from jointlab.hardware.vendors import VENDORS

    protocol = parsed.scheme if parsed.scheme in VENDORS else None
    if (
        parsed.scheme == "emulated"
        and parsed.target
        and parsed.query.get("bus") != "jointlab"
        and parsed.query.get("device") != "firmware"
    ):
        from jointlab.robots import load_robot

        bus = load_robot(parsed.target).bus
        protocol = None if bus is None else bus.protocol.value
    if protocol is not None:
        check_sdk(protocol, parsed.url)


def robot_label(robot: str) -> str:
    """A short file-name-safe label of a ROBOT, naming its backend and any non-default engine.

    ``arm6`` and ``sim://arm6`` -> ``arm6``; ``sim://arm6?engine=mujoco`` -> ``arm6-mujoco``;
    ``emulated://arm6`` -> ``emulated-arm6``: runs of one program on two backends or engines
    get two folders.
    """
    if "://" in robot:
        from jointlab.sim.engine import DEFAULT_ENGINE

        parts = urlsplit(robot)
        scheme = parts.scheme.lower()
        target = robot.split("://", 1)[1].split("?", 1)[0]
        stem = Path(target.rstrip("/")).stem or target
        label = stem if scheme == "sim" else f"{scheme}-{stem}"
        engine = parse_qs(parts.query).get("engine", [DEFAULT_ENGINE])[-1].lower()
        if engine != DEFAULT_ENGINE:
            label = f"{label}-{engine}"
    else:
        label = Path(robot).stem
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "robot"


# ------------------------------------------------------------------------------ outputs
def add_output_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--out``, ``--name`` and ``--force`` (see the module docstring)."""
    parser.add_argument(
        "--out", default="runs", metavar="DIR", help=f"parent folder of the run folder ({what})"
    )
    parser.add_argument("--name", help="run folder name (default: from the command and inputs)")
    parser.add_argument(
        "--force", action="store_true", help="replace a previous run of the same name"
    )


def _check_name(name: str) -> str:
    if not name or name in (".", "..") or "/" in name or name.startswith("."):
        raise ConfigurationError(f"--name {name!r}: expected a plain folder name")
    return name


def planned_folder(args: argparse.Namespace, default_name: str) -> Path:
    """``OUT/NAME`` for this run; raises before any work if it holds a run and no ``--force``."""
    name = _check_name(args.name or re.sub(r"[^A-Za-z0-9_.-]+", "-", default_name))
    folder = Path(args.out).expanduser() / name
    if folder.exists() and not folder.is_dir():
        raise ConfigurationError(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not args.force:
        raise ConfigurationError(
            f"{folder} holds a previous run; pass --force to replace it or --name to keep both"
        )
    return folder


@contextmanager
def run_folder(folder: Path) -> Iterator[Path]:
    """Yield a fresh work folder that becomes ``folder`` only if the block succeeds.

    On an exception (Ctrl-C included) the partial outputs are moved to ``NAME.failed``
    beside it, the previous run in ``folder`` is left as it was, and the exception goes on.
    A run that wrote nothing never started (a precondition failed, a program was refused
    before the robot moved): its work folder is removed and no ``NAME.failed`` is left.
    """
    partial = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    created = [p for p in (partial, *partial.parents) if not p.exists()]
    partial.mkdir(parents=True)
    try:
        yield partial
    except BaseException:
        if not any(partial.iterdir()):
            for empty in created:  # the parents it made too (runs/), deepest first
                with contextlib.suppress(OSError):
                    empty.rmdir()
            raise
        failed = folder.with_name(f"{folder.name}.failed")
        shutil.rmtree(failed, ignore_errors=True)
        partial.rename(failed)
        error_console.print(f"partial outputs of the failed run: {failed}", highlight=False)
        raise
    if folder.exists():
        shutil.rmtree(folder)
    partial.rename(folder)


def check_new_file(path: str | Path, force: bool) -> Path:
    """``path`` as a Path; raises if it exists and ``force`` is not set."""
    path = Path(path).expanduser()
    if path.exists() and not force:
        raise ConfigurationError(f"{path} exists; pass --force to replace it")
    return path


def write_text(target: str, text: str, force: bool = False) -> None:
    """Write ``text`` to the file ``target``, or to stdout when ``target`` is ``-``.

    An existing file is replaced only with ``force``.
    """
    if target == "-":
        sys.stdout.write(text)
        return
    path = check_new_file(target, force)
    path.write_text(text)
    console.print(f"wrote {path}", highlight=False)


def jsonable(value: Any) -> Any:
    """Numbers and arrays as plain JSON values (for ``summary.json`` files)."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
