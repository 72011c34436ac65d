"""One registry per kind of plug-in (the `lm_eval/api/registry.py` idea): tasks, dataset builders, mini
releases, parsers, model adapters, judges and metrics all register by name, by decorator or by a call.

    @register_builder            # a ReleaseBuilder subclass, under its NAME
    class CMM(ReleaseBuilder): ...

    @register_parser("yes_no")
    def yes_no(text): ...

    register_task(Task(name="cmm", ...))

    register_model("hf", config=HFArgs, target="hallubench.models.hf:HFChatModel")   # imported on first use

Each registry knows its home package: the first lookup imports it, and the home package imports every
module in its folder, so a new benchmark is one new module that registers what it owns (task, builder,
mini release, parser); nothing else lists names. A plug-in whose module is heavy (torch) registers a lazy
"module:object" target with what can be known without importing it (its config), so listing plug-ins stays
fast. Registering a name twice with a different object is an error naming both. A registry is a mutable
mapping, so tests can `monkeypatch.setitem` a stand-in into it.

Plug-ins from outside the package: the first lookup of any registry also imports every module named by an
entry point of the group `hallubench.plugins` (an installed plug-in package), and `include(...)` (the CLI's
`--include`) imports a file, a folder or a module; what was loaded is recorded (`plugin_sources`).
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from hallubench.errors import PluginImportError, RegistryError, did_you_mean

PLUGIN_GROUP = "hallubench.plugins"

T = TypeVar("T")


class LazyTarget:
    """A plug-in registered as "package.module:object" (the object may be dotted, Class.method), imported on its
    first call or on reading an attribute it was not registered with; the attributes given at registration (its
    config) are read without importing it."""

    def __init__(self, kind: str, name: str, target: str, **attrs: Any) -> None:
        module, sep, path = target.partition(":")
        if not (sep and module and path):
            raise RegistryError(f"{kind} {name!r}: target {target!r} is not of the form 'package.module:object'")
        self._kind, self._name, self.target, self._resolved = kind, name, target, None
        self.__dict__.update(attrs)

    def resolve(self) -> Any:
        """The object the target names, imported once; PluginImportError saying which plug-in and why otherwise."""
        if self._resolved is None:
            module, _, path = self.target.partition(":")
            try:
                obj = importlib.import_module(module)
                for part in path.split("."):
                    obj = getattr(obj, part)
            except (ImportError, AttributeError) as err:
                raise PluginImportError(f"{self._kind} {self._name!r} is registered as {self.target!r}, which cannot "
                                        f"be imported ({type(err).__name__}: {err})") from err
            self._resolved = obj
        return self._resolved

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:  # only for attributes not given at registration
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.resolve(), attr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyTarget) and (self.target, self._kind, self._name) == (
            other.target, other._kind, other._name)

    def __hash__(self) -> int:
        return hash(self.target)

    def __repr__(self) -> str:
        return f"LazyTarget({self.target!r})"


class Registry(MutableMapping[str, T], Generic[T]):
    """Name -> registered object of one `kind`; `home` is the package whose import registers the built-in ones."""

    LISTED_IN_FULL = 20  # an unknown name's error lists the valid ones up to this many, else says where they are listed

    def __init__(self, kind: str, home: str, listed_by: str | None = None) -> None:
        self.kind, self.home, self.listed_by = kind, home, listed_by  # listed_by: the command that lists the names
        self._entries: dict[str, T] = {}
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True  # before the import: the home package's modules register into this registry
            try:
                importlib.import_module(self.home)
            except BaseException:
                self._loaded = False
                raise
        load_entry_points()  # once per process, on the first lookup of any registry

    def register(self, name: str, obj: T) -> T:
        """Add `obj` under `name` and return it; RegistryError when `name` already names another object."""
        if not name:
            raise RegistryError(f"a {self.kind} needs a non-empty name (got {obj!r})")
        known = self._entries.get(name)
        same_target = isinstance(obj, LazyTarget) and known == obj  # the same lazy target again: a re-import
        if known is not None and known is not obj and not same_target:
            raise RegistryError(f"{self.kind} {name!r} is registered twice: {_where(known)} and {_where(obj)}")
        self._entries[name] = obj
        return obj

    def decorator(self, name: str) -> Callable[[T], T]:
        """`@registry.decorator("name")` registers the decorated object under `name`."""
        return lambda obj: self.register(name, obj)

    def lookup(self, name: str) -> T:
        """The object registered as exactly `name`; KeyError listing the valid names otherwise."""
        try:
            return self[name]
        except KeyError:
            raise KeyError(self.unknown(name)) from None

    def unknown(self, name: str) -> str:
        """The message for a name not registered here: the closest names ("did you mean") and the valid ones, or,
        when there are many, the command that lists them. Every unknown-name error of a registry says this."""
        names = sorted(self)
        valid = (f"valid {self.kind}s: {', '.join(names)}" if len(names) <= self.LISTED_IN_FULL or not self.listed_by
                 else f"{len(names)} {self.kind}s, listed by `{self.listed_by}`")
        return f"unknown {self.kind} {name!r}{did_you_mean(name, names)}; {valid}"

    def __getitem__(self, name: str) -> T:
        self._load()
        return self._entries[name]

    def __setitem__(self, name: str, obj: T) -> None:  # replacing on purpose (tests' stand-ins): no conflict check
        self._entries[name] = obj

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self._entries)})"


def _where(obj: Any) -> str:
    if isinstance(obj, LazyTarget):
        return repr(obj.target)
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return f"{getattr(obj, '__qualname__', getattr(obj, 'name', repr(obj)))} from {module}"


TASKS: Registry[Any] = Registry("task", "hallubench.benchmarks", listed_by="hallubench tasks")
PARSERS: Registry[Callable[..., Any]] = Registry("parser", "hallubench.benchmarks")
BUILDERS: Registry[type] = Registry("benchmark", "hallubench.builders", listed_by="hallubench tasks")
MINI_RELEASES: Registry[Callable[..., Any]] = Registry("mini release", "hallubench.builders.mini")
MODELS: Registry[Callable[..., Any]] = Registry("model adapter", "hallubench.models", listed_by="hallubench models")
MODEL_FAMILIES: Registry[Any] = Registry("model family", "hallubench.models.families")
JUDGES: Registry[Callable[..., Any]] = Registry("judge", "hallubench.judges")
METRICS: Registry[Any] = Registry("metric", "hallubench.metrics")
REPRODUCTIONS: Registry[Any] = Registry("reproduction", "hallubench.reproduce", listed_by="hallubench reproduce --list")
ALL = (TASKS, PARSERS, BUILDERS, MINI_RELEASES, MODELS, MODEL_FAMILIES, JUDGES, METRICS, REPRODUCTIONS)


def register_task(task: T) -> T:
    """Register a `Task` under its name (a call: tasks are data, often made by a helper)."""
    return TASKS.register(task.name, task)


def register_reproduction(reproduction: T) -> T:
    """Register a `Reproduction` (hallubench.reproduce) under its name: one published table cell set, with its files."""
    return REPRODUCTIONS.register(reproduction.name, reproduction)


def register_builder(cls: type) -> type:
    """Class decorator: register a ReleaseBuilder subclass under its NAME."""
    return BUILDERS.register(cls.NAME, cls)


def register_parser(name: str):
    """`@register_parser("yes_no")`: raw model text (+ the task's metric_inputs) -> parsed answer or None."""
    return PARSERS.decorator(name)


def register_mini_release(name: str):
    """`@register_mini_release("cmm")`: `make(out_dir, **options) -> out_dir` writing the benchmark's mini release."""
    return MINI_RELEASES.decorator(name)


MODEL_ROLES = {
    "chat": "a chat model: answers the conversations (`--model`, or `--helper ROLE adapter=NAME,...`)",
    "tool": "a tool a task step calls (detector, OCR, search): only `--helper ROLE adapter=NAME,...`",
}


def register_model(name: str, config: type | None = None, target: str | None = None, role: str = "chat"):
    """`@register_model("hf", config=HFArgs)`: `factory(**model_args) -> ChatModel`; `config` (a PluginConfig)
    checks --model-args before the factory runs, and is kept as the factory's `config` attribute. `role` (one of
    MODEL_ROLES, kept as its `role` attribute) says where the CLI offers it: a "tool" is never a `--model`. With
    `target="package.module:object"` it is a call, not a decorator: the factory is imported on first use (a
    module that imports torch), its `config` and `role` read without importing it."""
    if role not in MODEL_ROLES:
        raise RegistryError(f"model adapter {name!r}: role={role!r}; choose one of {', '.join(MODEL_ROLES)}")
    if target is not None:
        return MODELS.register(name, LazyTarget(MODELS.kind, name, target, config=config, role=role))

    def register(factory):
        if config is not None:
            factory.config = config
        factory.role = role
        return MODELS.register(name, factory)

    return register


def register_family(family: T) -> T:
    """Register a hf adapter `Family` (models/families.py: its quirks, as data) under each of its `model_types`
    (a call: families are data)."""
    for model_type in family.model_types:
        MODEL_FAMILIES.register(model_type, family)
    return family


def register_judge(name: str, config: type, target: str | None = None, per_run: bool = False):
    """`@register_judge("llm", config=LLMJudgeArgs)`: `factory(config) -> Judge`; `config` (a PluginConfig)
    checks --judge-args before anything loads, and is kept as the factory's `config` attribute. `per_run`: the
    factory also takes the run folders and the cache (`run_dirs=`, `cache=`) and returns the ranking's
    EvidenceJudges (the implicit judge). With `target="package.module:object"` it is a call, not a decorator: the
    factory is imported on first use (a judge that imports torch, or one that lives in a higher layer)."""
    if target is not None:
        return JUDGES.register(name, LazyTarget(JUDGES.kind, name, target, config=config, per_run=per_run))

    def register(factory):
        factory.config = config
        factory.per_run = per_run
        return JUDGES.register(name, factory)

    return register


def register_metric(script: str | Path) -> Path:
    """Register the evaluate metric script `<name>/<name>.py` under `<name>` (a call: evaluate loads a metric file
    stand-alone, so the metric cannot register itself; its folder's owner does)."""
    path = Path(script).resolve()
    if path.suffix != ".py" or path.stem != path.parent.name or not path.is_file():
        raise RegistryError(f"metric {script}: a metric is a file <name>/<name>.py (evaluate's layout)")
    return METRICS.register(path.stem, path)


def discover_modules(package_name: str, package_path, skip: tuple[str, ...] = ()) -> None:
    """Import every module of a package folder (called by each home package's __init__), but those in `skip`: the
    heavy modules behind lazy targets (torch), imported on use."""
    for info in pkgutil.iter_modules(package_path):
        if info.name not in skip:
            importlib.import_module(f"{package_name}.{info.name}")


_included: list[str] = []
_entry_points: list[str] | None = None  # None: not read yet


def plugin_sources() -> dict[str, list[str]]:
    """What was loaded from outside the package: `include` (resolved paths and module names, in order) and
    `entry_points` ("name = module (distribution version)"), for a run folder's provenance."""
    return {"include": list(_included), "entry_points": list(_entry_points or [])}


def plugin_distributions() -> dict[str, str]:
    """The distributions whose `hallubench.plugins` entry points were loaded, with their versions."""
    from importlib.metadata import entry_points

    if _entry_points is None:
        return {}
    return {ep.dist.name: ep.dist.version for ep in entry_points(group=PLUGIN_GROUP) if ep.dist is not None}


def load_entry_points() -> None:
    """Import, once, the module each `hallubench.plugins` entry point names (an installed plug-in package, as
    lmms-eval's plug-ins): its import registers its plug-ins. PluginImportError naming the entry point and its
    distribution when one fails."""
    global _entry_points
    if _entry_points is not None:
        return
    from importlib.metadata import entry_points

    _entry_points = []
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda ep: ep.name):
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "an unknown distribution"
        try:
            importlib.import_module(ep.value.partition(":")[0])
        except Exception as err:
            _entry_points = None  # the next lookup says it again
            raise PluginImportError(
                f"the hallubench plug-in {ep.name} = {ep.value} (entry point group {PLUGIN_GROUP}, from {dist}) "
                f"cannot be imported: {_failure(err)}; fix it, or uninstall it (pip uninstall "
                f"{ep.dist.name if ep.dist is not None else ep.value})") from err
        _entry_points.append(f"{ep.name} = {ep.value} ({dist})")


