"""The robot files the docs show: YAML in ``docs/*.md`` with ``actuators:``.

A robot file is a ``yaml`` code block, or a here-document a shell block writes
(``cat > robot.yaml <<'EOF'`` ... ``EOF``).
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
_BLOCK = re.compile(r"```yaml\n(.*?)```|cat > \S+\.ya?ml <<'(\w+)'\n(.*?)^\2$", re.S | re.M)


def doc_robot_files() -> dict[str, str]:
    """``"<doc file>:<robot name>"`` -> the robot file's YAML text, in document order."""
    found = {}
    for doc in sorted(DOCS.glob("*.md")):
        for match in _BLOCK.finditer(doc.read_text(encoding="utf-8")):
            block = match.group(1) or match.group(3)
            if re.search(r"^actuators:", block, re.M):
                name = re.search(r"^name:\s*(\S+)", block, re.M)
                found[f"{doc.name}:{name.group(1) if name else '?'}"] = block
    return found


def five_minute_robot(folder: Path) -> Path:
    """The geometry-only robot of docs/robot-files.md, written to ``folder``."""
    path = folder / "five_minute_robot.yaml"
    path.write_text(doc_robot_files()["robot-files.md:five_minute_robot"])
    return path
