"""The layers import downward: no module imports from a layer above its own.

Every module's imports are read with ``ast`` (imports inside functions too) and checked against
the table of allowed edges below. ``EXCEPTIONS`` names today's upward imports one by one, each
with the reason it is still there; an exception no longer used fails the test, so the table only
shrinks.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]

# layer -> the module prefixes in it (the longest matching prefix decides)
LAYERS = {
    "base": ("sqlext.errors", "sqlext.version"),
    "log": ("sqlext.log",),
    # the engine's base: the Spark session and the file-system bridge it installs
    "session": ("sqlext.engine.session", "sqlext.engine.io.storage_bridge",
                "sqlext.engine.io.hadoop_store"),
    "catalog": ("sqlext.catalog",),
    "engine": ("sqlext.engine",),
    "api": ("sqlext.api", "sqlext.tables", "sqlext.names"),
    "sql": ("sqlext.sql",),
    "thrift": ("sqlext.thrift",),
    "drop_in": ("sqlext.drop_in",),
    "package": ("sqlext", "sqlext.delta_compat"),
    "dbt": ("dbt.adapters.sqlext", "dbt.include.sqlext"),
}

_BELOW_API = {"base", "log", "session", "catalog", "engine"}
# layer -> the layers it may import from (besides its own)
ALLOWED = {
    "base": set(),
    "log": {"base"},
    "session": {"base", "log"},
    "catalog": {"base", "log", "session"},
    "engine": {"base", "log", "session"},
    "api": _BELOW_API,
    "sql": _BELOW_API | {"api"},
    "thrift": _BELOW_API | {"api", "sql"},
    "drop_in": _BELOW_API | {"api", "sql"},
    "package": _BELOW_API | {"api", "sql", "thrift", "drop_in"},
    "dbt": _BELOW_API | {"api", "sql", "thrift", "drop_in", "package"},
}

# third-party packages a layer must never import
FORBIDDEN_PACKAGES = {"base": ("pyspark",), "log": ("pyspark",)}

# (importing module or package, imported layer) -> why it is still there
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _source_files() -> list[pathlib.Path]:
    files = [*(ROOT / "sqlext").rglob("*.py"), *(ROOT / "dbt").rglob("*.py")]
    return sorted(f for f in files if "__pycache__" not in f.parts)


MODULES = {_module_name(f): f for f in _source_files()}


def _imported(path: pathlib.Path, module: str) -> list[tuple[int, str]]:
    """(line, module) for every import in a file: ``from p import m`` counts as ``p.m`` when
    ``p.m`` is a module of the project, else as ``p``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((node.lineno, full if full in MODULES else base))
    return found


def layer_of(module: str) -> str | None:
    """The layer a module belongs to, None for modules outside the project."""
    best, best_len = None, -1
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = layer, len(prefix)
    return best


def _exception(module: str, layer: str) -> tuple[str, str] | None:
    """The entry of :data:`EXCEPTIONS` that allows ``module`` to import from ``layer``."""
    for owner, allowed in EXCEPTIONS:
        if allowed == layer and (module == owner or module.startswith(owner + ".")):
            return owner, allowed
    return None


def _edges() -> list[tuple[str, int, str, str]]:
    """(importing module, line, imported module, imported layer) across layers."""
    edges = []
    for module, path in MODULES.items():
        own = layer_of(module)
        for line, target in _imported(path, module):
            other = layer_of(target)
            if other is not None and other != own:
                edges.append((module, line, target, other))
    return edges


def test_every_module_has_a_layer():
    assert all(layer_of(m) is not None for m in MODULES), \
        [m for m in MODULES if layer_of(m) is None]
    assert layer_of("sqlext.engine.session") == "session"
    assert layer_of("sqlext.engine.write") == "engine"
    assert "sqlext.engine.write" in MODULES and "sqlext.log.table" in MODULES


def test_no_module_imports_from_a_higher_layer():
    upward = [f"{module}:{line} imports {target} ({layer_of(module)} -> {other})"
              for module, line, target, other in _edges()
              if other not in ALLOWED[layer_of(module)]
              and _exception(module, other) is None]
    assert upward == []


def test_every_exception_is_still_needed():
    used = {_exception(module, other) for module, _, _, other in _edges()}
    assert [key for key in EXCEPTIONS if key not in used] == []


def test_lower_layers_never_import_pyspark():
    found = []
    for module, path in MODULES.items():
        banned = FORBIDDEN_PACKAGES.get(layer_of(module), ())
        found += [f"{module}:{line} imports {target}" for line, target in _imported(path, module)
                  if target.split(".")[0] in banned]
    assert found == []


def test_the_check_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from sqlext.catalog import Catalog\n    import pyspark.sql\n")
    assert _imported(source, "sqlext.engine.m") == [(2, "sqlext.catalog"), (3, "pyspark.sql")]
    assert layer_of("sqlext.catalog") not in ALLOWED["engine"]
