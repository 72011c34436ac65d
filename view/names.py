"""One name per model across the site. A ranked model is called what the ranking calls it, on its board, its row of
the models x benchmarks grid, its run page and its downloads; a run that no ranking names goes by its Hub id, else
by the last folder of its checkpoint path or its served-model name. Runs are joined into one row only when they are
the same ranked model or the same Hub id on different tasks: two folders that both served `model=x` are two
models, each named apart by its run folder. The full id, path and run folders go into the tooltip and run page."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from hallubench.publish.eval_results import hub_model_id
from hallubench.view.sources import RunFolder
from hallubench.view.status import RunStatus


@dataclass
class SiteModel:
    name: str  # what every page of the site calls it
    recorded: str | None  # the run's own `pretrained`/`model` (a full id or path), None for a ranked model alone
    hub_id: str | None
    ranked: bool
    runs: list[tuple[str, RunFolder, RunStatus]] = field(default_factory=list)  # (run page, folder, status)

    @property
    def full(self) -> str:
        """The tooltip: the name, the recorded id or path when it differs, and the run folders."""
        parts = [self.name] + ([self.recorded] if self.recorded and self.recorded != self.name else [])
        folders = [str(run.folder) for _, run, _ in self.runs]
        return " · ".join(parts + ([f"run folder{'s' if len(folders) > 1 else ''} {', '.join(folders)}"]
                                   if folders else []))


def recorded_model(results: dict[str, Any]) -> str | None:
    """What a run's results.json names its model by: its checkpoint or API model (`pretrained`, `model`), else its
    adapter."""
    model = results.get("model") or {}
    args = model.get("args") or {}
    named = args.get("pretrained") or args.get("model")
    return str(named) if named else model.get("name")


def short_name(label: str) -> str:
    """A recorded model as a name: a Hub id or served name whole, a local checkpoint by its last folder."""
    if not label.startswith(("/", ".", "~")) and label.count("/") <= 1:
        return label
    return label.rstrip("/").rsplit("/", 1)[-1] or label


def _tasks(state: RunStatus) -> set[str]:
    return set(state.results.tasks) if state.results else set()


def name_models(read: Sequence[tuple[str, RunFolder, RunStatus]], ranked: dict[str, str | None]) -> list[SiteModel]:
    """`read`: (run page, folder, status) of every run folder given; `ranked`: each model of the ranking -> the run
    page of its folder when that folder was given. Ranked models first (in the ranking's order), then the others
    in the order given."""
    by_page = {href: name for name, href in ranked.items() if href}
    models = {("ranked", name): SiteModel(name, None, None, True) for name in ranked}
    for href, run, state in read:
        recorded = recorded_model(run.results) if run.results else None
        hub = hub_model_id(state.results) if state.results else None
        key: tuple[str, str] = ("ranked", by_page[href]) if href in by_page else ("hub", hub) if hub else ("run", href)
        held = models.get(key)
        if key[0] == "hub" and held is not None and any(_tasks(s) & _tasks(state) for _, _, s in held.runs):
            key, held = ("run", href), None  # a second run of one Hub model on a task it has: a row of its own
        if held is None:
            held = models[key] = SiteModel(hub or short_name(recorded or run.folder.name), recorded, hub, False)
        held.recorded = held.recorded or recorded
        held.hub_id = held.hub_id or hub
        held.runs.append((href, run, state))
    out = list(models.values())
    taken = Counter(model.name for model in out)
    for model in out:
        if not model.ranked and taken[model.name] > 1:  # never two rows under one name
            model.name = f"{model.name} ({', '.join(run.folder.name for _, run, _ in model.runs)})"
    return out


def page_names(models: Sequence[SiteModel]) -> dict[str, SiteModel]:
    """Run page -> the model it belongs to."""
    return {href: model for model in models for href, _, _ in model.runs}
