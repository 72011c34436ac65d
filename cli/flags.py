"""The flag groups several subcommands share, defined once (lm-eval spellings, with underscores accepted
as well as dashes); each subcommand adds its own flags around them."""
from __future__ import annotations

import argparse
import typing
from pathlib import Path
from typing import Any

from hallubench.config import Positive, read_number, typed_texts
from hallubench.errors import ConfigError
from hallubench.redact import shown
from hallubench.harness.options import DTYPES, MODALITIES, RunOptions, parse_batch_size, parse_limit
from hallubench.models.configs import AUTO_BATCH_OFF_CUDA, AUTO_MAX_BATCH
from hallubench.ranking.aggregate import WEIGHTINGS
from hallubench.models import chat_adapters, model_role
from hallubench.registry import JUDGES, MODELS

LM_EVAL_ONLY = ("log_samples", "apply_chat_template")  # accepted, changing nothing (add_lm_eval_arguments)
RANK_OPTIONS = ("judge", "judge_args", "cache", "weighting", "temperature", "refcheck", "reference",
                "reference_higher_is_better", "strict_judging")


def checked(parse):
    """An argparse `type` from a parser raising ConfigError, so argparse prints the message (not "invalid value")."""
    def convert(text: str):
        try:
            return parse(text)
        except ConfigError as err:
            raise argparse.ArgumentTypeError(str(err).partition(": ")[2]) from None  # argparse names the flag
    convert.__name__ = parse.__name__
    return convert


def number(hint: Any):
    """The argparse `type` of a number flag: a finite number in the range its annotation declares (hallubench/config.py
    read_number), so NaN, inf, 1e309 and a value out of range are a one-line usage error naming the flag. Marked with
    its `hint`: tests/reliability/test_numbers_and_texts.py walks every flag and fails on a number flag without one."""
    def convert(text: str) -> int | float:
        try:
            return read_number(hint, text)
        except ConfigError as err:
            raise argparse.ArgumentTypeError(str(err)) from None  # argparse names the flag
    convert.hint = hint  # type: ignore[attr-defined]
    return convert


def option_number(name: str):
    """`number` for the flag of RunOptions' field `name`: its range is declared on the field, once."""
    return number(typing.get_type_hints(RunOptions, include_extras=True)[name])


# The options written `key=value,...` on the command line (or as a mapping in --config).
KEY_VALUE_OPTIONS = ("model_args", "judge_args", "task_args", "gen_kwargs", "helpers")


