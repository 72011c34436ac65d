"""One registry per kind of plug-in (the `lm_eval/api/registry.py` idea): tasks, dataset builders, mini
releases, parsers, model adapters, judges and metrics all register by name, by decorator or by a call.

    @register_builder            # a ReleaseBuilder subclass, under its NAME
    class CMM(ReleaseBuilder): ...

    @register_parser("yes_no")
    def yes_no(text): ...

    register_task(Task(name="cmm", ...))

Each registry knows its home package: the first lookup imports it, and the home package imports every
module in its folder, so a new benchmark is one new module that registers what it owns (task, builder,
mini release, parser); nothing else lists names. Registering a name twice with a different object is an
error naming both. A registry is a mutable mapping, so tests can `monkeypatch.setitem` a stand-in into it.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar

from hallubench.errors import RegistryError

T = TypeVar("T")


class Registry(MutableMapping[str, T], Generic[T]):
    """Name -> registered object of one `kind`; `home` is the package whose import registers the built-in ones."""

    def __init__(self, kind: str, home: str) -> None:
        self.kind, self.home = kind, home
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

    def register(self, name: str, obj: T) -> T:
        """Add `obj` under `name` and return it; RegistryError when `name` already names another object."""
        if not name:
            raise RegistryError(f"a {self.kind} needs a non-empty name (got {obj!r})")
        known = self._entries.get(name)
        if known is not None and known is not obj:
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
            raise KeyError(f"unknown {self.kind} {name!r}; valid {self.kind}s: {', '.join(sorted(self))}") from None

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
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return f"{getattr(obj, '__qualname__', getattr(obj, 'name', repr(obj)))} from {module}"


TASKS: Registry[Any] = Registry("task", "hallubench.benchmarks")
PARSERS: Registry[Callable[..., Any]] = Registry("parser", "hallubench.benchmarks")
BUILDERS: Registry[type] = Registry("benchmark builder", "hallubench.builders")
MINI_RELEASES: Registry[Callable[..., Any]] = Registry("mini release", "hallubench.builders.mini")
MODELS: Registry[Callable[..., Any]] = Registry("model adapter", "hallubench.models")
MODEL_FAMILIES: Registry[Any] = Registry("model family", "hallubench.models.families")
JUDGES: Registry[Callable[..., Any]] = Registry("judge", "hallubench.ranking.judging")
METRICS: Registry[Any] = Registry("metric", "hallubench.metrics")
ALL = (TASKS, PARSERS, BUILDERS, MINI_RELEASES, MODELS, MODEL_FAMILIES, JUDGES, METRICS)


def register_task(task: T) -> T:
    """Register a `Task` under its name (a call: tasks are data, often made by a helper)."""
    return TASKS.register(task.name, task)


def register_builder(cls: type) -> type:
    """Class decorator: register a ReleaseBuilder subclass under its NAME."""
    return BUILDERS.register(cls.NAME, cls)


def register_parser(name: str):
    """`@register_parser("yes_no")`: raw model text (+ the task's metric_inputs) -> parsed answer or None."""
    return PARSERS.decorator(name)


def register_mini_release(name: str):
    """`@register_mini_release("cmm")`: `make(out_dir, **options) -> out_dir` writing the benchmark's mini release."""
    return MINI_RELEASES.decorator(name)


def register_model(name: str, config: type | None = None):
    """`@register_model("hf", config=HFArgs)`: `factory(**model_args) -> ChatModel`; `config` (a PluginConfig)
    checks --model-args before the factory runs, and is kept as the factory's `config` attribute."""
    def register(factory):
        if config is not None:
            factory.config = config
        return MODELS.register(name, factory)

    return register


def register_family(family: T) -> T:
    """Register a hf adapter `Family` (models/families.py: its quirks, as data) under each of its `model_types`
    (a call: families are data)."""
    for model_type in family.model_types:
        MODEL_FAMILIES.register(model_type, family)
    return family


def register_judge(name: str, config: type):
    """`@register_judge("nli", config=NLIJudgeArgs)`: `factory(config) -> Judge`; `config` (a PluginConfig)
    checks --judge-args before anything loads, and is kept as the factory's `config` attribute."""
    def register(factory):
        factory.config = config
        return JUDGES.register(name, factory)

    return register


def discover_modules(package_name: str, package_path) -> None:
    """Import every module of a package folder (called by each home package's __init__)."""
    import pkgutil

    for info in pkgutil.iter_modules(package_path):
        importlib.import_module(f"{package_name}.{info.name}")
