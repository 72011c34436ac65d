"""Publish a run folder to the Hugging Face Hub.

0. Before any commit, everything that can be checked is (publish/checks.py): the repo ids, the run's
   completeness, that the model's results folder holds no other model, and for `.eval_results` the model repo
   and each benchmark dataset (a Hub dataset carrying hallubench's eval.yaml that defines the task ids used,
   holding the data the run read: the commit it read, or a local folder's same data files). A refusal is a
   named PublishError and leaves the Hub untouched.
1. A dataset repo (created if missing, `exist_ok`) gets one commit holding, in the model's own folder (named
   from its full id: `--model-id`, the Hub id or every part of the checkpoint path; publish/dataset_card.py),
   `<model>/results.json` as it is, `<model>/samples/<task>.parquet` (the sample records, nested columns
   kept) and `<model>/results.png`, plus a README.md card with the results table and `configs:` for every
   model folder already in the repo: a second model never overwrites the first.
2. The model repo gets `.eval_results/hallubench_<task>.yaml` (publish/eval_results.py) with the scores,
   pointing at the benchmark datasets named by `benchmark_ids` at the revision the scores were made on, as a
   pull request by default since the publisher rarely owns the model repo; publishing again commits to that
   PR while it is open instead of opening another. Skipped when the run's model is a local path with no Hub id
   (unless `model_id` names it) or when no benchmark of the run has a Hub id.

A run made on the embedded synthetic mini benchmarks (results.json `run.mini_data`) is refused unless
`allow_mini_data`, and one with `--limit` or missing samples unless `allow_partial`; then the card says so in
its title and first lines, and no `.eval_results` go to the model repo (such scores must not appear next to a
model's benchmark results).

The run folder is read through harness/run_state.py's `read_run_folder` (holding its lock: a run writing it
refuses the publish, naming the run; a run starting meanwhile is refused, naming the publish; two publishes of one
folder take turns), and one whose last run was interrupted or failed, whose records mix models or settings (or
disagree with its results.json, e.g. another --limit), or that is not whole (no manifest), is refused, naming the
command that fixes it. Every byte uploaded was read through the door (hallubench/confined.py: no link out of the
folder, no FIFO, bounded), and results.json is re-aggregated from the samples' verdicts as `verify` does before
anything is uploaded. A folder re-scored from another (`run --from-outputs SRC --output-dir DIR`) holds no samples:
publishing it is refused, naming SRC (a folder the user did not give), and the command that scores SRC in place. Nothing is
written to the run folder but the lock's record (emptied again at the end).

The token (argument, `HF_TOKEN` or the huggingface_hub login) only goes into HfApi, which sends it as the
Authorization header; it is never printed, logged or put in an error message.
"""
from __future__ import annotations

import io
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from hallubench.confined import Folder, given_folder
from hallubench.errors import PublishError, VerdictMismatchError
from hallubench.publish.checks import (BenchmarkRepoError, check_benchmark, check_complete, check_model_repo,
                                       check_repo_id, check_results_folder, dataset_revision)
from hallubench.publish.hub import DatasetRepo
from hallubench.redact import redact_values
from hallubench.harness import run_state, store
from hallubench.harness.command import command_line, rescore_hint
from hallubench.publish.dataset_card import dataset_card, model_folder, model_label, samples_path
from hallubench.publish.eval_results import eval_result_files, hub_model_id, task_ids
from hallubench.harness.plot import PLOT
from hallubench.harness.results_schema import Results
from hallubench.harness.verify import check_run

RESULTS = "results.json"
# Arrow field metadata marking a column whose values mix types and were stored as JSON text.
JSON_COLUMN = {b"encoding": b"json"}


@dataclass
class PublishReport:
    """Where things went: the dataset repo and commit, and the model repo's PR/commit or why it was skipped."""

    dataset_url: str
    dataset_commit_url: str
    model_id: str | None = None
    model_commit_url: str | None = None
    model_note: str | None = None


