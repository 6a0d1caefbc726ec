"""A minimal ``torchvision`` for LeRobot's dataset code where the real one cannot load.

LeRobot 0.4.4 imports torchvision at module level in its dataset code
(``lerobot.datasets.utils``: ``transforms.ToTensor``; ``lerobot.datasets.video_utils``:
``torchvision.io.VideoReader`` for its ``pyav`` decoding backend) and in its robot processors
(``transforms.functional``). PyPI's torchvision wheels are CUDA builds that do not load next to
the CPU build of torch this project pins (``operator torchvision::nms does not exist``), and
torchcodec (LeRobot's default decoder) is not installed either.

:func:`ensure_torchvision` leaves a working torchvision alone. Otherwise it installs, in
``sys.modules``, the few pieces LeRobot's dataset path uses, implemented on the same library
torchvision's ``pyav`` backend wraps (PyAV):

* ``torchvision.io.VideoReader(path, "video")``: ``seek(seconds, keyframes_only=...)``,
  iteration yielding ``{"data": uint8 tensor (3, H, W), "pts": seconds}``, ``container``;
* ``torchvision.set_video_backend`` / ``get_video_backend`` (``"pyav"`` only);
* ``torchvision.transforms.ToTensor`` (HWC uint8 -> CHW float32 in [0, 1]).

Everything else raises ``RuntimeError`` naming the missing function when called, so nothing
passes silently through it. LeRobot's own code (frame selection, timestamp tolerance, the
float conversion) runs unchanged on top; datasets are then opened with
``video_backend="pyav"``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["STAND_IN_ATTRIBUTE", "ensure_torchvision", "is_stand_in"]

#: Attribute set on the stand-in package (``torchvision.<this>`` is True).
STAND_IN_ATTRIBUTE = "__jointlab_stand_in__"


def is_stand_in() -> bool:
    """True when the ``torchvision`` in ``sys.modules`` is this module's stand-in."""
    module = sys.modules.get("torchvision")
    return bool(getattr(module, STAND_IN_ATTRIBUTE, False))


def _real_torchvision_works() -> bool:
    try:
        io = importlib.import_module("torchvision.io")
        importlib.import_module("torchvision.transforms.functional")
    except Exception:  # any failure to load (ImportError, RuntimeError, OSError) means: no
        return False
    return hasattr(io, "VideoReader") or importlib.util.find_spec("torchcodec") is not None


def ensure_torchvision() -> bool:
    """Make ``import torchvision`` work for LeRobot's dataset code.

    Returns:
        True when the stand-in is in use (open LeRobot datasets with ``video_backend="pyav"``),
        False when the real torchvision loads.
    """
    if is_stand_in():
        return True
    if "torchvision" in sys.modules and _real_torchvision_works():
        return False
    if "torchvision" not in sys.modules and _real_torchvision_works():
        return False
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]  # a half-imported real one, or another stand-in
    _install()
    return True


class _Unavailable:
    """A stand-in attribute: calling it raises, naming what is missing."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{self._name} is not available: torchvision cannot load next to this torch "
            "build, and JointLab's stand-in (jointlab.interop.torchvision_stand_in) only "
            "provides video decoding and ToTensor"
        )


def _module(name: str, doc: str) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__spec__ = importlib.machinery.ModuleSpec(name, loader=None, is_package=True)
    module.__path__ = []  # a package, so submodule imports resolve through sys.modules
    setattr(module, STAND_IN_ATTRIBUTE, True)

    def __getattr__(attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _Unavailable(f"{name}.{attribute}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


class ToTensor:
    """``torchvision.transforms.ToTensor``: an HWC uint8 image to CHW float32 in [0, 1]."""

    def __call__(self, picture: Any) -> Any:
        import numpy as np
        import torch

        array = np.asarray(picture)
        if array.ndim == 2:
            array = array[:, :, None]
        tensor = torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))
        return tensor.float().div(255.0) if array.dtype == np.uint8 else tensor.float()


class VideoReader:
    """``torchvision.io.VideoReader`` on PyAV (the ``pyav`` backend's behaviour).

    Args:
        path: Video file.
        stream: ``"video"`` (the first video stream).
    """

    def __init__(self, path: str, stream: str = "video") -> None:
        import av

        if stream != "video":
            raise RuntimeError(f"VideoReader stand-in reads the video stream only, not {stream!r}")
        self.container = av.open(str(path))
        self._stream = self.container.streams.video[0]
        self._frames: Iterator[Any] = self.container.decode(self._stream)

    def seek(self, seconds: float, keyframes_only: bool = False) -> VideoReader:
        """Go to the last key frame at or before ``seconds`` (PyAV seeks key frames only)."""
        del keyframes_only  # PyAV seeks key frames either way, as torchvision's pyav backend
        base = self._stream.time_base
        self.container.seek(
            int(seconds / base), stream=self._stream, backward=True, any_frame=False
        )
        self._frames = self.container.decode(self._stream)
        return self

    def __iter__(self) -> VideoReader:
        return self

    def __next__(self) -> dict[str, Any]:
        import torch

        frame = next(self._frames)
        rgb = frame.to_ndarray(format="rgb24")
        return {
            "data": torch.from_numpy(rgb).permute(2, 0, 1).contiguous(),
            "pts": float(frame.pts * self._stream.time_base),
        }


def _transform_base() -> type:
    """``torchvision.transforms.v2.Transform``: a base class LeRobot subclasses at import."""
    import torch

    class Transform(torch.nn.Module):
        """Stand-in base of image transforms: applying one raises."""

        def forward(self, *inputs: Any) -> Any:
            raise RuntimeError(f"{type(self).__name__}: image transforms need the real torchvision")

    return Transform


def _install() -> None:
    root = _module("torchvision", "JointLab's torchvision stand-in (see its module docstring).")
    backend = {"name": "pyav"}

    def set_video_backend(name: str) -> None:
        if name != "pyav":
            raise RuntimeError(f"the torchvision stand-in decodes with pyav only, not {name!r}")
        backend["name"] = name

    root.set_video_backend = set_video_backend  # type: ignore[attr-defined]
    root.get_video_backend = lambda: backend["name"]  # type: ignore[attr-defined]
    root.__version__ = "0.0+jointlab.stand.in"  # type: ignore[attr-defined]
    io = _module("torchvision.io", "Video decoding on PyAV.")
    io.VideoReader = VideoReader  # type: ignore[attr-defined]
    transforms = _module("torchvision.transforms", "ToTensor only.")
    transforms.ToTensor = ToTensor  # type: ignore[attr-defined]
    functional = _module("torchvision.transforms.functional", "Nothing: every call raises.")
    v2 = _module("torchvision.transforms.v2", "Nothing: every call raises.")
    v2.Transform = _transform_base()  # type: ignore[attr-defined]
    v2.functional = functional  # type: ignore[attr-defined]
    transforms.functional = functional  # type: ignore[attr-defined]
    transforms.v2 = v2  # type: ignore[attr-defined]
    root.io, root.transforms = io, transforms  # type: ignore[attr-defined]
    for module in (root, io, transforms, functional, v2):
        sys.modules[module.__name__] = module
