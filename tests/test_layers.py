"""The layering rules of docs/architecture.md, checked on every import in jointlab/ (AST).

Every ``import`` and ``from ... import`` counts, wherever it stands (module level, inside a
function, under ``TYPE_CHECKING``): an import that breaks a rule fails here, naming the file,
the line and the rule. Engines found by name through ``importlib``
(:mod:`jointlab.sim.engine`) are not imports and are not seen, which is the point.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jointlab

ROOT = Path(jointlab.__file__).parent
ENGINES = ("pybullet", "mujoco")
#: The third-party engine modules (and their data), and the only engine packages allowed to
#: import each. ``pybullet_data`` is files only (PyBullet's models, also MuJoCo's lookup
#: folder for URDF objects); nothing engine-neutral looks data paths up.
ENGINE_LIBRARIES: dict[str, tuple[str, ...]] = {
    "pybullet": ("pybullet",),
    "pybullet_utils": ("pybullet",),
    "mujoco": ("mujoco",),
    "pybullet_data": ("pybullet", "mujoco"),
}

#: Layers from the ground up: a unit may import only units on lower layers (and itself).
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    ("joint_vectors", "bounded_yaml", "extras", "scheduling"),
    ("interface", "robots"),
    ("contract", "program_checks", "holding"),
    ("faults",),
    ("controllers", "recording", "sim", "view"),
    tuple(f"sim.{engine}" for engine in ENGINES),
    ("connection", "program"),
    ("jointlab",),  # the package's face: jointlab/__init__.py
    ("envs", "hardware"),
    ("identify", "teleop"),
    ("interop",),
    ("cli",),
    ("__main__",),
]
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}

#: Circles allowed: none (the last ones, inside hardware/, were removed under issue 32).
KNOWN_CIRCLES: list[set[str]] = []
#: Folder-level circles allowed: none (the environments' were untangled under issue 44).
KNOWN_FOLDER_CIRCLES: list[set[str]] = []


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    """``(line, imported name)``: modules, and ``module.name`` for ``from module import name``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            names = [f"{base}.{alias.name}" for alias in node.names]
            found += [(node.lineno, name if name in MODULES else base) for name in names]
    return found


def _owner(name: str) -> str | None:
    """The jointlab module that ``name`` (a module or ``module.attribute``) lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _unit(module: str) -> str:
    """The layer unit of a jointlab module: a top-level module or package, or an engine."""
    parts = module.split(".")
    if len(parts) == 1:
        return "jointlab"
    if parts[1] == "sim" and len(parts) > 2 and parts[2] in ENGINES:
        return f"sim.{parts[2]}"
    return parts[1]


def _graph() -> dict[str, list[tuple[int, str]]]:
    """Every jointlab module's imports of other jointlab modules, with their lines."""
    graph = {}
    for module, path in MODULES.items():
        edges = []
        for line, name in _imports(module, path):
            target = _owner(name) if name.split(".")[0] == "jointlab" else None
            if target is not None and target != module:
                edges.append((line, target))
        graph[module] = edges
    return graph


GRAPH = _graph()


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT.parent)}:{line}"


def test_every_module_is_parsed_and_has_a_layer() -> None:
    assert len(MODULES) > 150
    assert {_unit(module) for module in MODULES} <= set(RANK)


def test_no_unit_imports_a_layer_above_its_own() -> None:
    problems = [
        f"{_where(module, line)} ({_unit(module)}) imports {target} ({_unit(target)}, a layer up)"
        for module, edges in GRAPH.items()
        for line, target in edges
        if _unit(target) != _unit(module) and RANK[_unit(target)] >= RANK[_unit(module)]
    ]
    assert problems == []


def test_engines_are_imported_only_by_themselves() -> None:
    """Engines never import each other; nothing engine-neutral imports an engine package."""
    problems = [
        f"{_where(module, line)} imports the engine package {target}"
        for module, edges in GRAPH.items()
        for line, target in edges
        if _unit(target).startswith("sim.") and _unit(target) != _unit(module)
    ]
    assert problems == []


