"""The `--judge-args` of each judge as typed configs, checked before any judge model loads.

The judges whose modules import torch (embedding, nli) register here, with their configs, as lazy targets; so does
the implicit judge, whose factory needs the run folders and lives in the ranking (ranking/implicit_evidence.py). The llm
judge registers itself (judges/llm.py)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hallubench.config import AtLeastOne, Benign, NameOrPath, Opaque, PluginConfig, check_numbers
from hallubench.errors import ConfigError
from hallubench.registry import register_judge

LLM_MODES = ("generate", "logprob")
IMPLICIT_PROMPTS = ("table9", "ours-v1")  # the keys of judges/implicit.py's PROMPTS, checked before any model loads
# Pairs per judge call (and per cache write) unless a judge's config says otherwise (`pairs_per_call`).
PAIRS_PER_CALL = 64


@dataclass(frozen=True)
class EmbeddingJudgeArgs(PluginConfig):
    """`--judge embedding` (default: the bundled all-MiniLM-L6-v2, offline)."""

    # it encodes each call's new texts together, so large calls keep the encoder's batches full
    pairs_per_call: ClassVar[int] = 2048

    model_dir: NameOrPath[str | None] = None
    device: Benign[str] = "cpu"
    batch_size: AtLeastOne[int] = 64
    language: Benign[str] = "en"
    sentence_splitter: Benign[str] = "auto"


register_judge("embedding", config=EmbeddingJudgeArgs, target="hallubench.judges.embedding:from_config")


@dataclass(frozen=True)
class NLIJudgeArgs(PluginConfig):
    """`--judge nli`: an MNLI checkpoint and the names of its contradiction and entailment labels."""

    pretrained: NameOrPath[str]
    device: Benign[str] = "cpu"
    batch_size: AtLeastOne[int] = 16
    contradiction: Benign[str] = "contradiction"
    entailment: Benign[str] = "entailment"


register_judge("nli", config=NLIJudgeArgs, target="hallubench.judges.nli:from_config")


class ChatJudgeArgs(PluginConfig):
    """Base of the judges that run a chat model: their own keys are their fields; every other key goes to the
    judge model's adapter, checked against its own config (pretrained=..., dtype=..., as in --model-args)."""

    @classmethod
    def from_args(cls, args: Mapping[str, Any] | None, *, what: str):
        from hallubench.models import MODELS, model_config, model_named

        args = dict(args or {})
        names = [key for key in cls.keys() if key != "model_args"]
        own = {key: args.pop(key) for key in names if key in args}
        check_numbers(cls, own, name=lambda key: f"{what}: {key}")  # before batch_size is handed on below
        args = model_named(args)
        adapter = own.get("adapter", "hf")
        config = getattr(MODELS.get(adapter), "config", None)
        if config is not None and "batch_size" in config.keys():  # it batches the judge's prompts in one pass
            batch_size = own.get("batch_size", cls.batch_size)
            if isinstance(batch_size, int):  # else the judge's own config names the wrong type below
                args.setdefault("batch_size", batch_size)
        try:
            model_args = model_config(adapter, args, f"{what} (besides {', '.join(names)}: the {adapter} adapter's)")
        except ConfigError:
            raise
        except ValueError as err:  # no such adapter
            raise ConfigError(f"{what}: {err}") from None
        return super().from_args({**own, "model_args": model_args}, what=what)


@dataclass(frozen=True)
class LLMJudgeArgs(ChatJudgeArgs):
    """`--judge llm` (CrossCheck-explicit prompt): `adapter` (hf|openai), `batch_size`, `mode` (generate: the
    paper's generate-and-parse; logprob: P(no) / (P(yes) + P(no)) from one forward pass); every other key goes
    to the adapter, checked against its own config (pretrained=..., dtype=..., as in --model-args)."""

    pairs_per_call: ClassVar[int] = 256  # the judge model batches its own forward passes inside a call
    adapter: Benign[str] = "hf"  # a registered adapter's name
    batch_size: AtLeastOne[int] = 16
    mode: Benign[str] = "generate"
    model_args: Opaque[dict[str, Any]] = field(default_factory=dict)  # checked by the adapter's own config

    def __post_init__(self):
        if self.mode not in LLM_MODES:
            raise ValueError(f"mode={self.mode!r}: choose one of {', '.join(LLM_MODES)}")


@dataclass(frozen=True)
class ImplicitJudgeArgs(ChatJudgeArgs):
    """`--judge implicit` (CrossCheck-implicit, §3.1): the judge model (`adapter`, `pretrained` and its adapter
    keys) reads each evidence model's analysis and answers Yes/No. The evidence models are the run folders' own
    models, reloaded as their results.json records them, on `evidence_device` (hf; default: the judge's
    `device`, else cpu); they see each item's media as their run did, read from the run's --data-dir or from
    `data_dir`. `judge_sees_media` also shows the judge the media (a multimodal judge). `prompts`: "table9" (the
    paper's Table 9, the default) or "ours-v1" (our earlier wording). A run folder is data: an evidence model whose
    recorded arguments would run code (`trust_remote_code`), reach a server (`base_url`, even an adapter's default),
    send a credential (`api_key_env`) or read a path outside the run folder (a local `pretrained`; a Hub id is fine)
    is refused unless `trust_run_models` is true: the adapter config's field kinds decide (PluginConfig.from_recorded)."""

    adapter: Benign[str] = "hf"  # a registered adapter's name
    batch_size: AtLeastOne[int] = 8
    data_dir: NameOrPath[str | None] = None
    evidence_device: Benign[str | None] = None
    judge_sees_media: bool = False
    prompts: Benign[str] = "table9"
    trust_run_models: bool = False
    model_args: Opaque[dict[str, Any]] = field(default_factory=dict)  # checked by the adapter's own config

    def __post_init__(self):
        for name in ("judge_sees_media", "trust_run_models"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r}: give true or false")
        if self.prompts not in IMPLICIT_PROMPTS:
            raise ValueError(f"prompts={self.prompts!r}: choose one of {', '.join(IMPLICIT_PROMPTS)}")


register_judge("implicit", config=ImplicitJudgeArgs, target="hallubench.ranking.implicit_evidence:ImplicitEvidenceJudges",
               per_run=True)
