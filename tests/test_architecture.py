"""ARCHITECTURE.md's layer table is the rule: every import of every module (function-level ones included)
goes to its own package or a lower layer, never to a higher layer or a peer package, and no files import
each other round a loop. The checker is shown to fail on planted violations."""
import ast
import configparser
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|")


def layer_table(text: str) -> dict[str, int]:
    """Package -> layer, from the markdown table of ARCHITECTURE.md ("| 1 | hallubench.a, hallubench.b | ... |")."""
    layers = {}
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            for package in match.group(2).split(","):
                layers[package.strip()] = int(match.group(1))
    return layers


def modules(root: Path) -> dict[str, Path]:
    """Module name -> file, for every package setup.cfg's package_dir maps under `root`."""
    config = configparser.ConfigParser()
    config.read(root / "setup.cfg")
    out = {}
    for line in config["options"]["package_dir"].strip().splitlines():
        package, folder = (part.strip() for part in line.split("="))
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


IMPORT_CALLS = ("import_module", "__import__")  # importlib.import_module("hallubench.x"), __import__("hallubench.x")


def _called_import(node: ast.Call) -> str | None:
    """The module a literal `import_module(...)` / `__import__(...)` call names; for an f-string, its literal head
    up to the last dot (`f"hallubench.cli.{name}"` imports from hallubench.cli)."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called not in IMPORT_CALLS or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rpartition(".")[0] or None
    return None


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The hallubench modules `name` imports anywhere in its file (relative imports resolved), by statement or by a
    literal `importlib.import_module` / `__import__` call."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.Call) and _called_import(node):
            targets = [_called_import(node)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import submodule` imports the submodule's file
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import hallubench.x.y.attr` -> the deepest module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def registry_homes() -> dict[str, str]:
    """Registry variable name -> its home package (imported on its first lookup), read from hallubench.registry."""
    import hallubench.registry as registry

    return {name: obj.home for name, obj in vars(registry).items()
            if isinstance(obj, registry.Registry) and isinstance(getattr(obj, "home", None), str)}


NOT_LOOKUPS = ("register", "decorator", "home", "kind")  # registering into a registry imports nothing


def lookups(path: Path, homes: dict[str, str]) -> set[str]:
    """The registries `path` looks up (subscript, lookup, get, iteration, `in`, ...: all but registering), each a
    silent import of its home package. A registry is known by its name, imported (`from ... import TASKS as T`)
    or reached as an attribute (`registry.TASKS`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for alias in node.names if alias.name in homes}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in aliases:
            registry = aliases[node.id]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in homes:
            registry = node.attr
        else:
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr in NOT_LOOKUPS:
            continue
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):  # a test's stand-in
            continue
        found.add(registry)
    return found


def layer_of(module: str, layers: dict[str, int]) -> tuple[str, int] | None:
    """The row of `module`: its own, or its package's; the root `hallubench` (its __init__) holds only itself."""
    for package in sorted(layers, key=len, reverse=True):
        if module == package or ("." in package and module.startswith(package + ".")):
            return package, layers[package]
    return None


def _breaks(source: tuple[str, int] | None, dest: tuple[str, int] | None) -> str | None:
    """What is wrong when `source`'s code reaches `dest` (package, layer), or None."""
    if source and dest and source[0] != dest[0] and dest[1] >= source[1]:
        return "a higher layer" if dest[1] > source[1] else "a package of its own layer"
    return None


