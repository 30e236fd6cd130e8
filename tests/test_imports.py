"""The import graph: no cycles, the layers in order, and a light shim."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = {"extrap_plugins": ROOT / "extrap_plugins", "extrap_plugins.readers": ROOT / "readers",
           "extrap_plugins.instrument": ROOT / "instrument"}


def modules() -> dict[str, pathlib.Path]:
    found = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imports_of(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """Modules of ours that ``name`` imports anywhere (lazy imports too; not ``if TYPE_CHECKING:`` blocks)."""
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            # ``from package import submodule`` needs the submodule; the package itself only for other names
            targets = submodules + ([base] if len(submodules) < len(node.names) else [])
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):  # parents load first anyway
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return result


def test_no_module_imports_itself_through_others():
    assert cycles(graph()) == []


def test_the_data_layer_and_the_plugins_never_import_the_facade_or_streaming():
    above = {"extrap_plugins.api", "extrap_plugins.streaming", "extrap_plugins.cli"}
    edges = graph()  # (parsed once: it read every module again per name)
    offenders = {name: sorted(targets & above) for name, targets in edges.items()
                 if targets & above and name.startswith(("extrap_plugins.readers", "extrap_plugins.modelers",
                                                         "extrap_plugins.exporters", "extrap_plugins.instrument"))}
    offenders.update({name: sorted(edges[name] & (above | {"extrap_plugins.engine"}))
                      for name in ("extrap_plugins.experiment", "extrap_plugins.models", "extrap_plugins.joining",
                                   "extrap_plugins.formatting", "extrap_plugins.options", "extrap_plugins.files")
                      if edges[name] & (above | {"extrap_plugins.engine"})})
    assert offenders == {}


def test_the_shim_imports_without_numpy_or_the_modelling_stack():
    code = ("import sys; from extrap_plugins import instrument; "
            "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('extrap_plugins.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    loaded = eval(result.stdout)  # a printed list of names
    assert "numpy" not in loaded
    assert not [m for m in loaded if m.split(".")[1] in ("api", "engine", "modelers", "models", "experiment")]


def test_the_package_names_load_on_first_use():
    code = ("import sys, extrap_plugins; before = 'extrap_plugins.api' in sys.modules; "
            "extrap_plugins.model; print(before, 'extrap_plugins.api' in sys.modules, callable(extrap_plugins.model))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert result.stdout.split() == ["False", "True", "True"]


def test_every_public_name_is_in_all_and_loads():
    import extrap_plugins

    assert set(extrap_plugins._EXPORTS) | {"__version__"} == set(extrap_plugins.__all__)
    for name in extrap_plugins.__all__:
        assert getattr(extrap_plugins, name) is not None