def _library_problems(module: str, path: Path) -> list[str]:
    """Imports of engine libraries by ``module`` outside the engine packages allowed them."""
    problems = []
    for line, name in _imports(module, path):
        engines = ENGINE_LIBRARIES.get(name.split(".")[0])
        if engines is not None and _unit(module) not in {f"sim.{e}" for e in engines}:
            problems.append(f"{path}:{line} imports {name}")
    return problems


def test_engine_libraries_are_imported_only_by_their_engine_package() -> None:
    problems = [p for module, path in MODULES.items() for p in _library_problems(module, path)]
    assert problems == []


def test_the_engine_library_rule_sees_data_path_lookups(tmp_path) -> None:
    """The engine-neutral scene once looked up pybullet_data inside a method."""
    path = tmp_path / "scene.py"
    path.write_text("def add_urdf():\n    import pybullet_data\n")
    assert _library_problems("jointlab.sim.scene", path) == [f"{path}:2 imports pybullet_data"]
    assert _library_problems("jointlab.sim.mujoco.world", path) == []


def test_controllers_never_import_sim_or_hardware() -> None:
    problems = [
        f"{_where(module, line)} imports {target}"
        for module, edges in GRAPH.items()
        if _unit(module) == "controllers"
        for line, target in edges
        if _unit(target) in ("sim", "hardware") or _unit(target).startswith("sim.")
    ]
    assert problems == []


def _circles(graph: dict[str, list[tuple[int, str]]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for _, target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(component)
    return circles


def test_no_import_circles() -> None:
    unexpected = [sorted(c) for c in _circles(GRAPH) if c not in KNOWN_CIRCLES]
    assert unexpected == []


def _folder(module: str) -> str:
    """The folder (package) a module lives in; a package's ``__init__`` is a node of its own.

    The modules directly in ``jointlab/`` are each their own unit (the layers above rank
    them: ``errors`` at the bottom, the package's face above the subpackages). A package's
    ``__init__`` is its face: re-exporting what its subfolders hold is not a circle.
    """
    if MODULES[module].name == "__init__.py":
        return f"{module}.__init__"
    return module if module.count(".") == 1 else module.rpartition(".")[0]


def _folder_graph() -> dict[str, list[tuple[int, str]]]:
    """Folder -> the other folders its modules import (with one line each, for messages)."""
    graph: dict[str, list[tuple[int, str]]] = {}
    for module, edges in GRAPH.items():
        folder = _folder(module)
        graph.setdefault(folder, [])
        for line, target in edges:
            other = _folder(target)
            if other != folder and other not in {t for _, t in graph[folder]}:
                graph[folder].append((line, other))
    for edges in list(graph.values()):
        for _, target in edges:
            graph.setdefault(target, [])
    return graph


def test_no_folder_level_circles() -> None:
    """No circle between folders either: a package never imports one that imports it back.

    A package and its parent count as two folders (``hardware`` and ``hardware.servo_host``):
    a child may import its parent's modules, and the parent must then not import the child.
    """
    unexpected = [sorted(c) for c in _circles(_folder_graph()) if c not in KNOWN_FOLDER_CIRCLES]
    assert unexpected == []


def test_servo_folders_are_layered() -> None:
    """The servo vendors sit between the shared servo folder and the host and emulated sides.

    ``servo`` (control tables, the Vendor record) <- ``dynamixel``, ``feetech`` <-
    ``vendors`` <- ``servo_host``, ``servo_emulator``: the two sides never switch on a
    vendor's name, and the vendors never import a side.
    """
    graph = _folder_graph()
    sides = ("jointlab.hardware.servo_host", "jointlab.hardware.servo_emulator")
    for vendor in ("jointlab.hardware.dynamixel", "jointlab.hardware.feetech"):
        assert not {t for _, t in graph[vendor]} & set(sides), vendor
    assert not {t for _, t in graph["jointlab.hardware.servo"]} & {
        "jointlab.hardware.dynamixel",
        "jointlab.hardware.feetech",
        *sides,
    }


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ({"a": [(1, "b")], "b": [(2, "a")]}, "circle"),
        ({"a": [(1, "b")], "b": [(1, "c")], "c": [(3, "a")], "d": []}, "circle"),
        ({"a": [(1, "b")], "b": []}, None),
    ],
)
def test_the_circle_finder_finds_circles(source, rule) -> None:
    assert bool(_circles(source)) == (rule == "circle")