def read_run(run_dir: Path, given: Sequence[Path] = ()) -> tuple[Results, bytes, dict[str, dict[str, Any]]]:
    """The run's Results, its results.json bytes as they are (read through the door, hallubench/confined.py: those
    bytes are what is uploaded), and its sample records by key.

    A folder written by `hallubench run --from-outputs SRC --output-dir DIR` holds only results.json;
    its samples are read from SRC, which results.json records, and must be those it scored; SRC must be among the
    folders the user gave (`given`), since results.json is data.
    """
    run_dir, door = Path(run_dir), Folder(run_dir)
    path = run_dir / RESULTS
    if not door.is_file(RESULTS):
        raise PublishError(f"{run_dir} has no {RESULTS}, so it is not a finished run folder; make one with "
                           f"`hallubench run --output-dir {run_dir} ...` (or score saved samples with "
                           f"{rescore_hint(run_dir)}) and publish again")
    raw = door.read_bytes(RESULTS)
    try:
        results = Results.from_dict(json.loads(raw))
    except ValueError as err:  # JSONDecodeError is a ValueError too
        raise PublishError(f"{path}: {err}") from None
    records = store.read_store(run_dir).records
    source = results.run.from_outputs
    if not records and source:  # re-scored into this folder from another: those samples are data it names
        samples = given_folder(source, [run_dir, *given], f"{path} (run.from_outputs)", (
            f"Score those samples in their own folder with {rescore_hint(source)} and publish that folder "
            f"(`{command_line(['publish', str(source)])} --repo ...`)"))
        if samples is not None and samples.resolve() != run_dir.resolve():
            with run_state.read_run_folder(samples, "publish") as folder:
                run_state.check_derived(run_dir, json.loads(raw), folder.records, folder.steps, samples)
                records = folder.records
    return results, raw, records


def check_verdicts(run_dir: Path, results: Results, records: dict[str, dict[str, Any]]) -> None:
    """VerdictMismatchError, before anything is uploaded, unless results.json is what its samples' verdicts
    re-aggregate to (as `hallubench verify` checks: harness/verify.py)."""
    differing = [check for check in check_run(run_dir, results, records, "publish") if check.differences]
    if differing:
        first = differing[0]
        raise VerdictMismatchError(
            f"{run_dir / RESULTS} differs from what its samples' verdicts give in "
            f"{', '.join(f'{check.task} ({check.metric})' for check in differing)} (e.g. {first.task}: "
            f"{first.differences[0]}), so nothing was published; re-score the folder with {rescore_hint(run_dir)} "
            f"(`hallubench verify {run_dir}` lists every difference)")


def _column(values: list[Any]) -> tuple[pa.Array, bool]:
    """An Arrow column with nested types inferred; values mixing types become JSON text (flag True)."""
    try:
        return pa.array(values), False
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values]), True


