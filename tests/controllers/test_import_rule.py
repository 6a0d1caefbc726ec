"""jointlab.controllers never imports jointlab.sim or jointlab.hardware (portability rule)."""

import ast
import subprocess
import sys
from pathlib import Path

import jointlab.controllers

PACKAGE = Path(jointlab.controllers.__file__).parent
FORBIDDEN = ("jointlab.sim", "jointlab.hardware", "pybullet")
#: ``jointlab.faults`` is the backend-neutral rule every loop follows when a robot faults.
ALLOWED_JOINTLAB = (
    "jointlab.controllers",
    "jointlab.robots",
    "jointlab.interface",
    "jointlab.contract",
    "jointlab.joint_vectors",
    "jointlab.errors",
    "jointlab.faults",
)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against the package
                base = "jointlab.controllers"
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def test_every_module_is_parsed():
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 10
    for path in modules:
        assert _imports(path) is not None


def test_no_module_imports_sim_hardware_or_pybullet():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                problems.append(f"{path.name}:{line} imports {name}")
            if name.startswith("jointlab.") and not name.startswith(ALLOWED_JOINTLAB):
                problems.append(
                    f"{path.name}:{line} imports {name} (only robots, interface, "
                    "contract, joint_vectors, errors are allowed)"
                )
    assert problems == []


def test_importing_controllers_loads_no_simulator():
    code = (
        "import sys, jointlab.controllers\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('jointlab.sim', "
        "'jointlab.hardware')) or m == 'pybullet')\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent.parent,
    )
    assert result.stdout.strip() == ""
