"""Run options and the lm-eval style "key=value,key=value" strings (`--gen-kwargs`, `--model-args`)."""
from __future__ import annotations

import dataclasses
import hashlib
import re
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from hallubench.config import AtLeastOne, Positive, check_numbers, read_yaml, typed_value
from hallubench.errors import ConfigError
from hallubench.redact import shown
from hallubench.models.configs import AUTO
from hallubench.harness.perturb import parse_perturb
from hallubench.models.protocol import DTYPES, GenerationSettings


MODALITIES = ("audio-visual", "visual-only", "audio-only", "muted", "blank")
# Seeds are derived per sample by the harness, so a run-wide `seed` generation kwarg is not accepted.
# `do_sample` (transformers' and lm-eval's switch) is taken too: sampling here is temperature > 0.
GEN_KWARGS = (*(f.name for f in dataclasses.fields(GenerationSettings) if f.name != "seed"), "do_sample")
SAMPLING_TEMPERATURE = 1.0  # transformers' GenerationConfig default, used by do_sample=True with no temperature


def parse_kv(text: str | None, flag: str) -> dict[str, Any]:
    """Parse "a=1,b=x" into {"a": 1, "b": "x"}; ValueError naming `flag` and the bad token."""
    result: dict[str, Any] = {}
    if not text:
        return result
    for token in text.split(","):
        key, sep, value = token.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise ConfigError(f"{flag}: bad token {shown(token)}; expected key=value pairs separated by commas")
        if key in result:
            raise ConfigError(f"{flag}: key {shown(key)} given twice")
        result[key] = typed_value(value.strip())
    return result


def apply_gen_kwargs(settings: GenerationSettings, kwargs: dict[str, Any]) -> GenerationSettings:
    """`settings` with `--gen-kwargs` applied. `do_sample=False` is greedy (temperature 0); `do_sample=True` samples
    at the given temperature, else the settings' own if they sample, else transformers' default 1.0."""
    kwargs = dict(kwargs)
    do_sample = kwargs.pop("do_sample", None)
    settings = dataclasses.replace(settings, **kwargs)
    if do_sample is False:
        return dataclasses.replace(settings, temperature=0.0)
    if do_sample and not settings.do_sample:
        return dataclasses.replace(settings, temperature=SAMPLING_TEMPERATURE)
    return settings