def violations(root: Path, layers: dict[str, int], homes: dict[str, str] | None = None) -> list[str]:
    """Every import or registry lookup that breaks the layer table, and every import cycle. `homes` (registry name
    -> home package, default: hallubench.registry's) places each registry's lookups at its home; the registry module
    itself, which defines them, is exempt."""
    homes = registry_homes() if homes is None else homes
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    problems = [f"{name} is in no layer of ARCHITECTURE.md" for name in known if layer_of(name, layers) is None]
    for name, targets in graph.items():
        source = layer_of(name, layers)
        for target in sorted(targets):
            dest = layer_of(target, layers)
            if kind := _breaks(source, dest):
                problems.append(f"{name} (layer {source[1]}) imports {target}, {kind} ({dest[1]})")
        if name == "hallubench.registry":
            continue
        for registry in sorted(lookups(known[name], homes)):
            dest = layer_of(homes[registry], layers)
            if kind := _breaks(source, dest):
                problems.append(f"{name} (layer {source[1]}) looks up {registry}, whose home {homes[registry]} is "
                                f"{kind} ({dest[1]})")
    return problems + [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph)]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop per strongly connected group of files (Tarjan's algorithm)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                out.append(sorted(group) + [sorted(group)[0]])

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


@pytest.fixture(scope="module")
def layers():
    table = layer_table((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert len(table) >= 10, "ARCHITECTURE.md lost its layer table"
    return table


def test_every_module_keeps_to_its_layer_and_no_files_import_each_other(layers):
    assert violations(ROOT, layers) == []


def test_every_mapped_package_has_a_layer(layers):
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    packages = {line.split("=")[0].strip() for line in config["options"]["package_dir"].strip().splitlines()}
    assert packages - {"hallubench"} <= set(layers)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "setup.cfg").write_text("[options]\npackage_dir =\n    hallubench = hallubench\n"
                                        "    hallubench.low = low\n    hallubench.high = high\n")
    for rel, text in {"hallubench/errors.py": "", "low/__init__.py": "", "high/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


LAYERS = {"hallubench.errors": 0, "hallubench.low": 1, "hallubench.high": 2}


def test_checker_accepts_a_clean_tree(tmp_path):
    root = _tree(tmp_path, {"high/a.py": "from hallubench.low import b\nfrom hallubench.errors import X\n",
                            "low/b.py": "from . import c\n", "low/c.py": ""})
    assert violations(root, LAYERS) == []


def test_checker_fails_on_a_lazy_import_of_a_higher_layer(tmp_path):
    root = _tree(tmp_path, {"high/a.py": "", "low/b.py": "def f():\n    from hallubench.high.a import g\n"})
    assert violations(root, LAYERS) == ["hallubench.low.b (layer 1) imports hallubench.high.a, a higher layer (2)"]


def test_checker_fails_on_a_file_cycle_inside_one_package(tmp_path):
    root = _tree(tmp_path, {"low/b.py": "from hallubench.low import c\n",
                            "low/c.py": "def f():\n    from .b import x\n"})
    assert violations(root, LAYERS) == ["import cycle: hallubench.low.b -> hallubench.low.c -> hallubench.low.b"]


def test_checker_fails_on_a_module_outside_the_table(tmp_path):
    root = _tree(tmp_path, {"low/b.py": ""})
    assert violations(root, {"hallubench.errors": 0, "hallubench.high": 2}) == [
        "hallubench.low is in no layer of ARCHITECTURE.md", "hallubench.low.b is in no layer of ARCHITECTURE.md"]


HOMES = {"TASKS": "hallubench.high", "LOW": "hallubench.low"}


@pytest.mark.parametrize("call", ['importlib.import_module("hallubench.high.a")', '__import__("hallubench.high.a")',
                                  'import_module(f"hallubench.high.{name}")'])
def test_checker_fails_on_an_import_by_call_of_a_higher_layer(tmp_path, call):
    root = _tree(tmp_path, {"high/a.py": "", "low/b.py": f"import importlib\ndef f(name):\n    {call}\n"})
    target = "hallubench.high" if "{" in call else "hallubench.high.a"
    assert violations(root, LAYERS, HOMES) == [f"hallubench.low.b (layer 1) imports {target}, a higher layer (2)"]


@pytest.mark.parametrize("use", ["TASKS[name]", "TASKS.lookup(name)", "sorted(TASKS)", "name in TASKS",
                                 "registry.TASKS.get(name)", "T[name]"])
def test_checker_fails_on_a_lookup_of_a_registry_whose_home_is_higher(tmp_path, use):
    root = _tree(tmp_path, {"low/b.py": "from hallubench import registry\nfrom hallubench.registry import TASKS\n"
                                        f"from hallubench.registry import TASKS as T\ndef f(name):\n    return {use}\n"})
    assert violations(root, LAYERS, HOMES) == [
        "hallubench.low.b (layer 1) looks up TASKS, whose home hallubench.high is a higher layer (2)"]


def test_checker_lets_a_lower_layer_register_and_look_up_its_own_registries(tmp_path):
    root = _tree(tmp_path, {"low/b.py": "from hallubench.registry import LOW, TASKS\n"
                                        "TASKS.register('x', 1)\n@TASKS.decorator('y')\ndef f():\n    return LOW['x']\n"})
    assert violations(root, LAYERS, HOMES) == []


def test_planted_violations_in_a_copy_of_the_real_tree_fail(tmp_path, layers):
    """The three the issue names: a models module importing the harness by import_module, a judges module by
    __import__, and a loaders module looking up TASKS (whose home, hallubench.benchmarks, is layer 3)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    for line in config["options"]["package_dir"].strip().splitlines():
        folder = line.split("=")[1].strip()
        shutil.copytree(ROOT / folder, tmp_path / folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.html", "*.css", "*.js", "*.txt"))
    planted = {"models/protocol.py": '\n\ndef _planted():\n    import importlib\n    importlib.import_module("hallubench.harness.runner")\n',
               "judges/base.py": '\n\ndef _planted():\n    __import__("hallubench.ranking.pipeline")\n',
               "loaders/image.py": '\n\ndef _planted(name):\n    from hallubench.registry import TASKS\n    return TASKS[name]\n'}
    for rel, text in planted.items():
        with open(tmp_path / rel, "a", encoding="utf-8") as out:
            out.write(text)
    assert set(violations(tmp_path, layers)) >= {  # and the cycles they close
        "hallubench.models.protocol (layer 2) imports hallubench.harness.runner, a higher layer (5)",
        "hallubench.judges.base (layer 3) imports hallubench.ranking.pipeline, a higher layer (6)",
        "hallubench.loaders.image (layer 2) looks up TASKS, whose home hallubench.benchmarks is a higher layer (3)"}
