"""Publish a run folder to the Hugging Face Hub.

1. A dataset repo (created if missing, `exist_ok`) gets one commit holding, in the model's own folder,
   `<model>/results.json` as it is, `<model>/samples/<task>.parquet` (the sample records, nested columns
   kept) and `<model>/results.png`, plus a README.md card with the results table and `configs:` for every
   model folder already in the repo (publish/dataset_card.py): a second model never overwrites the first.
2. The model repo gets `.eval_results/hallubench_<task>.yaml` (publish/eval_results.py) with the scores,
   pointing at the benchmark datasets named by `benchmark_ids` (pushed `hallubench build` folders, whose
   eval.yaml defines the task ids), as a pull request by default since the publisher rarely owns the model
   repo. Skipped when the run's model is a local path with no Hub id (unless `model_id` names it) or when
   no benchmark of the run has a Hub id.

A run made on the embedded synthetic mini benchmarks (results.json `run.mini_data`) is refused unless
`allow_mini_data`; then the card says so in its title and first lines, and no `.eval_results` go to the
model repo (synthetic scores must not appear next to a model's benchmark results).

The run folder is read through harness/run_state.py's `read_run_folder`, and so is the folder its samples come
from when they are not in it: each is read and uploaded holding its lock (a run writing either refuses the
publish, naming the run; a run starting meanwhile is refused, naming the publish; two publishes of one folder
take turns), and one whose last run was interrupted or failed, or whose records mix models or settings (or
disagree with its results.json, e.g. another --limit), is refused, naming the command that fixes it. Nothing is
written to the run folder but the lock's record (emptied again at the end).

The token (argument, `HF_TOKEN` or the huggingface_hub login) only goes into HfApi, which sends it as the
Authorization header; it is never printed, logged or put in an error message.
"""
from __future__ import annotations

import io
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from hallubench.errors import PublishError
from hallubench.publish.hub import DatasetRepo
from hallubench.harness import run_state, store
from hallubench.publish.dataset_card import dataset_card, model_folder, model_label, samples_path
from hallubench.publish.eval_results import eval_result_files, hub_model_id
from hallubench.harness.plot import PLOT
from hallubench.harness.results_schema import Results

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


def read_run(run_dir: Path) -> tuple[Results, bytes, dict[str, dict[str, Any]]]:
    """The run's Results, its results.json bytes as they are, and its sample records by key.

    A folder written by `hallubench run --from-outputs SRC --output-dir DIR` holds only results.json;
    its samples are read from SRC, which results.json records.
    """
    run_dir = Path(run_dir)
    path = run_dir / RESULTS
    if not path.is_file():
        raise PublishError(f"{run_dir} has no {RESULTS}, so it is not a finished run folder; make one with "
                           f"`hallubench run --output-dir {run_dir} ...` (or score saved samples with "
                           f"`hallubench run --from-outputs {run_dir}`) and publish again")
    raw = path.read_bytes()
    try:
        results = Results.from_dict(json.loads(raw))
    except ValueError as err:  # JSONDecodeError is a ValueError too
        raise PublishError(f"{path}: {err}") from None
    records = store.read_store(run_dir).records
    source = results.run.from_outputs
    if not records and source and Path(source).is_dir() and Path(source).resolve() != run_dir.resolve():
        with run_state.read_run_folder(Path(source), "publish") as folder:
            records = folder.records
    return results, raw, records


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
    """Task name -> parquet bytes of its records sorted by (task, id)."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in sorted(records.values(), key=store.sort_key):
        by_task[record["task"]].append(record)
    out = {}
    for task, rows in by_task.items():
        buffer = io.BytesIO()
        pq.write_table(samples_table(rows), buffer)
        out[task] = buffer.getvalue()
    return out


@run_state.reads_run_folder("publish", "run_dir")
def publish_run(run_dir: Path, repo_id: str, *, token: str | None = None, private: bool | None = None,
                model_results: bool = True, model_id: str | None = None, create_pr: bool = True,
                benchmark_ids: dict[str, str] | None = None, endpoint: str | None = None,
                allow_mini_data: bool = False) -> PublishReport:
    """Push `run_dir` to the dataset repo `repo_id` and (unless `model_results` is False) the model's
    `.eval_results` files to `model_id` or the Hub id in the run's model args.

    `benchmark_ids` maps benchmark names to their Hub dataset ids for the eval results entries (default:
    the results dataset). `create_pr=False` commits to the model repo's main branch instead of a PR.
    `private=None` leaves a new dataset repo's visibility to the Hub's default for the namespace.
    `allow_mini_data` publishes a run made on the mini benchmarks (refused otherwise), marked as such.
    """
    results, raw_results, records = read_run(run_dir)
    benchmark_ids = dict(benchmark_ids or {})
    if results.run.mini_data and not allow_mini_data:
        raise PublishError(
            f"{run_dir} was made on the embedded synthetic mini benchmarks (tasks {', '.join(results.run.mini_data)}), "
            "so its scores measure nothing about the model. Run on the real benchmarks (`hallubench build`, then "
            "--data-dir), or pass --allow-mini-data to publish it anyway, marked as mini data")
    folder = model_folder(results)
    files = {f"{folder}/{RESULTS}": raw_results}
    files.update({samples_path(folder, task): data for task, data in samples_parquet(records).items()})
    chart = Path(run_dir) / PLOT
    if chart.is_file():
        files[f"{folder}/{PLOT}"] = chart.read_bytes()
    hub = DatasetRepo(repo_id, token=token, private=private, endpoint=endpoint)
    with hub.errors(f"publishing {run_dir} to dataset repo {repo_id}"):
        url = hub.create()
        samples = sorted(set(hub.api.list_repo_files(repo_id, repo_type="dataset")) | set(files))
        files["README.md"] = dataset_card(results, repo_id, samples, chart=chart.is_file()).encode()
        commit = hub.commit(files, f"hallubench results: {model_label(results)}")
    report = PublishReport(dataset_url=str(url), dataset_commit_url=commit.commit_url)
    if not model_results:
        return report
    report.model_id = model_id or hub_model_id(results)
    if results.run.mini_data:
        report.model_note = "model results skipped: scores on the synthetic mini benchmarks are not model results"
        return report
    if report.model_id is None:
        report.model_note = (f"model results skipped: the run's model {model_label(results)!r} has no Hub id "
                             "(local path or API name); pass --model-id ORG/NAME to add them to its model repo")
        return report
    eval_files, unnamed = eval_result_files(results, str(url), benchmark_ids)
    if unnamed:
        report.model_note = (f"no model results for {', '.join(unnamed)}: name the Hub dataset holding each benchmark "
                             f"(a pushed `hallubench build` folder, with its eval.yaml) with --benchmark-ids "
                             f"{','.join(f'{b}=ORG/NAME' for b in unnamed)}")
    if not eval_files:
        report.model_note = report.model_note or "model results skipped: no task of this run has scores of its own"
        return report
    where = (f"results are published at {url}, but adding .eval_results to model repo {report.model_id} failed "
             "(name the model repo with --model-id ORG/NAME, or skip it with --no-model-results)")
    with hub.errors(where):
        model_commit = hub.commit(eval_files, "Add hallubench evaluation results", repo_id=report.model_id,
                                  repo_type="model", create_pr=create_pr,
                                  commit_description=f"Hallucination benchmark results; samples and card: {url}")
    report.model_commit_url = model_commit.pr_url or model_commit.commit_url
    return report
