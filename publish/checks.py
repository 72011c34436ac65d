"""Everything `hallubench publish` can check before its first commit, so a refused publish leaves nothing on the
Hub: the repo ids (results dataset, model, benchmarks), the benchmark datasets themselves (a Hub dataset
carrying hallubench's eval.yaml that defines the task ids the entries use, at the data the run read), the
run's completeness and the results folder (a folder in the results repo holds one model).

Every refusal is a PublishError subclass named for what went wrong, naming the flag or repo and what to do."""
from __future__ import annotations

from collections import Counter
from fnmatch import fnmatch
from typing import Any

import yaml
from huggingface_hub import HfApi
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError
from huggingface_hub.utils import HFValidationError, validate_repo_id

from hallubench.benchmarks import get_task
from hallubench.benchmarks.task import Task
from hallubench.builders.dataset_reader import CARD, card_configs, parse_card
from hallubench.builders.eval_yaml import FILE as EVAL_YAML
from hallubench.errors import (BenchmarkRepoError, PartialRunError, PublishError, RepoIdError,  # noqa: F401
                               ResultsFolderTakenError)
from hallubench.harness.dataset_source import LOCAL, fingerprint_files, named_fingerprint
from hallubench.harness.results_schema import Results


def check_repo_id(value: str, flag: str) -> str:
    """`value` if it is a Hub repo id `org/name`; RepoIdError naming `flag` otherwise."""
    try:
        validate_repo_id(value)
        ok = value.count("/") == 1
    except HFValidationError:
        ok = False
    if not ok:
        raise RepoIdError(f"{flag} {value!r} is not a Hub repo id: give it as ORG/NAME (letters, digits, '-', '_', "
                          "'.'; no '..', no path)")
    return value


def partial_reasons(results: Results, records: dict[str, dict[str, Any]]) -> list[str]:
    """Why the run is not the whole benchmark: a --limit, tasks scored on part of their split, missing samples."""
    reasons = []
    if results.run.options.get("limit") is not None:
        reasons.append(f"it ran with --limit {results.run.options['limit']}")
    held = Counter(record.get("task") for record in records.values())
    for name, task in sorted(results.tasks.items()):
        if task.n_selected < task.n_total:
            reasons.append(f"task {name} scored {task.n_selected} of its {task.n_total} samples")
        if held[name] < task.n_selected:
            reasons.append(f"task {name} has {held[name]} of its {task.n_selected} samples in the run folder")
    return reasons


def check_complete(run_dir, results: Results, records: dict[str, dict[str, Any]], allow_partial: bool) -> list[str]:
    """The partial reasons (empty for a whole run); PartialRunError unless `allow_partial`."""
    reasons = partial_reasons(results, records)
    if reasons and not allow_partial:
        raise PartialRunError(
            f"{run_dir} is not a whole-benchmark run ({'; '.join(reasons)}), so its scores are not the benchmark's. "
            "Run it without --limit (a rerun into the same folder generates only what is missing), or publish it "
            f"marked as partial, without .eval_results on the model repo: `hallubench publish {run_dir} --allow-partial "
            "...`")
    return reasons


def check_model_repo(api: HfApi, model_id: str) -> None:
    """The model repo exists (it gets the .eval_results PR); PublishError naming it otherwise."""
    try:
        api.model_info(model_id)
    except RepositoryNotFoundError:
        raise PublishError(f"no Hub model repo {model_id} (or it is private to another account), so its "
                           ".eval_results cannot be added; name the model repo with --model-id ORG/NAME, or skip "
                           "them with --no-model-results. Nothing was published.") from None


