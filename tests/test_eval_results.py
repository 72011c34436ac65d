"""Results the Hub can list: `build` writes the benchmark's eval.yaml, and `.eval_results` entries point at the
benchmark dataset with task ids from that eval.yaml, only scores, validated by huggingface_hub's own parser."""
from __future__ import annotations

import yaml
from huggingface_hub import parse_eval_result_entries
from huggingface_hub.repocard import metadata_load

from hallubench.benchmarks import get_task
from hallubench.builders import build
from hallubench.builders.eval_yaml import published_scores
from hallubench.builders.mini import make_release
from hallubench.publish.eval_results import eval_result_files
from hallubench.harness.results_schema import Results, TaskResult


def _results() -> Results:
    results = Results()
    results.tasks["cmm"] = TaskResult(task="cmm", benchmark="cmm", config="all", metric="pa_hr", n_selected=48,
                                      n_total=48, metrics={"pa": 0.75, "hr": 0.5, "accuracy": 0.625, "yes_ratio": 0.6,
                                                           "unparsed": 3})
    results.tasks["cchall"] = TaskResult(task="cchall", benchmark="cchall", config="all", metric="cchall",
                                         metrics={"accuracy": 0.4, "macro_f1": 0.3, "per_class": {}})
    results.tasks["mhalubench"] = TaskResult(task="mhalubench", benchmark="mhalubench", scored_by="crosscheck")
    results.run.finished = "2026-01-01T00:00:00+00:00"
    return results


def test_build_writes_an_eval_yaml_whose_tasks_are_configs_of_the_card(tmp_path):
    folder = build("cmm", make_release("cmm", tmp_path / "release"), tmp_path / "cmm")
    spec = yaml.safe_load((folder / "eval.yaml").read_text())
    assert spec["evaluation_framework"] == "hallubench" and spec["name"] == "CMM (The Curse of Multi-Modalities)"
    # the whole of CMM (Table 2a) and its parts by medium (Tables 2b, 2c and the rest of 2a) are tasks of their own
    cmm = [{"id": f"{task}_{s}", "config": "all", "split": "test"}
           for task in ("cmm", "cmm_visual", "cmm_audio", "cmm_audio_visual") for s in ("pa", "hr", "accuracy")]
    # SAC3 run over CMM's probes (sac3_cmm) is a task of the benchmark too, with its detection scores
    sac3 = [{"id": f"sac3_cmm_{s}", "config": "all", "split": "test"}
            for s in published_scores(get_task("sac3_cmm").higher_is_better)]
    assert spec["tasks"] == cmm + sac3 and "sac3_cmm_sac3_q_auroc" in {t["id"] for t in sac3}
    configs = {c["config_name"]: c for c in metadata_load(folder / "README.md")["configs"]}
    assert all(t["split"] in [f["split"] for f in configs[t["config"]]["data_files"]] for t in spec["tasks"])
    # a benchmark scored only by the CrossCheck ranking defines no task of its own
    avh = build("avhallubench", make_release("avhallubench", tmp_path / "avh-release"), tmp_path / "avhallubench")
    assert not (avh / "eval.yaml").exists()


def test_entries_name_the_benchmark_dataset_and_eval_yaml_task_ids_and_only_scores(tmp_path):
    folder = build("cmm", make_release("cmm", tmp_path / "release"), tmp_path / "cmm")
    task_ids = {t["id"] for t in yaml.safe_load((folder / "eval.yaml").read_text())["tasks"]}
    files, unnamed = eval_result_files(_results(), "https://huggingface.co/datasets/me/results", {"cmm": "org/cmm"})
    assert set(files) == {".eval_results/hallubench_cmm.yaml"} and unnamed == ["cchall"]
    entries = parse_eval_result_entries(yaml.safe_load(files[".eval_results/hallubench_cmm.yaml"]))
    assert {(e.dataset_id, e.task_id, e.value) for e in entries} == {
        ("org/cmm", "cmm_pa", 0.75), ("org/cmm", "cmm_hr", 0.5), ("org/cmm", "cmm_accuracy", 0.625)}
    assert {e.task_id for e in entries} <= task_ids
    assert all(e.source_url == "https://huggingface.co/datasets/me/results" for e in entries)


def test_every_scored_task_id_is_in_its_benchmarks_eval_yaml(tmp_path):
    folder = build("cchall", make_release("cchall", tmp_path / "release"), tmp_path / "cchall")
    task_ids = {t["id"] for t in yaml.safe_load((folder / "eval.yaml").read_text())["tasks"]}
    files, unnamed = eval_result_files(_results(), "https://x", {"cmm": "org/cmm", "cchall": "org/cchall"})
    entries = parse_eval_result_entries(yaml.safe_load(files[".eval_results/hallubench_cchall.yaml"]))
    assert {e.task_id for e in entries} == {"cchall_accuracy", "cchall_macro_f1"} <= task_ids
    assert unnamed == [] and {e.dataset_id for e in entries} == {"org/cchall"}


def test_each_model_gets_its_own_folder_in_the_results_repo_named_from_its_full_id():
    from hallubench.publish.dataset_card import model_folder

    def folder(model_id=None, **args):
        results = Results()
        results.model.name, results.model.args = "hf", args
        return model_folder(results, model_id)

    assert folder(pretrained="Qwen/Qwen2.5-Omni-7B") == "Qwen--Qwen2.5-Omni-7B"
    assert folder(pretrained="/ckpt/run 3/tiny") == "ckpt--run-3--tiny" and folder(pretrained="./tiny") == "tiny"
    # two checkpoints whose folders share a basename
    assert folder(pretrained="/ckpt/qwen2_5_omni") != folder(pretrained="/ckpt/seed2/qwen2_5_omni")
    assert folder(pretrained="../../x/<b>|y") == "x--b-y" and folder(pretrained="C:\\ckpt\\m") == "C--ckpt--m"
    assert folder(model="gpt-4o") == "gpt-4o" and folder() == "hf"
    assert folder(pretrained="org/a") != folder(pretrained="org/b")
    assert folder("org/name", pretrained="/ckpt/seed2/qwen2_5_omni") == "org--name"


def test_entries_carry_the_revision_of_the_benchmark_dataset():
    files, _ = eval_result_files(_results(), "https://x", {"cmm": "org/cmm"}, {"cmm": "ab" * 20})
    raw = yaml.safe_load(files[".eval_results/hallubench_cmm.yaml"])
    assert {entry["dataset"]["revision"] for entry in raw} == {"ab" * 20}
    assert {e.dataset_revision for e in parse_eval_result_entries(raw)} == {"ab" * 20}
