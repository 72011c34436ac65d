"""Ranking pieces without generation: model specs from flags and YAML, reference files, and `hallubench
rank` on hand-written run folders (the harness's samples.jsonl format) with the real embedding judge."""
import json
import os

import pytest

from hallubench.cli.main import build_parser, main
from hallubench.errors import ConfigError
from hallubench.ranking.correlate import correlation, load_reference
from hallubench.ranking.specs import ModelSpec, specs_from_flags, specs_from_yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TASK = "avhallubench_visual"
RED = "A red square moves to the left. A tone beeps twice a second."
DOG = "A dog plays the piano in a kitchen. A crowd cheers loudly."


def test_specs_from_flags_share_model_args_and_name_by_last_component():
    specs = specs_from_flags("hf", ["Qwen/Qwen2-VL-2B-Instruct", "/ckpt/omni-7b/"], {"dtype": "bfloat16"})
    assert specs == [ModelSpec("Qwen2-VL-2B-Instruct", "hf", {"dtype": "bfloat16", "pretrained": "Qwen/Qwen2-VL-2B-Instruct"}),
                     ModelSpec("omni-7b", "hf", {"dtype": "bfloat16", "pretrained": "/ckpt/omni-7b/"})]
    # the demo's checkpoints share their last folder: named by as many folders as tell them apart
    demo = [f"runs/demo/models/seed{k}/qwen2_5_omni" for k in (1, 2)] + ["other/qwen2_5_omni/"]
    assert [s.name for s in specs_from_flags("hf", demo, {})] == ["seed1-qwen2_5_omni", "seed2-qwen2_5_omni",
                                                                   "other-qwen2_5_omni"]
    with pytest.raises(ConfigError, match="named twice: qwen2_5_omni"):  # one checkpoint given twice
        specs_from_flags("hf", ["/a/qwen2_5_omni", "/a/qwen2_5_omni/"], {})


def test_specs_from_yaml_entries_override_defaults():
    specs = specs_from_yaml(["/m/a", {"name": "b", "pretrained": "/m/b", "model_args": {"dtype": "float16"}},
                             {"name": "gpt", "model": "openai", "model_args": {"model": "gpt-4o"}}],
                            "hf", {"dtype": "float32"}, "models.yaml")
    assert [(s.name, s.model) for s in specs] == [("a", "hf"), ("b", "hf"), ("gpt", "openai")]
    assert specs[1].model_args == {"dtype": "float16", "pretrained": "/m/b"}
    assert specs[2].model_args == {"dtype": "float32", "model": "gpt-4o"}
    with pytest.raises(ConfigError, match=r"models.yaml: models\[0\] has unknown key"):
        specs_from_yaml([{"name": "a", "path": "/m/a"}], "hf", {}, "models.yaml")
    with pytest.raises(ConfigError, match="model name 'a b'"):
        specs_from_yaml([{"name": "a b", "pretrained": "/m"}], "hf", {}, "models.yaml")


def test_crosscheck_cli_flags_override_yaml(tmp_path):
    from hallubench.cli.crosscheck import plan

    config = tmp_path / "c.yaml"
    config.write_text("models: [{name: a, pretrained: /m/a}, {name: b, pretrained: /m/b}]\n"
                      "tasks: [avhallubench_visual]\nnum-samples: 4\njudge: nli\njudge_args: {pretrained: /nli}\n")
    args = build_parser().parse_args(["crosscheck", "--config", str(config), "--num-samples", "2",
                                      "--gen-kwargs", "max_new_tokens=8", "--weighting", "uniform"])
    kwargs = plan(args)
    assert [s.name for s in kwargs["models"]] == ["a", "b"] and kwargs["num_samples"] == 2
    assert kwargs["judge"] == "nli" and kwargs["judge_args"] == {"pretrained": "/nli"}
    assert kwargs["run_options"] == {"gen_kwargs": {"max_new_tokens": 8}} and kwargs["weighting"] == "uniform"