def check_gen_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` if every key is a GenerationSettings field (or do_sample) with a valid value; ConfigError naming the
    key otherwise."""
    defaults = {f.name: f.default for f in dataclasses.fields(GenerationSettings)}
    for key, value in kwargs.items():
        if key not in GEN_KWARGS:
            raise ConfigError(f"--gen-kwargs: unknown key {key!r}; allowed: {', '.join(GEN_KWARGS)}")
        if key == "do_sample":
            if not isinstance(value, bool):
                raise ConfigError(f"--gen-kwargs: do_sample must be True or False; got {value!r}")
            continue
        numeric = (int, float) if isinstance(defaults[key], float) else (int,)
        if isinstance(value, bool) or not isinstance(value, numeric):
            kind = "a number" if float in numeric else "an integer"
            raise ConfigError(f"--gen-kwargs: {key} must be {kind}; got {value!r}")
    temperature = kwargs.get("temperature")
    if temperature is not None and kwargs.get("do_sample") is not None and kwargs["do_sample"] != (temperature > 0):
        raise ConfigError(f"--gen-kwargs: do_sample={kwargs['do_sample']} contradicts temperature={temperature} "
                          "(sampling here means temperature > 0); give one of them")
    try:
        apply_gen_kwargs(GenerationSettings(), kwargs)
    except ValueError as err:
        raise ConfigError(f"--gen-kwargs: {err}") from None
    return kwargs


def parse_gen_kwargs(text: str | None) -> dict[str, Any]:
    """`--gen-kwargs` parsed and checked against the GenerationSettings fields."""
    return check_gen_kwargs(parse_kv(text, "--gen-kwargs"))


def check_helpers(helpers: Any) -> dict[str, dict[str, Any]]:
    """`--helper ROLE ARGS` pairs (or a YAML mapping role -> "k=v,..." or role -> mapping) as role -> args;
    ConfigError naming the role otherwise."""
    if isinstance(helpers, (list, tuple)):
        pairs = [tuple(pair) for pair in helpers]
        roles = [role for role, _ in pairs]
        twice = sorted({role for role in roles if roles.count(role) > 1})
        if twice:
            raise ConfigError(f"--helper: role(s) {', '.join(twice)} given twice")
        helpers = dict(pairs)
    if not isinstance(helpers, dict):
        raise ConfigError(f"--helper: expected ROLE ARGS pairs (or a mapping in --config); got {helpers!r}")
    checked = {}
    for role, args in helpers.items():
        if role == "target" or not str(role).isidentifier():
            raise ConfigError(f"--helper {role}: a role is a name such as verifier or judge (not 'target': that is --model)")
        args = parse_kv(args, f"--helper {role}") if isinstance(args, str) else args
        if not isinstance(args, dict):
            raise ConfigError(f"--helper {role}: expected adapter arguments such as \"adapter=hf,pretrained=PATH\"")
        checked[str(role)] = dict(args)
    return checked


def read_yaml_options(path: Path) -> dict[str, Any]:
    """The option mapping of a `--config` YAML file (read_yaml: UTF-8, bounded, no aliases), dashes in keys made
    underscores; ConfigError naming the file."""
    data = read_yaml(path, "--config") or {}
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping of option names to values")
    return {str(key).replace("-", "_"): value for key, value in data.items()}


def _folder_name(text: str) -> str:
    """`text` as one folder name: path separators as `__` (lm-eval's model_name_sanitized), other odd characters `_`."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", text.strip("/").replace("/", "__")).lstrip(".") or "_"


def default_output_dir(model: str | None, model_args: dict[str, Any], tasks: list[str]) -> Path:
    """`runs/<checkpoint>/<tasks>`: one run folder per model and task set, so two models never share one (a run
    refuses a folder holding another model's samples). A long task list is named by its count and a hash."""
    checkpoint = str(model_args.get("pretrained") or model_args.get("model") or model or "model")
    names = "+".join(sorted(tasks)) or "no-tasks"
    if len(names) > 80:
        names = f"{len(tasks)}-tasks-{hashlib.sha256(names.encode()).hexdigest()[:10]}"
    return Path("runs") / _folder_name(checkpoint) / _folder_name(names)
def parse_limit(value: Any) -> int | float | None:
    """`--limit` as lm-eval takes it: a whole number N >= 1 (the first N samples of each task) or a fraction
    0 < x < 1 (that share of each task's samples); ConfigError otherwise."""
    wrong = f"--limit: expected a whole number >= 1 or a fraction 0 < x < 1; got {shown(value)}"
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eEnN") else int(value)  # nan, inf: refused below
        except ValueError:
            raise ConfigError(wrong) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(wrong)
    if isinstance(value, float) and 0 < value < 1:
        return value
    if value < 1 or value != int(value) or value > 2 ** 63 - 1:
        raise ConfigError(wrong)
    return int(value)


def parse_batch_size(value: Any) -> int | str:
    """`--batch-size`: a whole number >= 1 or `auto`; ConfigError otherwise."""
    if isinstance(value, str):
        if value.strip().lower() == AUTO:
            return AUTO
        if not value.strip().isdigit():
            raise ConfigError(f"--batch-size: expected a whole number >= 1 or auto; got {shown(value)}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value > 2 ** 63 - 1:
        raise ConfigError(f"--batch-size: expected a whole number >= 1 or auto; got {shown(value)}")
    return value


@dataclass
class RunOptions:
    """Everything one `hallubench run` is configured by (CLI flags and `--config` YAML keys)."""

    model: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    tasks: list[str] = field(default_factory=list)
    output_dir: Path | None = None  # None: default_output_dir(), one folder per model and task set
    data_dir: str | None = None  # as given: a folder, `mini` or a Hub dataset repo id (harness.data.resolve_data_dir)
    limit: int | float | None = None  # N first samples of each task, or (0 < limit < 1) that share of each task's
    seed: int = 1234
    batch_size: int | str = 1  # or "auto" (AUTO)
    gen_kwargs: dict[str, Any] = field(default_factory=dict)
    num_samples: int | None = None
    modality: str = "audio-visual"
    num_frames: AtLeastOne[int | None] = 8
    fps: Positive[float | None] = None
    max_frames: AtLeastOne[int] = 32
    device: str | None = None
    dtype: str | None = None
    task_args: dict[str, Any] = field(default_factory=dict)  # multi-step programs' args and metric_args overrides
    helpers: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> adapter args (adapter=hf|openai, ...)
    perturb: dict[str, list[str]] = field(default_factory=dict)  # kind -> levels (harness/perturb.py): one run per ladder
    answer_probs: bool = False  # yes/no tasks: record P(yes), P(no) of the reply's first token beside each answer
    include: list[str] = field(default_factory=list)  # plug-ins from outside hallubench (registry.include), as loaded

    def __post_init__(self) -> None:
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ConfigError(f"--dtype: {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if self.modality not in MODALITIES:
            raise ConfigError(f"--modality: {self.modality!r} is not one of {', '.join(MODALITIES)}")
        # every number finite and in its field's range (hallubench/config.py), named by its flag
        check_numbers(RunOptions, {key: value for key, value in vars(self).items() if key not in ("limit", "batch_size")},
                      name=lambda key: "--" + key.replace("_", "-"))
        if self.fps is not None:
            self.num_frames = None
        self.batch_size = parse_batch_size(self.batch_size)
        self.limit = parse_limit(self.limit)
        check_gen_kwargs(self.gen_kwargs)
        self.helpers = check_helpers(self.helpers)
        self.perturb = parse_perturb(self.perturb)
        self.output_dir = Path(self.output_dir) if self.output_dir is not None else \
            default_output_dir(self.model, self.model_args, self.tasks)
        self.data_dir = str(self.data_dir) if self.data_dir is not None else None

    def limit_for(self, total: int) -> int | None:
        """How many of a task's `total` samples to run: all (None), the first N, or a fraction of them rounded up
        (lm-eval's `ceil(len(docs) * limit)`)."""
        if isinstance(self.limit, float):
            return math.ceil(total * self.limit)
        return self.limit

    def media_options(self) -> dict[str, Any]:
        """The frame/modality options that change what a model sees (part of each sample's key)."""
        return {"modality": self.modality, "num_frames": self.num_frames, "fps": self.fps,
                "max_frames": self.max_frames}
