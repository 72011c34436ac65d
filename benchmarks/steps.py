"""Multi-step tasks: a task whose items each need several model calls, every call built from the row and the
outputs of the calls before it (SAC3: perturb the question, check the perturbations, answer them, judge the
answers; a describe-then-answer or debate strategy).

A task lists its `steps` in order. Each step says which model answers it (`model`: "target", the run's
`--model`, or a helper role such as "verifier" given by `--helper ROLE ARGS`), with which settings, and which
conversations to send (`prompts(row, done)` -> one `Prompt` per conversation; `done` holds the earlier steps'
outputs and the task's `--task-args`). A step may send no conversation for an item (nothing to do). The harness
stores each finished step of each item in the run folder before the next step starts, so a killed run resumes
at the first unfinished step; see harness/program.py.

    Step("describe", lambda row, done: [Prompt("Describe the image.")], media=True)
    Step("answer", lambda row, done: [Prompt(row["question"] + "\\nDescription: " + done.first("describe"))],
         media=True)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, Union

from hallubench.models.protocol import GenerationSettings

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Prompt:
    """One conversation: `text` is the last user turn, after the earlier `history` turns, each a (user, assistant)
    pair of texts. The step's media (if it sends them) go with the first user turn."""

    text: str
    history: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Done:
    """What an item's earlier steps produced, as a step's `prompts` sees it.

    `outputs[step]` holds one list per conversation the step sent (its `n` outputs); a step that sent nothing, or
    whose role no model plays in this run, has an empty list. `args` are the program's effective arguments
    (`Program.args` with the run's `--task-args`)."""

    outputs: Mapping[str, list[list[str]]]
    prompts: Mapping[str, list[Prompt]]
    args: Mapping[str, Any]

    def first(self, step: str) -> str:
        """The first output of the step's first conversation; KeyError naming the step when it has none."""
        try:
            return self.outputs[step][0][0]
        except (KeyError, IndexError):
            raise KeyError(f"step {step!r} produced no output for this item") from None


Settings = Union[GenerationSettings, Callable[[Mapping[str, Any]], GenerationSettings], None]


@dataclass(frozen=True)
class Step:
    """One model call (or batch of calls) per item.

    `model`: "target" or a helper role the task declares in `Task.helpers`. `generation`: fixed settings, a
    function of the task args, or None for the task's own `generation` (with `--gen-kwargs`); `--gen-kwargs
    max_new_tokens` caps every step. `media`: whether the item's media (the task's MediaSpec under the run's
    modality options) go with each conversation. `guide`, given the task args, names an earlier step whose first
    conversation and first output guide this step's decoding (VDGD's KL-guided rule, models/kl_guided.py: the model
    must be able to, e.g. the hf adapter), or None for plain decoding."""

    name: str
    prompts: Callable[[Row, Done], Sequence[Prompt | str]]
    generation: Settings = None
    model: str = "target"
    media: bool = False
    guide: Callable[[Mapping[str, Any]], str | None] | None = None

    def guided_by(self, args: Mapping[str, Any]) -> str | None:
        """The step whose output guides this one's decoding under `args`, or None."""
        return self.guide(args) if self.guide else None

    def settings(self, args: Mapping[str, Any], default: GenerationSettings) -> GenerationSettings:
        """The step's generation settings before `--gen-kwargs max_new_tokens` is applied."""
        if self.generation is None:
            return default
        return self.generation(args) if callable(self.generation) else self.generation


def as_prompts(values: Sequence[Prompt | str]) -> list[Prompt]:
    """A step's conversations as Prompts (a plain string is a one-turn conversation)."""
    return [value if isinstance(value, Prompt) else Prompt(str(value)) for value in values]


@dataclass(frozen=True)
class Program:
    """A task's steps, in order, and what they need.

    `helpers` maps each helper role its steps use to what answers them when the run gives no `--helper` for it:
    "target" (the run's model) or None (those steps are skipped). `args` are the program's options with their
    defaults (a run sets them with `--task-args key=value,...`; they are part of each sample's key). `answer`
    names the step whose first conversation's outputs are the record's `outputs` (default: the last step)."""

    steps: tuple[Step, ...]
    helpers: Mapping[str, str | None] = field(default_factory=dict)
    args: Mapping[str, Any] = field(default_factory=dict)
    answer: str | None = None

    def __post_init__(self) -> None:
        names = [step.name for step in self.steps]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"a program needs steps with distinct names; got {names}")
        if self.answer is not None and self.answer not in names:
            raise ValueError(f"answer step {self.answer!r} is not one of the steps {names}")
        undeclared = sorted({step.model for step in self.steps} - {"target"} - set(self.helpers))
        if undeclared:
            raise ValueError(f"steps use helper roles {undeclared} that the program's helpers do not declare")
        if "target" in self.helpers or any(default not in ("target", None) for default in self.helpers.values()):
            raise ValueError(f"helpers map each role to 'target' or None; got {dict(self.helpers)}")

    @property
    def answer_step(self) -> str:
        return self.answer or self.steps[-1].name

    @property
    def roles(self) -> set[str]:
        """The helper roles the steps use."""
        return {step.model for step in self.steps} - {"target"}
