"""`hallubench run`: evaluate a model on benchmark tasks (lm-eval style flags, accelerate-ready).

    hallubench run --model hf --model-args pretrained=PATH,dtype=float32 --tasks cmm --data-dir datasets/ --limit 20
    hallubench run ... --data-dir mini               # the embedded synthetic mini benchmarks (results say so)
    accelerate launch -m hallubench run ...          # same outputs, sharded over processes
    hallubench run --from-outputs runs/x             # re-score saved outputs, no model
    hallubench run ... --dry-run                     # check everything, print the plan, load nothing

From Python: hallubench.run(model="hf", model_args="pretrained=PATH", tasks="cmm", data_dir="mini") takes these
flags as keywords (hallubench.plan(...) is --dry-run); this command calls it.

--data-dir is required: a folder of datasets made by `hallubench build`, a Hub dataset repo id of a built
benchmark (org/name[@revision]), or `mini`. The rows read are checked against the folder's data files.

On CPU, accelerate 1.15 starts ONE process for `launch --cpu --num_processes N` (multi-CPU needs
mpirun); `ACCELERATE_USE_CPU=true accelerate launch --multi_gpu --num_processes N ...` (torchrun, gloo)
starts N. Outputs are identical for any process count at equal torch threads per process.

The run folder (--output-dir, default runs/<model>/<tasks>: one per model and task set; a folder holding another
model's samples is refused) holds samples_rank<k>.jsonl while running, then samples.jsonl (one record per sample:
prompt, media seen, raw outputs, stochastic samples, parsed answer, error) and results.json. Rerunning the same
command resumes: finished samples are skipped, errored ones retried. Until a run finishes (Ctrl-C, SIGTERM, a
failure, kill -9) its folder is marked unfinished, and publish, rank and --from-outputs refuse it.
Multi-step tasks (SAC3) also journal every finished step in steps_rank<k>.jsonl / steps.jsonl, so a rerun
resumes at the first unfinished step of each sample; `--task-args` sets their options and `--helper ROLE ARGS`
gives a second model for a role of theirs (e.g. SAC3's verifier).

Every option can also come from `--config FILE.yaml` (same names, dashes or underscores); flags given
on the command line override the file. Samples are always written to the run folder (it is the source
of truth for resuming and re-scoring), so `--log-samples` is accepted only for lm-eval compatibility; so is
`--apply-chat-template`: hallubench always builds prompts with the model's own chat template.
lm-eval's spellings work too: `--output_path`/`-o`, `--batch_size auto`, `--limit 0.1` (a share of each task),
`--gen_kwargs do_sample=False`, and every flag with underscores.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hallubench.errors import ConfigError
from hallubench.cli.flags import (LM_EVAL_ONLY, add_generation_arguments, add_lm_eval_arguments, add_model_arguments,
                                  add_output_argument, add_push_argument, config_as_flags, reads_folders)
from hallubench.harness.options import RunOptions, read_yaml_options

S = argparse.SUPPRESS
LIST_TASKS = "list"


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("run", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter, argument_default=S)
    p.add_argument("--config", type=Path, help="YAML file whose keys are these options")
    add_model_arguments(p, "chat model adapter",
                        'adapter arguments "pretrained=PATH,dtype=float32" (pretrained = the checkpoint)')
    p.add_argument("--tasks", help="comma-separated task names, or `list` to print every task with what it measures "
                                   "and needs (as `hallubench tasks`)")
    add_output_argument(p, "run folder (default runs/<model>/<tasks>: one per model and task set)")
    add_generation_arguments(p)
    p.add_argument("--task-args", "--task_args", dest="task_args",
                   help='options of the tasks that take some, e.g. SAC3 "k=5,num_samples=10,threshold=0.5"')
    p.add_argument("--helper", dest="helpers", nargs=2, action="append", metavar=("ROLE", "ARGS"),
                   help='a second model for a role a multi-step task uses, e.g. --helper verifier '
                        '"adapter=hf,pretrained=PATH" (adapter: hf, the default, or openai; then as --model-args); '
                        'repeat for more roles')
    p.add_argument("--perturb", dest="perturb", action="append", metavar="KIND=L1,L2,...",
                   help="graded perturbation ladder (CMM Figure 2): every item once per level, e.g. "
                        "video_blur=0,2,4,8,16 (Gaussian blur sigma on the frames), image_blur=..., "
                        "audio_snr=inf,20,10,0,-10 (white noise, dB); repeat for more ladders; results per level")
    p.add_argument("--answer-probs", "--answer_probs", dest="answer_probs", action="store_true",
                   help='yes/no tasks: also record P("yes") and P("no") of the reply\'s first token (one forward pass; '
                        "hf: next-token softmax over the words' token variants, openai: top-20 logprobs)")
    reads_folders(p.add_argument("--from-outputs", "--from_outputs", dest="from_outputs", type=Path,
                                 help="re-score this run folder's saved outputs without loading the model, with the "
                                      "options its run recorded: only --output-dir, --include and --push-to-hub "
                                      "apply with it, any other run option is refused"), "run")
    add_push_argument(p, "then publish the run folder to this Hub dataset repo (as `hallubench publish RUN_DIR --repo "
                         "REPO_ID`)")
    p.add_argument("--dry-run", "--dry_run", dest="dry_run", action="store_true",
                   help="check everything and print the plan (items, media, model calls, what a resume would redo) "
                        "without loading the model (not with --from-outputs: a re-score loads no model and has no "
                        "plan); from Python: hallubench.plan(...)")
    add_lm_eval_arguments(p)
    p.set_defaults(func=handle)


CLI_ONLY = ("func", "command", "config", *LM_EVAL_ONLY)  # not keywords of hallubench.run
RUN_ONLY = ("from_outputs", "push_to_hub", "allow_mini_data", "dry_run")  # hallubench.run's own, not RunOptions'


def run_keywords(args: argparse.Namespace) -> dict:
    """The `hallubench.run` keywords: the YAML file's values (if any) overridden by the flags given on the command
    line; ConfigError naming a key of the file that is no option."""
    given = {k: v for k, v in vars(args).items() if k not in CLI_ONLY}
    config = getattr(args, "config", None)
    from_file = config_as_flags(read_yaml_options(config), config, register) if config else {}
    fields = set(RunOptions.__dataclass_fields__)
    unknown = sorted(set(from_file) - fields - set(LM_EVAL_ONLY))
    if unknown:
        raise ConfigError(f"--config: unknown option(s) {', '.join(unknown)}; valid: {', '.join(sorted(fields))}")
    values = {k: v for k, v in {**from_file, **given}.items() if k not in LM_EVAL_ONLY}
    if isinstance(values.get("include"), str):  # one entry in --config
        values["include"] = [values["include"]]
    return values


def build_options(args: argparse.Namespace) -> RunOptions:
    """RunOptions from the YAML file (if any) overridden by the flags given on the command line."""
    from hallubench.api import run_options

    return run_options(**{k: v for k, v in run_keywords(args).items() if k not in RUN_ONLY})


def handle(args: argparse.Namespace) -> int:
    from hallubench import api
    from hallubench.harness.report import table

    if getattr(args, "tasks", None) == LIST_TASKS:  # lm-eval's `--tasks list`
        from hallubench.cli.tasks import listing

        print(listing())
        return 0
    results = api.run(**run_keywords(args))
    if getattr(args, "dry_run", False):
        print(results.summary())
        return 0
    if results is not None:
        print(table(results))
    if results is not None and api.every_sample_failed(results):
        print("hallubench run: error: every sample failed (see the summary above); results.json records it",
              file=sys.stderr)
        return 1
    return 0