def samples_table(records: list[dict[str, Any]]) -> pa.Table:
    """The records of one task as a table, one column per record field (in first-seen order)."""
    names = list(dict.fromkeys(name for record in records for name in record))
    fields, arrays = [], []
    for name in names:
        array, as_json = _column([record.get(name) for record in records])
        fields.append(pa.field(name, array.type, metadata=JSON_COLUMN if as_json else None))
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def samples_parquet(records: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    """Task name -> parquet bytes of its records sorted by (task, id), every string redacted (parquet is binary: the
    upload's own redaction of text files does not reach inside it)."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in sorted(records.values(), key=store.sort_key):
        by_task[record["task"]].append(redact_values(record))
    out = {}
    for task, rows in by_task.items():
        buffer = io.BytesIO()
        pq.write_table(samples_table(rows), buffer)
        out[task] = buffer.getvalue()
    return out


MODEL_PR_TITLE = "Add hallubench evaluation results"


@dataclass
class Plan:
    """What a publish will commit, all of it checked before the first commit."""

    folder: str
    partial: list[str]
    model_id: str | None = None
    model_note: str | None = None
    benchmark_ids: dict[str, str] = field(default_factory=dict)
    revisions: dict[str, str] = field(default_factory=dict)


def _check_ids(results: Results, repo_id: str, model_id: str | None, benchmark_ids: dict[str, str]) -> None:
    """Every id given is a Hub repo id, and every --benchmark-ids name a benchmark of the run."""
    check_repo_id(repo_id, "--repo")
    if model_id is not None:
        check_repo_id(model_id, "--model-id")
    ran = sorted({task.benchmark for task in results.tasks.values()})
    for benchmark, dataset in benchmark_ids.items():
        if benchmark not in ran:
            raise BenchmarkRepoError(f"--benchmark-ids {benchmark}={dataset}: the run has no benchmark {benchmark!r} "
                                     f"(it ran {', '.join(ran)})")
        check_repo_id(dataset, f"--benchmark-ids {benchmark}=")


def _model_plan(hub: DatasetRepo, results: Results, plan: Plan, model_id: str | None,
                benchmark_ids: dict[str, str]) -> None:
    """Which model repo gets .eval_results and on which benchmark revisions, checked on the Hub; or why none."""
    plan.model_id = model_id or hub_model_id(results)
    if results.run.mini_data:
        plan.model_note = "model results skipped: scores on the synthetic mini benchmarks are not model results"
    elif plan.partial:
        plan.model_note = "model results skipped: a partial run's scores are not the benchmark's"
    elif plan.model_id is None:
        plan.model_note = (f"model results skipped: the run's model {model_label(results)!r} has no Hub id "
                           "(local path or API name); pass --model-id ORG/NAME to add them to its model repo")
    if plan.model_note:
        return
    for benchmark, dataset in sorted(benchmark_ids.items()):
        used = task_ids(results, benchmark)
        if not used:
            continue
        sha = check_benchmark(hub.api, benchmark, dataset, {i for ids in used.values() for i in ids})
        recorded = {name: dict(results.tasks[name].dataset) for name in used}
        plan.revisions[benchmark] = dataset_revision(hub.api, benchmark, dataset, sha, recorded)
        plan.benchmark_ids[benchmark] = dataset
    check_model_repo(hub.api, plan.model_id)


def _existing_results(hub: DatasetRepo, held: list[str], folder: str) -> dict[str, Any] | None:
    """The results.json already in the model's folder of the results repo, or None."""
    path = f"{folder}/{RESULTS}"
    if path not in held:
        return None
    try:
        return json.loads(Path(hub.api.hf_hub_download(hub.repo_id, path, repo_type="dataset")).read_bytes())
    except ValueError:
        return {}  # unreadable: not ours to replace silently, so check_results_folder refuses it


@run_state.reads_run_folder("publish", "run_dir")
def publish_run(run_dir: Path, repo_id: str, *, token: str | None = None, private: bool | None = None,
                model_results: bool = True, model_id: str | None = None, create_pr: bool = True,
                benchmark_ids: dict[str, str] | None = None, endpoint: str | None = None,
                allow_mini_data: bool = False, allow_partial: bool = False, given: Sequence[Path] = ()) -> PublishReport:
    """Push `run_dir` to the dataset repo `repo_id` and (unless `model_results` is False) the model's
    `.eval_results` files to `model_id` or the Hub id in the run's model args.

    `benchmark_ids` maps benchmark names to their Hub dataset ids for the eval results entries (each checked:
    a dataset carrying hallubench's eval.yaml that defines the task ids used, holding the data the run read).
    `create_pr=False` commits to the model repo's main branch instead of a PR; with a PR, publishing again
    commits to the open one. `private=None` leaves a new dataset repo's visibility to the Hub's default for the
    namespace. `allow_mini_data` publishes a run made on the mini benchmarks (refused otherwise), marked as such;
    `allow_partial` a run with --limit or missing samples, marked so, without `.eval_results`. `given`: other folders
    the user named (the SRC of `run --from-outputs SRC --output-dir RUN_DIR --push-to-hub`), which RUN_DIR's results
    may name as where its samples are.

    Everything is checked before the first commit (ids, the benchmark repos, the model repo, the run's
    completeness, the results folder), so a refused publish writes nothing to the Hub.
    """
    results, raw_results, records = read_run(run_dir, given)
    check_verdicts(Path(run_dir), results, records)
    benchmark_ids = dict(benchmark_ids or {})
    _check_ids(results, repo_id, model_id, benchmark_ids)
    if results.run.mini_data and not allow_mini_data:
        raise PublishError(
            f"{run_dir} was made on the embedded synthetic mini benchmarks (tasks {', '.join(results.run.mini_data)}), "
            "so its scores measure nothing about the model. Run on the real benchmarks (`hallubench build`, then "
            "--data-dir), or pass --allow-mini-data to publish it anyway, marked as mini data")
    plan = Plan(folder=model_folder(results, model_id), partial=check_complete(run_dir, results, records, allow_partial))
    hub = DatasetRepo(repo_id, token=token, private=private, endpoint=endpoint)
    with hub.errors(f"checking {run_dir} and the Hub before publishing to {repo_id} (nothing was published)"):
        held = hub.files()
        check_results_folder(_existing_results(hub, held, plan.folder), results, plan.folder, model_label(results),
                             repo_id)
        if model_results:
            _model_plan(hub, results, plan, model_id, benchmark_ids)
    files = {f"{plan.folder}/{RESULTS}": raw_results}
    files.update({samples_path(plan.folder, task): data for task, data in samples_parquet(records).items()})
    door = Folder(run_dir)
    chart = door.is_file(PLOT)
    if chart:  # checked against the manifest by read_run_folder; read (and uploaded) only through the door
        files[f"{plan.folder}/{PLOT}"] = door.read_bytes(PLOT)
    files["README.md"] = dataset_card(results, repo_id, sorted(set(held) | set(files)), chart=chart,
                                      folder=plan.folder, partial=plan.partial).encode()
    with hub.errors(f"publishing {run_dir} to dataset repo {repo_id}"):
        url = hub.create()
        commit = hub.commit(files, f"hallubench results: {model_label(results)}")
    report = PublishReport(dataset_url=str(url), dataset_commit_url=commit.commit_url, model_id=plan.model_id,
                           model_note=plan.model_note)
    if not model_results or plan.model_note:
        return report
    eval_files, unnamed = eval_result_files(results, str(url), plan.benchmark_ids, plan.revisions)
    if unnamed:
        report.model_note = (f"no model results for {', '.join(unnamed)}: name the Hub dataset holding each benchmark "
                             f"(a pushed `hallubench build` folder, with its eval.yaml) with --benchmark-ids "
                             f"{','.join(f'{b}=ORG/NAME' for b in unnamed)}")
    if not eval_files:
        report.model_note = report.model_note or "model results skipped: no task of this run has scores of its own"
        return report
    where = (f"results are published at {url}, but adding .eval_results to model repo {plan.model_id} failed "
             "(name the model repo with --model-id ORG/NAME, or skip it with --no-model-results)")
    with hub.errors(where):
        report.model_commit_url = _commit_model_results(hub, plan.model_id, eval_files, str(url), create_pr)
    return report


def _commit_model_results(hub: DatasetRepo, model_id: str, eval_files: dict[str, bytes], url: str,
                          create_pr: bool) -> str:
    """Commit the .eval_results files: to the open hallubench PR when there is one (replacing the hallubench files
    it holds that this run has no scores for), else to a new PR, or to main with `create_pr=False`; the url."""
    pull = hub.open_pull_request(model_id, MODEL_PR_TITLE) if create_pr else None
    description = f"Hallucination benchmark results; samples and card: {url}"
    if pull is None:
        commit = hub.commit(eval_files, MODEL_PR_TITLE, repo_id=model_id, repo_type="model", create_pr=create_pr,
                            commit_description=description)
        return commit.pr_url or commit.commit_url
    stale = [path for path in hub.files(model_id, "model", pull.git_reference)
             if path.startswith(".eval_results/hallubench_") and path not in eval_files]
    hub.commit(eval_files, MODEL_PR_TITLE, repo_id=model_id, repo_type="model", revision=pull.git_reference,
               delete=stale, commit_description=description)
    return pull.url
