"""The house's imports run one way: no module of gpukit imports, directly or through others, a
module that imports it back (docs/ARCHITECTURE.md). Every import counts, a deferred one inside a
function too: a circle that only works because an import waits is a circle all the same."""

from __future__ import annotations

import ast
from pathlib import Path

import gpukit

ROOT = Path(gpukit.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gpukit modules ``name`` imports: a name imported from a package is its submodule where
    there is one, else the package itself."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    out.add(sub)
                elif base in modules:
                    out.add(base)
    out.discard(name)
    return out


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_one_that_imports_it_back():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # the walk saw the house
    assert _circles(graph) == []


def test_no_package_imports_one_that_imports_it_back():
    """Between packages too (``bench`` and ``models``, ``specs`` and ``precision``): a folder is one
    concern, and its imports run one way."""
    modules = _modules()

    def top(name: str) -> str:
        return ".".join(name.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph.setdefault(top(name), set()).update(
            top(m) for m in _imports(name, path, modules) if top(m) != top(name)
        )
    assert len(graph) > 20
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_at_most_twelve_flat_modules_stay_at_the_top():
    """The base modules every layer uses stay flat; every concern has its package."""
    flat = sorted(p.stem for p in ROOT.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(flat) <= 12, flat


def test_a_moved_module_is_found_at_its_old_name_as_the_same_module():
    """For one release ``gpukit.cost`` and the other old names give the modules that moved: one
    object, so that a patch of one is a patch of the other, and each keeps its own place."""
    import importlib

    from gpukit._moved import MOVED

    for old, new in MOVED.items():
        module = importlib.import_module(old)
        assert module is importlib.import_module(new), old
        assert module.__name__ == new and module.__spec__.name == new, old
    from gpukit import cost
    from gpukit.prices import cost as moved

    assert cost is moved