def include(spec: str | Path) -> str:
    """Import plug-ins from outside the package (lm-eval's --include_path): `spec` is a .py file, a folder (every
    module and package in it; each subfolder <name>/<name>.py without __init__.py is a metric) or a dotted module
    name. Their imports register their plug-ins. Returns what was included (a resolved path or the module name);
    including it again does nothing. PluginImportError naming `spec` when it cannot be imported."""
    path = Path(spec).expanduser()
    if path.suffix == ".py" and path.is_file():
        source = str(path.resolve())
        if source not in _included:
            _import_from(path.resolve().parent, path.stem, spec)
    elif path.is_dir():
        source = str(path.resolve())
        if source not in _included:
            folder = path.resolve()
            for info in pkgutil.iter_modules([str(folder)]):
                _import_from(folder, info.name, spec)
            for sub in sorted(folder.iterdir()):
                if (sub / f"{sub.name}.py").is_file() and not (sub / "__init__.py").exists():
                    register_metric(sub / f"{sub.name}.py")
    else:
        source = str(spec)
        if source not in _included:
            if not source.replace(".", "").replace("_", "").isalnum():
                raise PluginImportError(f"--include {spec}: no such .py file or folder, and not a module name")
            _import(source, spec)
    if source not in _included:
        _included.append(source)
    return source


def _import_from(folder: Path, module: str, spec: str | Path) -> None:
    """Import top-level `module` from `folder` (put on sys.path, after the installed packages, so that the plug-in's
    modules import each other); PluginImportError when that name is another module already."""
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    imported = _import(module, spec)
    where = Path(getattr(imported, "__file__", None) or folder / "?").resolve()
    if folder not in where.parents:
        raise PluginImportError(f"--include {spec}: the module name {module!r} is taken by {where}; rename the "
                                "plug-in's file")


def _import(module: str, spec: str | Path):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name == module:
            raise PluginImportError(f"--include {spec}: no such .py file or folder, and no module {module!r} to "
                                    "import") from None
        raise PluginImportError(f"--include {spec}: importing {module} failed: {_failure(err)}") from err
    except Exception as err:
        raise PluginImportError(f"--include {spec}: importing {module} failed: {_failure(err)}") from err


def _failure(err: BaseException) -> str:
    """`Type: message (file:line)`, the line being where the plug-in's code raised it."""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(err).__name__}: {err}{where}"