def _eval_yaml_task_ids(api: HfApi, benchmark: str, repo_id: str, revision: str) -> set[str]:
    where = f"--benchmark-ids {benchmark}={repo_id}"
    try:
        path = api.hf_hub_download(repo_id, EVAL_YAML, repo_type="dataset", revision=revision)
    except EntryNotFoundError:
        raise BenchmarkRepoError(f"{where}: the dataset repo has no {EVAL_YAML}, so it is not a pushed "
                                 f"`hallubench build {benchmark}` folder; push one (`hf upload {repo_id} "
                                 f"datasets/{benchmark} --repo-type dataset`) and name it") from None
    try:
        spec = yaml.safe_load(open(path, encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise BenchmarkRepoError(f"{where}: its {EVAL_YAML} is not YAML ({err})") from None
    if not isinstance(spec, dict) or spec.get("evaluation_framework") != "hallubench":
        raise BenchmarkRepoError(f"{where}: its {EVAL_YAML} is not hallubench's (evaluation_framework is not "
                                 "hallubench); name the Hub dataset of a pushed `hallubench build` folder")
    return {t.get("id") for t in spec.get("tasks") or [] if isinstance(t, dict)}


def check_benchmark(api: HfApi, benchmark: str, repo_id: str, task_ids: set[str]) -> str:
    """The commit sha of the benchmark dataset repo `repo_id`, after checking it is a dataset carrying hallubench's
    eval.yaml that defines every id of `task_ids`; BenchmarkRepoError naming what is wrong otherwise."""
    where = f"--benchmark-ids {benchmark}={repo_id}"
    try:
        info = api.dataset_info(repo_id)
    except RepositoryNotFoundError:
        raise BenchmarkRepoError(f"{where}: no Hub dataset repo {repo_id} (a model repo, a typo, or private to "
                                 f"another account); push your `hallubench build {benchmark}` folder as a dataset "
                                 "and name it, or leave the benchmark out of --benchmark-ids") from None
    defined = _eval_yaml_task_ids(api, benchmark, repo_id, info.sha)
    missing = sorted(task_ids - defined)
    if missing:
        raise BenchmarkRepoError(f"{where}: its {EVAL_YAML} defines no task {', '.join(missing)} (it defines "
                                 f"{', '.join(sorted(i for i in defined if i)) or 'none'}), so it holds another "
                                 f"benchmark or an older build; name the dataset of `hallubench build {benchmark}`")
    return info.sha


def hub_data_fingerprint(api: HfApi, repo_id: str, sha: str, task: Task) -> str | None:
    """The local-folder fingerprint (harness/dataset_source.py) of `task`'s data files in the dataset repo at `sha`,
    from its card's `configs:` and the fingerprints in the files' names; None when a file's name carries none."""
    where = f"Hub dataset {repo_id}@{sha}"
    card = parse_card(api.hf_hub_download(repo_id, CARD, repo_type="dataset", revision=sha), where)
    patterns = card_configs(card, where).get(task.config, {}).get(task.split, [])
    files = [f for f in api.list_repo_files(repo_id, repo_type="dataset", revision=sha)
             if any(fnmatch(f, p) for p in patterns)]
    named = {f: named_fingerprint(f) for f in files}
    return fingerprint_files(named) if files and None not in named.values() else None


def dataset_revision(api: HfApi, benchmark: str, repo_id: str, sha: str, recorded: dict[str, dict[str, Any]]) -> str:
    """The revision to put in `.eval_results` for the benchmark dataset `repo_id` (main at commit `sha`): the commit
    the run read, when it read that repo; `sha` when the run read a local folder holding the same data files as the
    repo at `sha`; BenchmarkRepoError otherwise, since the scores would not be that dataset's.

    `recorded`: task name -> its `dataset` in results.json ({id, revision})."""
    where = f"--benchmark-ids {benchmark}={repo_id}"
    if not all(recorded.values()):
        raise BenchmarkRepoError(f"{where}: the run's results.json does not record which data it read (made by an "
                                 "older hallubench), so its scores cannot be tied to that dataset; rerun it (samples "
                                 "already generated are reused) or publish with --no-model-results")
    for name, source in recorded.items():
        if source.get("id") is None and str(source.get("revision")).startswith(LOCAL) and \
                hub_data_fingerprint(api, repo_id, sha, get_task(name)) == source["revision"]:
            recorded[name] = {"id": repo_id, "revision": sha}  # the same data files as the repo holds
    other = sorted({f"{s.get('id') or 'a local folder'} at {s.get('revision')}" for s in recorded.values()
                    if s.get("id") != repo_id})
    if other:
        raise BenchmarkRepoError(
            f"{where}: the run read {', '.join(other)}, whose data files are not those of {repo_id} (main, commit "
            f"{sha}), so its scores are not that dataset's; push the folder the run read, or rerun into the same "
            f"--output-dir with --data-dir {repo_id} (samples of unchanged rows are reused) and publish that run")
    revisions = sorted({s["revision"] for s in recorded.values()})
    if len(revisions) > 1:
        raise BenchmarkRepoError(f"{where}: the run's tasks read the repo at different commits "
                                 f"({', '.join(revisions)}); rerun them on one")
    return revisions[0]


def check_results_folder(existing: dict[str, Any] | None, results: Results, folder: str, label: str,
                         repo_id: str) -> None:
    """ResultsFolderTakenError when `folder` of the results repo holds results of another model than `label`
    (`existing`: its results.json, None when the folder is new)."""
    if existing is None:
        return
    model = existing.get("model") or {}
    args = model.get("args") or {}
    theirs = str(args.get("pretrained") or args.get("model") or model.get("name") or "unknown model")
    same_fingerprint = None in (model.get("fingerprint"), results.model.fingerprint) or \
        model.get("fingerprint") == results.model.fingerprint
    if theirs != label or not same_fingerprint:
        raise ResultsFolderTakenError(
            f"{repo_id}: folder {folder}/ already holds the results of {theirs!r} (fingerprint "
            f"{model.get('fingerprint')}), not of this run's model {label!r} (fingerprint {results.model.fingerprint}); "
            "nothing was published. Name this model's folder with --model-id ORG/NAME, or publish to another --repo")
