"""What a benchmark task is: data, no behaviour beyond turning a dataset row into a prompt.

A task module in this package registers its tasks with `hallubench.registry.register_task`; importing
`hallubench.benchmarks` imports every module of the package, so a new module is all a new task needs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from hallubench.benchmarks.steps import Program
from hallubench.models.protocol import GenerationSettings

Row = Mapping[str, Any]


@dataclass(frozen=True)
class MediaSpec:
    """Which dataset columns hold the media the model is shown (paths relative to the dataset folder).

    `audio` may name the same column as `video`: the audio then comes from the video's own track.
    `needs_all`: a row is asked only with every medium it has (CMM: a probe asks about what its media hold), so a
    `--modality` that removes one leaves the row out; otherwise only a row left with none of its media is left out.
    `parts_hint` tells the user, when rows are left out so, which tasks evaluate the parts a one-medium model can.
    `optional`: a row whose image column is null is asked without an image (HallusionBench's questions asked without
    a figure); otherwise a null image is a MissingMediaError.
    """

    video: str | None = None
    audio: str | None = None
    image: str | None = None
    needs_all: bool = False
    parts_hint: str = ""
    optional: bool = False


@dataclass(frozen=True)
class Task:
    """One benchmark task: dataset + config, media, prompt, generation settings, parser and metric.

    `samples` are extra stochastic generations per item (for self/cross-checking); `None` for none.
    `metric` is the packaged metric folder scoring this task inside one run, or `None` when the task is
    scored across runs (`scored_by` says by what). `reference` and `group` read the metric reference and
    the breakdown group from a row; `group` may return a tuple, one group per breakdown (e.g. CMM's
    sub_category and sub_category × granularity), and the item counts in each. `metric_inputs` gives
    further per-item metric arguments (also given to the parser, e.g. CCHall's option names);
    `metric_args` fixed arguments of the metric (e.g. the scoring rule the paper uses).
    `higher_is_better` gives each metric's direction (None: no better direction, e.g. a yes-ratio) for the builders
    and publish, which read tasks, not metrics: it agrees with the metric's own declaration (ARCHITECTURE.md, "The
    metric contract"; tests/test_metric_contract.py checks) and adds the values `summarize` makes; `fractions`,
    only with `summarize`, names the summary's values that are fractions (the metric's declaration otherwise), and
    `version` is bumped whenever prompt, parsing or scoring change, so results.json says which numbers compare.
    `evidence_modality` ("visual" or "audio") says what a cross-checkable task's samples witness: a
    benchmark with a visual and an audio task gets audio-visual boards in a ranking (CrossCheckGPT §4).
    `demo` marks the tasks `hallubench demo` runs on the embedded mini benchmarks. `exclude` picks the rows the
    task never evaluates (e.g. those its few-shot demonstrations were taken from): they are dropped before
    `--limit` applies and do not count in the split's size.

    `program` makes a multi-step task (benchmarks/steps.py): each item runs the program's steps in order instead
    of one generation, `generation` being the settings of the steps that name none. Its `parser` then reads the
    whole sample record (`steps`, `outputs` of the program's answer step, `reference`, `metric_inputs`) instead of
    the answer text. `score_inputs`, when set, gives the metric's per-item arguments from a record the parser
    could read (e.g. SAC3's judge strings and label) instead of predictions / references / metric_inputs; items
    the parser could not read (parsed None) are then left out of the metric and counted as unparsed.
    `summarize` turns the metric's output into the metrics results.json reports (e.g. nested per-score tables
    flattened to `sc2_accuracy`, ...); by default they are reported as the metric returns them.
    `unreadable`, when set, says from a parse whether the item, though read, is scored on output its rule had to
    count without reading it (SAC3: a judge string counted inconsistent); such items count as unparsed in the
    unreadable share results report beside each score.
    `--task-args key=value,...` sets the program's `args` and the keys of `metric_args`.
    `answer_words` marks a closed-answer task (CMM: "yes", "no"): `--answer-probs` then records the model's
    probability of each word as its reply's first token beside the generated answer.
    `description` is the one line `hallubench tasks` shows for it; left empty, the first sentence of its module's
    docstring (benchmarks/catalog.py).
    """

    name: str
    benchmark: str
    config: str
    prompt: Callable[[Row], str]
    media: MediaSpec
    generation: GenerationSettings
    parser: str
    metric: str | None
    split: str = "test"
    samples: GenerationSettings | None = None
    reference: Callable[[Row], Any] | None = None
    group: Callable[[Row], str | tuple[str, ...]] | None = None
    metric_inputs: Callable[[Row], dict[str, Any]] | None = None
    metric_args: Mapping[str, Any] = field(default_factory=dict)
    higher_is_better: Mapping[str, bool | None] = field(default_factory=dict)
    fractions: tuple[str, ...] = ()
    version: int = 1
    scored_by: str | None = None
    source: str = ""
    evidence_modality: str | None = None
    demo: bool = False
    exclude: Callable[[Row], bool] | None = None
    program: Program | None = None
    score_inputs: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    summarize: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    unreadable: Callable[[Any], bool] | None = None
    num_fewshot: int = 0  # worked demonstrations in the prompt (lm-eval's n-shot in results.json)
    answer_words: tuple[str, ...] | None = None
    description: str = ""

    @property
    def cross_checkable(self) -> bool:
        """Whether the task draws stochastic samples that other models' answers can be checked against."""
        return self.samples is not None


def one_of(row: Row, column: str, allowed: tuple[Any, ...], fold: Callable[[Any], Any] = lambda value: value) -> Any:
    """`row[column]` when its value (after `fold`, e.g. case-folding as the metric does) is one the task's metric
    scores; ValueError naming the column, value and allowed values otherwise, so a bad label stops the run before
    generation instead of crashing scoring after it (the harness checks every row's reference first)."""
    value = row[column]
    if isinstance(value, bool) != any(isinstance(a, bool) for a in allowed) or fold(value) not in allowed:
        raise ValueError(f"column {column!r} is {value!r}; its metric scores only {', '.join(map(repr, allowed))}")
    return value


def yes_no(value: Any) -> Any:
    """The yes/no reading pa_hr applies to a reference (case and surrounding spaces ignored)."""
    return value.strip().lower() if isinstance(value, str) else value