def test_crosscheck_cli_errors_name_the_problem(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("models: [/m/a]\ntask: [x]\n")
    assert main(["crosscheck", "--config", str(config)]) == 2
    assert f"--config {config}: unknown key(s) task" in capsys.readouterr().err
    assert main(["crosscheck", "--models", "/m/a,/m/b"]) == 2
    assert "--tasks is empty" in capsys.readouterr().err
    assert main(["crosscheck", "--models", "/m/a", "--tasks", TASK]) == 2
    assert "at least two models" in capsys.readouterr().err


def test_reference_files(tmp_path):
    systems = tmp_path / "ref.csv"
    systems.write_text("model,score\na,0.9\nb,0.5\nc,0.1\n")
    ref = load_reference(systems, higher_is_better=True)
    assert ref.for_board(TASK)[0] == {"a": -0.9, "b": -0.5, "c": -0.1}
    docs = tmp_path / "docs.csv"
    docs.write_text("task,model,id,score\nt,a,q1,0.2\nt,a,q2,0.4\nt,b,q1,0.1\n")
    ref = load_reference(docs)
    assert ref.for_board("t") == ({"a": pytest.approx(0.3), "b": 0.1}, {"a": {"q1": 0.2, "q2": 0.4}, "b": {"q1": 0.1}})
    ranking = tmp_path / "ranking.json"
    ranking.write_text(json.dumps(["b", "a"]))
    assert load_reference(ranking).systems[""] == {"b": 0.0, "a": 1.0}
    bad = tmp_path / "bad.csv"
    bad.write_text("model,score\na,0.1\nb,high\n")
    with pytest.raises(ConfigError, match="bad.csv:3: score 'high' is not a finite number"):
        load_reference(bad)
    (tmp_path / "cols.csv").write_text("name,value\na,1\n")
    with pytest.raises(ConfigError, match="model and score"):
        load_reference(tmp_path / "cols.csv")
    assert correlation({"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 3.0}, "system") == {"value": None, "n": 2,
                                                                                    "note": "a side is constant"}


def _run_folder(path, answers, samples, reference="A red square moving left; a beeping tone.", extra=()):
    path.mkdir(parents=True)
    lines = []
    for item, answer in answers.items():
        lines.append({"key": f"{path.name}-{item}", "task": TASK, "id": item, "outputs": [answer],
                      "samples": samples, "reference": reference, "error": None})
    lines += list(extra)
    (path / "samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_rank_hand_written_runs_puts_the_inconsistent_model_last(tmp_path, capsys):
    runs = tmp_path / "runs"
    error = {"key": "e", "task": TASK, "id": "q3", "outputs": [], "samples": [], "error": {"type": "media"}}
    a = _run_folder(runs / "a", {"q1": RED, "q2": RED, "q3": RED}, [RED, "A red square slides left."])
    b = _run_folder(runs / "b", {"q1": RED, "q2": RED}, [RED, "A tone beeps. The red square moves."], [error])
    dog = _run_folder(runs / "dog", {"q1": DOG, "q2": ""}, [DOG, "A dog plays piano."])
    out = tmp_path / "ranking"
    argv = ["rank", str(a), str(b), f"wildcard={dog}", "--output-dir", str(out), "--cache",
            str(tmp_path / "j.sqlite"), "--refcheck", "--weighting", "uniform"]
    assert main(argv) == 0
    result = json.loads((out / "crosscheck.json").read_text())
    board = result["boards"][TASK]
    assert board["ranking"][-1] == "wildcard" and board["documents"] == ["q1", "q2"]
    assert board["empty_responses"] == [["wildcard", "q2"]]
    assert any("a: q3" in note for note in board["notes"])  # answered by a only
    assert board["refcheck"]["wildcard"] > board["refcheck"]["a"]
    counters = result["judge"]["counters"]
    assert counters["calls"] + counters["saved"] == counters["pairs"] and counters["calls"] > 0
    from hallubench.judges.sentences import spacy_available

    assert result["judge"]["sentence_splitter"] == ("spacy" if spacy_available() else "pysbd")
    assert "no sentence to judge" not in capsys.readouterr().out  # wildcard still has q1


def test_rank_notes_evidence_models_with_different_sample_counts(tmp_path):
    runs = tmp_path / "runs"
    a = _run_folder(runs / "a", {"q1": RED}, [RED, "A red square slides left.", RED])
    b = _run_folder(runs / "b", {"q1": RED}, [RED])
    out = tmp_path / "ranking"
    assert main(["rank", str(a), str(b), "--output-dir", str(out), "--cache", str(tmp_path / "j.sqlite"),
                 "--weighting", "uniform"]) == 0
    notes = json.loads((out / "crosscheck.json").read_text())["boards"][TASK]["notes"]
    assert any("different numbers of samples per item (a: 3, b: 1); every sampled passage is pooled" in note
               for note in notes)
    assert "a: 3, b: 1" in (out / "leaderboard.md").read_text()


def test_rank_errors(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["rank", str(tmp_path / "empty"), "--output-dir", str(tmp_path / "o")]) == 2
    assert "holds no samples.jsonl" in capsys.readouterr().err
    a = _run_folder(tmp_path / "a", {"q1": RED}, [RED])
    cmm = {"key": "k", "task": "cmm", "id": "x", "outputs": ["yes"], "samples": [], "error": None}
    b = _run_folder(tmp_path / "b", {"q1": RED}, [RED], extra=[cmm])
    assert main(["rank", str(a), str(b), "--tasks", "cmm", "--output-dir", str(tmp_path / "o")]) == 2
    assert "task 'cmm' has no sampled passages" in capsys.readouterr().err
    (a / "results.json").write_text("{")  # whether the run used the mini benchmarks can no longer be read
    assert main(["rank", str(a), str(b), "--output-dir", str(tmp_path / "o")]) == 2
    assert f"{a / 'results.json'} cannot be read" in capsys.readouterr().err


def test_rank_with_llm_judge_on_tiny_model_counts_unparseable_outputs(tmp_path, capsys):
    from hallubench.testing.tiny_models import make_tiny_model

    checkpoint = make_tiny_model("qwen2_vl", tmp_path / "judge")
    a = _run_folder(tmp_path / "a", {"q1": RED}, [RED])
    b = _run_folder(tmp_path / "b", {"q1": DOG}, [DOG])
    argv = ["rank", str(a), str(b), "--output-dir", str(tmp_path / "o"), "--cache", str(tmp_path / "j.sqlite"),
            "--judge", "llm", "--judge-args", f"pretrained={checkpoint},dtype=float32,batch_size=8"]
    assert main(argv) == 0
    judge = json.loads((tmp_path / "o" / "crosscheck.json").read_text())["judge"]
    assert judge["judge_id"].startswith("llm-explicit:") and judge["prompt_version"] == "crosscheck-explicit-v1"
    counters = judge["counters"]
    assert counters["calls"] == 8  # 2 targets x 2 sentences x 2 evidence models x 1 passage, all distinct
    assert f"{counters.get('undecided', 0)} unparseable judge outputs" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="--judge nli needs --judge-args pretrained="):
        from hallubench.ranking.judging import make_judge

        make_judge("nli", {})


def test_query_weighting_with_an_empty_answer_is_a_clear_error(tmp_path, capsys):
    a = _run_folder(tmp_path / "a", {"q1": RED, "q2": RED}, [RED])
    b = _run_folder(tmp_path / "b", {"q1": RED, "q2": ""}, [RED])
    argv = ["rank", str(a), str(b), "--output-dir", str(tmp_path / "o"), "--cache", str(tmp_path / "j.sqlite"),
            "--weighting", "query"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "ranking avhallubench_visual: evidence 'b' has no own judgments for document 'q2'" in err


def test_crosscheck_refuses_tasks_without_samples_before_loading_any_model(capsys):
    # The checkpoints do not exist: reaching generation would fail differently, so the task check comes first.
    assert main(["crosscheck", "--models", "/no/a,/no/b", "--tasks", "avhallubench_visual,cmm"]) == 2
    err = capsys.readouterr().err
    assert "--tasks: cmm draw(s) no stochastic samples" in err and "avhallubench_audio, avhallubench_speech" in err
    assert main(["crosscheck", "--models", "/no/a,/no/b", "--tasks", "nope"]) == 2
    assert "--tasks: unknown task 'nope'" in capsys.readouterr().err


def test_rank_refuses_two_unnamed_run_folders_with_one_name(tmp_path):
    from hallubench.ranking.pipeline import rank

    with pytest.raises(ConfigError, match="share a name"):
        rank([tmp_path / "a" / "run", tmp_path / "b" / "run"], tmp_path / "ranking")


@pytest.mark.parametrize("judge_flags, message", [(["--judge", "nli"], "--judge nli needs --judge-args pretrained="),
                                                  (["--judge", "llm", "--judge-args", "adapter=hf"],
                                                   "--judge llm needs --judge-args pretrained="),
                                                  (["--judge-args", "pretrained=x"],
                                                   "--judge embedding: unknown key(s) pretrained; allowed: batch_size"),
                                                  (["--judge", "nli", "--judge-args", "pretrained=x,labels=3"],
                                                   "--judge nli: unknown key(s) labels; allowed: batch_size")])
def test_crosscheck_checks_the_judge_before_generating(judge_flags, message, capsys):
    # The checkpoints do not exist: reaching generation would fail differently, so the judge check comes first.
    assert main(["crosscheck", "--models", "/no/a,/no/b", "--tasks", TASK, *judge_flags]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # starts a second process
def test_a_rank_starting_mid_push_is_refused_naming_the_push(tmp_path, monkeypatch, capsys):
    import subprocess
    import sys

    from hub_server import StandInHub
    from test_publish_hub import TOKEN

    a = _run_folder(tmp_path / "a", {"q1": RED}, [RED])
    b = _run_folder(tmp_path / "b", {"q1": DOG}, [DOG])
    out = tmp_path / "ranking"
    refused = []

    def contend(kind, repo):  # while the ranking's commit is on its way
        refused.append(subprocess.run([sys.executable, "-m", "hallubench", "rank", str(a), str(b), "--output-dir",
                                       str(out)], capture_output=True, text=True, timeout=300))

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    double = StandInHub({}).serve_in_process(monkeypatch, tmp_path)
    double.on_commit = contend
    try:
        assert main(["rank", str(a), str(b), "--output-dir", str(out), "--cache", str(tmp_path / "j.sqlite"),
                     "--push-to-hub", "me/ranking"]) == 0
    finally:
        double.close()
    [second] = refused
    assert second.returncode == 2
    assert f"{out} is being uploaded by hallubench push-to-hub pid {os.getpid()}" in second.stderr, second.stderr
    assert [c["files"]["leaderboard.md"] for c in double.commits] == [(out / "leaderboard.md").read_bytes()]
