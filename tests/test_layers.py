"""The import structure of ``server/agentls``: imports point down the layers only, with no cycles.

Every import counts: at module level, inside functions and under ``TYPE_CHECKING``. The layers,
from the ground up, are those of ``../shared/design.md``: the wire schema and small leaves, the
model layer (``ai``), the loop kernel (``agent``), the tools, MCP (a source of tools), the
session, the fronts (and the protocol's Python client), the command line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "agentls"

LAYERS: dict[str, int] = {
    "agentls": 0,
    "agentls.protocol": 0,
    "agentls.protocol_methods": 0,
    "agentls.json_depth": 0,
    "agentls.thinking_levels": 0,
    "agentls.terminal_text": 0,
    "agentls.http_warm_up": 0,
    "agentls.data": 0,
    "agentls.data_dir": 0,
    "agentls.ai": 1,
    "agentls.agent": 2,
    "agentls.tools": 3,
    "agentls.mcp": 4,
    "agentls.session": 5,
    "agentls.fronts": 6,
    "agentls.client": 6,
    "agentls.client_rpc": 6,
    "agentls.cli": 7,
    "agentls.bridge": 7,
    "agentls.__main__": 7,
}
"""Each module's layer, by its longest listed prefix (a new top-level module must be placed here)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer(module: str) -> int:
    prefix = module
    while prefix not in LAYERS:
        prefix = prefix.rpartition(".")[0]
        assert prefix not in ("", "agentls"), f"{module} is in no layer: place it in LAYERS"
    return LAYERS[prefix]


def imported(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The project modules that ``module`` imports, wherever the import statement stands."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name.startswith("agentls") and name != module:
                yield name


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_import_points_down_the_layers_or_stays_in_its_own() -> None:
    graph = import_graph()
    upward = sorted(
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer(target) > layer(module)
    )
    assert upward == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_circle_and_passes_a_tree() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_session_layer_names_no_json_rpc_method() -> None:
    named = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}"
        for path in (PACKAGE / "session").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("agent/")
    )
    assert named == []