def _command_flags(register) -> dict[str, argparse.Action]:
    """The flags of the subcommand that `register` adds, by option name (dest)."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(), "")
    command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: action for action in next(iter(command.choices.values()))._actions}


def config_as_flags(values: dict, path: Path, register) -> dict:
    """`--config` values through the same reading as the flags of the subcommand `register` adds: a value of a typed
    or choice flag (limit, seed, fps, modality, ...) as if written on the command line, so `limit: "abc"` or
    `limit: .nan` is refused as `--limit abc` is, and each text in a key=value mapping (model_args: {api_key_env:
    None}) typed as `key=value` types it on the command line (none is None, true is True: config.typed_value);
    ConfigError naming the file, key and value."""
    flags, parsed = _command_flags(register), dict(values)
    for key, value in values.items():
        action = flags.get(key)
        if action is None or isinstance(action, argparse._StoreTrueAction):
            continue  # unknown keys are named later
        flag, wrong = action.option_strings[0], f"--config {path}: {key}: {shown(value)}"
        if action.type is None and action.choices is None:  # text, a list (tasks) or key=value pairs (a mapping)
            if not isinstance(value, (str, list, dict)):
                raise ConfigError(f"{wrong} is not a value of {flag} (give text)")
            if key in KEY_VALUE_OPTIONS and isinstance(value, dict):
                parsed[key] = typed_texts(value)
            continue
        if isinstance(value, (bool, dict, list)) or value is None:
            raise ConfigError(f"{wrong} is not a value of {flag}")
        try:
            parsed[key] = action.type(str(value)) if action.type else str(value)
        except (ValueError, TypeError, argparse.ArgumentTypeError) as err:
            raise ConfigError(f"{wrong} is not a value of {flag} ({err})") from None
        if action.choices is not None and parsed[key] not in action.choices:
            raise ConfigError(f"{wrong} is not one of {', '.join(map(str, action.choices))}")
    return parsed


OUTPUT_FLAGS = ("-o", "--output-dir", "--output-path", "--out")


def reads_folders(action: argparse.Action, kind: str) -> argparse.Action:
    """Mark `action` as naming folders of `kind` ("run", "ranking", or "any" of them) that its command reads or
    uploads. Each is read through the one lock-taking reader of its kind (harness/run_state.read_run_folder,
    ranking/report.reading_ranking);
    tests/reliability/test_readers_take_the_lock.py walks every command's marked arguments and checks that each is
    refused while a writer holds that folder or after one was killed half-way (and fails on a path argument that is
    neither marked nor known to name something else)."""
    action.reads_folders = kind  # type: ignore[attr-defined]
    return action


def add_output_argument(p: argparse.ArgumentParser, what: str, **kwargs) -> None:
    """The folder a command writes: -o/--output-dir on every command, also spelled as lm-eval does (--output_path)
    and --out (what `build` and `view` took before)."""
    p.add_argument(*OUTPUT_FLAGS, dest="output_dir", type=Path, help=what, **kwargs)


def add_lm_eval_arguments(p: argparse.ArgumentParser) -> None:
    """lm-eval flags that hallubench accepts for compatibility although they change nothing here."""
    p.add_argument("--log-samples", dest="log_samples", action="store_true",
                   help="accepted for lm-eval compatibility; samples are always written")
    p.add_argument("--apply-chat-template", dest="apply_chat_template", action="store_true",
                   help="accepted for lm-eval compatibility; hallubench always applies the model's own chat template "
                        "(a checkpoint without one is refused, except a text-only judge model)")


def add_model_arguments(p: argparse.ArgumentParser, model_help: str, model_args_help: str) -> None:
    """--model (a chat model adapter: a tool's registration says it is none, and the run refuses it before anything
    loads, harness.runner.run) and --model-args."""
    tools = [name for name in sorted(MODELS) if model_role(name) != "chat"]
    p.add_argument("--model",
                   help=f"{model_help}: {' or '.join(chat_adapters())}. vLLM, TGI, SGLang or any OpenAI-compatible "
                        "server: --model openai --model-args base_url=http://HOST:8000/v1,model=SERVED_NAME"
                        + (f". Tool adapters ({', '.join(tools)}) are no chat models: a task step gets them with "
                           "--helper" if tools else ""))
    p.add_argument("--model-args", "--model_args", dest="model_args", help=model_args_help)


def add_push_argument(p: argparse.ArgumentParser, what: str) -> None:
    """--push-to-hub REPO_ID and --allow-mini-data."""
    p.add_argument("--push-to-hub", "--push_to_hub", dest="push_to_hub", metavar="REPO_ID", help=what)
    p.add_argument("--allow-mini-data", "--allow_mini_data", dest="allow_mini_data", action="store_true",
                   help="with --push-to-hub: upload even what was made on the synthetic mini benchmarks (--data-dir "
                        "mini, demo), which is refused otherwise; it is then marked as mini data")


def add_generation_arguments(p: argparse.ArgumentParser) -> None:
    """The data, generation and media flags every command that generates through the harness takes."""
    p.add_argument("--data-dir", "--data_dir", dest="data_dir",
                   help="required: a folder of built datasets (`hallubench build`), a Hub dataset repo id of a built "
                        "benchmark (org/name[@revision]), or `mini` for the embedded synthetic mini benchmarks")
    p.add_argument("--limit", type=checked(parse_limit),
                   help="first N samples of each task, or a fraction 0 < x < 1: that share of each task's samples, "
                        "rounded up (as lm-eval); results then say the scores are of a subset")
    p.add_argument("--seed", type=option_number("seed"), help="run seed; each sample's seed derives from it, the task and the id")
    p.add_argument("--batch-size", "--batch_size", dest="batch_size", type=checked(parse_batch_size),
                   help="conversations per greedy generate call (shortest prompts batched together; above 1 "
                        "padding may change greedy outputs slightly); a conversation's n samples are always one "
                        "call (num_return_sequences=n) from its own seed, so they do not depend on it. auto (hf "
                        f"adapter): on CUDA the largest batch that fits, found once on the first batch (from "
                        f"{AUTO_MAX_BATCH}, halved on out-of-memory, and again if a later batch does not fit) and recorded in "
                        f"results.json; on CPU auto is "
                        f"{AUTO_BATCH_OFF_CUDA} (no out-of-memory error to probe there)")
    p.add_argument("--device", help="hf models: cpu, cuda, cuda:1, ... or auto (device_map=auto: a model larger "
                                    "than one GPU spread over all); default: the accelerate process's device")
    p.add_argument("--dtype", choices=DTYPES, help="hf models: weights dtype; auto (default) is bfloat16 on GPUs "
                                                   "that support it, float16 on older ones, the checkpoint's on CPU")
    p.add_argument("--gen-kwargs", "--gen_kwargs", dest="gen_kwargs",
                   help='override generation settings, e.g. "temperature=0.2,top_p=0.9,max_new_tokens=64"; '
                        "do_sample=False is greedy, do_sample=True samples (at temperature 1.0 unless given)")
    p.add_argument("--num-samples", "--num_samples", dest="num_samples", type=option_number("num_samples"),
                   help="stochastic samples per item for tasks that cross-check (default: the task's, 10 for "
                        "video and image; 0: none)")
    p.add_argument("--modality", choices=MODALITIES, help="what media the model gets (default audio-visual)")
    p.add_argument("--num-frames", "--num_frames", dest="num_frames", type=option_number("num_frames"), help="frames per video, uniform")
    p.add_argument("--fps", type=option_number("fps"), help="sample frames at this rate instead (capped by --max-frames)")
    p.add_argument("--max-frames", "--max_frames", dest="max_frames", type=option_number("max_frames"), help="frame cap with --fps")


def add_rank_arguments(p: argparse.ArgumentParser) -> None:
    """Flags shared by `rank` and `crosscheck` (defaults applied in `rank_options`)."""
    p.add_argument("--judge", choices=JUDGES, help="sentence judge (default embedding: offline all-MiniLM-L6-v2; "
                                                   "implicit: CrossCheck-implicit, the run folders' models look at "
                                                   "each item's media and a judge model answers Yes/No)")
    p.add_argument("--judge-args", "--judge_args", dest="judge_args",
                   help='judge options, e.g. "pretrained=PATH,device=cpu" (llm, implicit: adapter=hf|openai plus the '
                        "judge model's args; implicit also data_dir, evidence_device, judge_sees_media, batch_size)")
    p.add_argument("--cache", type=Path, help="judgment cache file (default $HALLUBENCH_CACHE/judgments.sqlite)")
    p.add_argument("--weighting", choices=WEIGHTINGS, help="eta: task (default), query or uniform")
    p.add_argument("--temperature", type=number(Positive[float]),
                   help="T of the eta softmax over the evidence models' SelfCheck scores (default 0.1); not a "
                        "generation setting: that is --gen-kwargs temperature=...")
    p.add_argument("--refcheck", action="store_true", help="also judge against the rows' human references")
    p.add_argument("--reference", type=Path, help="reference scores or ranking (CSV or JSON) to correlate with")
    p.add_argument("--reference-higher-is-better", "--reference_higher_is_better",
                   dest="reference_higher_is_better", action="store_true",
                   help="the reference's higher scores mean less hallucination")
    p.add_argument("--strict-judging", "--strict_judging", dest="strict_judging", action="store_true",
                   help="stop at the first judgment that fails even alone (default: record it as a judge error, "
                        "scored 0.5 and reported, and go on); judgments received are cached either way")
    add_push_argument(p, "then upload the ranking folder to this Hub dataset repo (token: HF_TOKEN or login)")
