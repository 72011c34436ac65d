"""`--judge implicit` (CrossCheck-implicit, §3.1) through `crosscheck` and `rank`: each run folder's model is
an evidence model shown the item's media as its run saw it, a judge model gives the verdict, every judgment
is cached (a rerun makes no model call and loads no evidence model); with tiny random Qwen2.5-Omni thinkers
offline, and with an OpenAI-compatible stand-in server whose answers make the expected scores known."""
import json
import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import numpy as np
import pytest
import torch
import yaml

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.judges import split_sentences
from hallubench.loaders import load_audio, load_video
from hallubench.ranking import implicit_evidence as implicit

torch.set_num_threads(1)
TASKS = ["avhallubench_visual", "avhallubench_audio"]
BOARDS = TASKS + ["avhallubench_visual_av", "avhallubench_audio_av"]
NAMES = ("omni-a", "omni-b")

# `rank` of runs made by hand: their checkpoints are local folders outside the run folders, so reloading them takes the
# user's word (crosscheck's own runs need none: their models are the user's specs).
OWN = "trust_run_models=true"


def _records(run_dir):
    by_task = {}
    for rec in store.read_store(run_dir).records.values():
        by_task.setdefault(rec["task"], {})[rec["id"]] = rec
    return by_task


def implicit_pairs(runs):
    """Per evidence model, the unique (sentence, subject task, item) it must analyse, from the run folders: every
    target sentence against the item of its own task, and (audio-visual boards) of the other description task."""
    recs = {name: _records(folder) for name, folder in runs.items()}
    pairs = {e: set() for e in runs}
    for task in TASKS:
        other = TASKS[1 - TASKS.index(task)]
        for item in recs[next(iter(runs))][task]:
            for target in runs:
                for sentence in split_sentences(recs[target][task][item]["outputs"][0]):
                    for e in runs:
                        pairs[e].update({(sentence, task, item), (sentence, other, item)})
    return pairs


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, mini_datasets):
    from hallubench.testing.demo import tiny_specs

    root = tmp_path_factory.mktemp("implicit")
    specs = tiny_specs(root / "models", seeds=(1, 2))
    config = root / "models.yaml"
    config.write_text(yaml.safe_dump({
        "model_args": {"dtype": "float32"}, "tasks": TASKS, "limit": 2, "num_samples": 1, "num_frames": 2,
        "gen_kwargs": {"max_new_tokens": 8}, "judge": "implicit",
        "judge_args": {"pretrained": str(specs[0].model_args["pretrained"]), "dtype": "float32"},
        "models": [{"name": name, "pretrained": str(spec.model_args["pretrained"])} for name, spec in zip(NAMES, specs)]}))
    argv = ["crosscheck", "--config", str(config), "--data-dir", str(mini_datasets), "--output-dir", str(root / "out"),
            "--cache", str(root / "j.sqlite"), "--refcheck"]
    assert main(argv) == 0
    runs = {path.name: path for path in sorted((root / "out" / "runs").iterdir())}
    return root, specs, runs, json.loads((root / "out" / "ranking" / "crosscheck.json").read_text())


def test_crosscheck_judges_every_unique_pair_once_with_each_evidence_model(tiny):
    root, _, runs, result = tiny
    judge = result["judge"]
    assert judge["kind"] == "implicit" and judge["prompt_version"] == "crosscheck-implicit-mm-table9-v1"
    expected = implicit_pairs(runs)
    assert judge["counters"]["calls"] == sum(map(len, expected.values())) > 0
    assert judge["counters"]["pairs"] > judge["counters"]["calls"]  # the audio-visual boards reuse judgments
    assert sorted(judge["evidence_judges"]) == sorted(runs)
    assert sorted(judge["evidence_models_loaded"]) == sorted(runs), "each evidence model loads once"
    assert set(result["boards"]) == set(BOARDS)
    assert all("RefCheck skipped: the implicit judge" in " ".join(result["boards"][b]["notes"]) for b in TASKS)
    # A random judge writes gibberish: every unreadable verdict is counted undecided and scored 0.5, never mapped.
    import sqlite3

    with sqlite3.connect(root / "j.sqlite") as conn:
        rows = conn.execute("SELECT score, undecided FROM judgments").fetchall()
    assert len(rows) == judge["counters"]["calls"]
    assert all(score in (0.0, 0.5, 1.0) and bool(undecided) == (score == 0.5) for score, undecided in rows)


class Recording:
    """Wraps an evidence model: same identity, records the conversations it is given."""

    def __init__(self, model, seen):
        self.model, self.seen = model, seen
        self.name, self.fingerprint, self.accepts = model.name, model.fingerprint, model.accepts

    def generate(self, conversations, settings, seeds=None):
        self.seen.extend(conversations)
        return self.model.generate(conversations, settings, seeds)


def test_evidence_models_see_the_items_media_as_their_run_did(tiny, tmp_path, monkeypatch, mini_datasets):
    root, specs, runs, _ = tiny
    seen = []
    real = implicit.load_model
    monkeypatch.setattr(implicit, "load_model", lambda options, device: Recording(real(options, device), seen))
    argv = ["rank", *map(str, runs.values()), "--tasks", "avhallubench_visual", "--output-dir", str(tmp_path / "r"),
            "--cache", str(tmp_path / "fresh.sqlite"), "--judge", "implicit",
            "--judge-args", f"pretrained={specs[0].model_args['pretrained']},dtype=float32,{OWN}"]
    assert main(argv) == 0
    recs = {name: _records(folder)["avhallubench_visual"] for name, folder in runs.items()}
    folder = mini_datasets / "avhallubench"
    clips = {item: (load_video(folder / rec["media"]["video"]["path"], num_frames=2),
                    load_audio(folder / rec["media"]["audio"]["path"])) for item, rec in recs["omni-a"].items()}
    sentences = {item: {s for r in recs.values() for s in split_sentences(r[item]["outputs"][0])} for item in clips}
    assert len(seen) == len(runs) * sum(map(len, sentences.values())) > 0  # each unique pair once per evidence model
    for conversation in seen:
        video, audio, text = conversation[0].content
        (item,) = [i for i, (clip, _) in clips.items() if np.array_equal(video.frames, clip.frames)]
        assert recs["omni-a"][item]["media"]["video"]["indices"] == list(clips[item][0].indices)
        assert np.array_equal(audio.samples, clips[item][1].samples) and audio.sr == clips[item][1].sr
        assert text.text.startswith("You are given the following sentence about the video that might be inaccurate:")
        assert text.text.split(":\n")[1].split("\n")[0] in sentences[item]


def test_rank_again_makes_no_model_call_and_loads_no_evidence_model(tiny, tmp_path, monkeypatch):
    import hallubench.models as models

    root, specs, runs, first = tiny
    calls = []

    class Counting:
        def __init__(self, model):
            self.model, self.name, self.fingerprint, self.accepts = model, model.name, model.fingerprint, model.accepts

        def generate(self, conversations, settings, seeds=None):
            calls.append(len(conversations))
            return self.model.generate(conversations, settings, seeds)

    real_get = models.get_model
    monkeypatch.setattr(models, "get_model", lambda *a, **k: Counting(real_get(*a, **k)))
    monkeypatch.setattr(implicit, "load_model", lambda options, device: pytest.fail("an evidence model was loaded"))
    argv = ["rank", *map(str, runs.values()), "--output-dir", str(tmp_path / "again"), "--cache", str(root / "j.sqlite"),
            "--judge", "implicit", "--judge-args", f"pretrained={specs[0].model_args['pretrained']},dtype=float32,{OWN}"]
    assert main(argv) == 0
    again = json.loads((tmp_path / "again" / "crosscheck.json").read_text())
    assert calls == [] and again["judge"]["counters"]["calls"] == 0 and again["judge"]["hit_rate"] == 1.0
    for board in BOARDS:
        assert again["boards"][board]["scores"] == pytest.approx(first["boards"][board]["scores"])
    board_names = [line[4:] for line in (tmp_path / "again" / "leaderboard.md").read_text().splitlines()
                   if line.startswith("### ")]
    # the paper ranks audio-visual inputs with the explicit judge only (its footnote 2): these boards are ours
    assert sorted(board_names) == sorted(b + " (our extension)" if b.endswith("_av") else b for b in BOARDS)
    assert all(("footnote 2" in (again["boards"][b]["extension"] or "")) == b.endswith("_av") for b in BOARDS)


class ByRule:
    """A stand-in evidence or judge model answering by rule from what it is shown, so that scores vary and
    depend only on the pair: an evidence model's analysis of a sentence (or, while `failing`, a failure)
    follows the sentence's place in `sentences` and the request's in `requests` (every sentence is analysed
    against both tasks' items, so with three sentences each rule is used); the judge says YES for "wrong",
    NO for "fine", else something unreadable."""

    failing = True
    sentences: list[str] = []
    requests: list[str] = []

    def __init__(self, name, fingerprint):
        self.name, self.fingerprint, self.accepts = name, fingerprint, frozenset({"image", "video", "audio"})

    def generate(self, conversations, settings, seeds=None):
        return [[self._answer(conversation[-1].content)] for conversation in conversations]

    def _answer(self, parts):
        text = parts[-1].text
        if "saw the" in text:
            analysis = text.split("saw the")[1]
            return '{"Answer": "YES"}' if "wrong" in analysis else '{"Answer": "NO"}' if "fine" in analysis else "hmm"
        sentence, request = text.split(":\n")[1].split("\n")[0], text.split('the request "')[1].split('"')[0]
        rule = (self.sentences.index(sentence) + self.requests.index(request)) % 4
        if rule == 0 and self.failing:
            raise RuntimeError(f"{self.name} cannot analyse this one")
        return ("Hard to say.", "The sentence is wrong.", "It is fine.", "Hard to say.")[rule]


def test_each_evidence_model_loads_once_and_judges_as_board_by_board_did(tiny, tmp_path, monkeypatch):
    """Rankings with visual, audio and audio-visual boards load each evidence model at most once (none when
    all is cached) and give what judging board by board (the code before build_boards) gives on the same
    cache: the same boards, counters, judge errors and cache rows. Three rounds: a cold cache with some
    pairs failing (judge errors, not cached), a retry of those without failures, and everything cached."""
    import sqlite3

    import hallubench.models as models
    from hallubench.ranking.evidence_judges import EvidenceJudges

    _, _, runs, _ = tiny
    evidence = {}
    for name, folder in runs.items():
        run = implicit.read_evidence_run(name, folder, trusted=True)
        evidence[run.options.model_args["pretrained"]] = run
    loads = []

    def load(options, device):
        run = evidence[options.model_args["pretrained"]]
        loads.append(run.name)
        return ByRule(run.model, run.fingerprint)

    monkeypatch.setattr(implicit, "load_model", load)
    monkeypatch.setattr(models, "get_model", lambda *args, **kwargs: ByRule("judge", "fp-judge"))
    sentences = sorted({sentence for pairs in implicit_pairs(runs).values() for sentence, _, _ in pairs})
    requests = sorted({rec["prompt"] for folder in runs.values() for recs in _records(folder).values()
                       for rec in recs.values()})
    assert len(sentences) >= 3 and len(requests) == 2, "every rule of ByRule is used"
    monkeypatch.setattr(ByRule, "sentences", sentences)
    monkeypatch.setattr(ByRule, "requests", requests)

    def rank(out, cache, board_by_board):
        loads.clear()
        with monkeypatch.context() as patch:
            if board_by_board:
                patch.setattr(implicit.ImplicitEvidenceJudges, "build_boards", EvidenceJudges.build_boards)
            assert main(["rank", *map(str, runs.values()), "--output-dir", str(tmp_path / out), "--cache",
                         str(tmp_path / cache), "--judge", "implicit", "--judge-args",
                         f"pretrained=judge,prompts=ours-v1,{OWN}"]) == 0  # ByRule reads the request ours-v1 quotes
        result = json.loads((tmp_path / out / "crosscheck.json").read_text())
        assert result["judge"].pop("evidence_models_loaded") == loads
        assert result["judge"].pop("cache") == str(tmp_path / cache)
        return result, list(loads)

    rounds = []
    for n, failing in enumerate((True, False, False)):
        monkeypatch.setattr(ByRule, "failing", failing)
        expected, expected_loads = rank(f"board-by-board-{n}", "before.sqlite", board_by_board=True)
        result, result_loads = rank(f"once-{n}", "after.sqlite", board_by_board=False)
        assert set(result["boards"]) == set(BOARDS) and result == expected
        assert len(result_loads) == len(set(result_loads)), "no evidence model loads twice"
        rows = [sorted(sqlite3.connect(tmp_path / name).execute("SELECT * FROM judgments").fetchall())
                for name in ("before.sqlite", "after.sqlite")]
        assert rows[0] == rows[1]
        rounds.append((result, expected_loads, result_loads))

    (first, cold_expected_loads, cold_loads), (second, _, retry_loads), (third, _, cached_loads) = rounds
    cold, retry, cached = (result["judge"]["counters"] for result in (first, second, third))
    assert len(cold_expected_loads) > len(runs), "board by board, a model reloads for each board with new pairs"
    assert sorted(cold_loads) == sorted(runs)
    assert cold["errors"] > 0 and cold["undecided"] > cold["errors"] and cold["saved"] > 0
    assert len({s for board in first["boards"].values() for s in board["scores"].values()}) > 1
    assert retry_loads and retry["calls"] > 0 and "errors" not in retry
    assert cached_loads == [] and cached["calls"] == 0 and cached["saved"] == cached["pairs"] > 0


def test_config_errors_before_anything_loads(tiny, tmp_path, capsys):
    _, _, runs, _ = tiny
    base = ["rank", *map(str, runs.values()), "--output-dir", str(tmp_path / "x"), "--judge", "implicit"]
    assert main(base) == 2 and "--judge implicit needs --judge-args pretrained=" in capsys.readouterr().err
    assert main(base + ["--judge-args", "pretrained=x,judge_sees_media=maybe"]) == 2
    assert "judge_sees_media='maybe'" in capsys.readouterr().err
    assert main(base + ["--judge-args", "pretrained=x,evidence_models=a"]) == 2
    assert "unknown key(s) evidence_models" in capsys.readouterr().err


def test_media_not_there_stops_the_ranking_naming_the_item(tiny, tmp_path, capsys):
    _, specs, runs, _ = tiny
    argv = ["rank", *map(str, runs.values()), "--output-dir", str(tmp_path / "x"), "--cache", str(tmp_path / "j.sqlite"),
            "--judge", "implicit", "--judge-args",
            f"pretrained={specs[0].model_args['pretrained']},dtype=float32,data_dir={tmp_path / 'elsewhere'},{OWN}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--judge implicit: the media of avhallubench_" in err and "pass --judge-args data_dir=" in err


class Closing:
    def __init__(self, name, fingerprint, closed):
        self.name, self.fingerprint, self.closed, self.accepts = name, fingerprint, closed, frozenset({"video"})

    def generate(self, conversations, settings, seeds=None):
        return [["x"] for _ in conversations]

    def close(self):
        self.closed.append(self.name)


def test_evidence_models_load_one_at_a_time_and_must_be_the_runs_model(monkeypatch, tmp_path):
    from hallubench.errors import ConfigError
    from hallubench.harness.options import RunOptions

    closed, loaded = [], []

    def load(options, device):
        loaded.append((options.model_args["pretrained"], device, options.batch_size))
        name = options.model_args["pretrained"]
        return Closing(name, "changed" if name == "moved" else f"fp-{name}", closed)

    monkeypatch.setattr(implicit, "load_model", load)
    runs = {name: implicit.EvidenceRun(name, tmp_path / name, f"hf:{name}", f"fp-{name}",
                                       RunOptions(model="hf", model_args={"pretrained": name}), {})
            for name in ("a", "b", "moved")}
    models = implicit.EvidenceModels(runs, device="cpu", batch_size=3)
    handle = models.handle("a")
    assert (handle.name, handle.fingerprint, loaded) == ("hf:a", "fp-a", []), "known before anything loads"
    assert handle.load().name == "a" and models.load("a").name == "a" and len(loaded) == 1
    assert models.load("b").name == "b" and closed == ["a"], "loading one frees the one before"
    assert loaded == [("a", "cpu", 3), ("b", "cpu", 3)] and models.loads == ["a", "b"]
    with pytest.raises(ConfigError, match="fingerprint fp-moved, reloaded on cpu it has changed"):
        models.load("moved")
    models.release()
    assert closed == ["a", "b"]


# --- an OpenAI-compatible server ---------------------------------------------------------------------------

ANSWERS = {"alpha": "A red square moves. A dog barks loudly.", "beta": "A red square moves. A bell rings."}


def _reply(body):
    """Answers (describe), analyses and verdicts by rule: an analysis says "wrong" of a sentence with a dog
    only when it was shown frames and audio; a verdict is YES when the analysis says "wrong"."""
    content = body["messages"][-1]["content"]
    text, media = content[-1]["text"], {part["type"] for part in content[:-1]}
    if "an analysis of" in text:
        return '{"Answer": "YES"}' if "wrong" in text.split("in this sentence")[1] else '{"Answer": "NO"}'
    if text.endswith("List possible inaccurate information in this sentence."):  # Table 9's analysis prompt
        sentence = text.split(":\n")[1].split("\n")[0]
        return "The dog is wrong." if "dog" in sentence and media == {"image_url", "input_audio"} else "None."
    return ANSWERS[body["model"]]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


@pytest.fixture
def server():
    """A chat-completions stand-in on 127.0.0.1 (a WSGI app answering by `_reply`), recording every request."""
    requests = []

    def app(environ, start_response):
        body = json.loads(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))
        requests.append(body)
        choices = [{"index": i, "message": {"role": "assistant", "content": _reply(body)}, "finish_reason": "stop"}
                   for i in range(body.get("n", 1))]
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"choices": choices}).encode()]

    httpd = make_server("127.0.0.1", 0, app, server_class=ThreadingServer, handler_class=QuietHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.url, httpd.requests = f"http://127.0.0.1:{httpd.server_port}/v1", requests
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_openai_evidence_and_judge_models(server, tmp_path, mini_datasets, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runs = []
    for name in ANSWERS:
        runs.append(tmp_path / name)
        assert main(["run", "--model", "openai", "--model-args", f"pretrained={name},base_url={server.url},"
                     "api_key_env=none", "--tasks", "avhallubench_visual", "--limit", "2", "--num-samples", "1",
                     "--num-frames", "2", "--data-dir", str(mini_datasets), "--output-dir", str(runs[-1])]) == 0
    before = len(server.requests)
    argv = ["rank", *map(str, runs), "--output-dir", str(tmp_path / "ranking"), "--cache", str(tmp_path / "j.sqlite"),
            "--judge", "implicit", "--judge-args", f"adapter=openai,pretrained=judge,base_url={server.url},api_key_env=none"]
    # The run folders name the evidence models' server: reaching it needs the user's word.
    assert main(argv) == 2 and len(server.requests) == before
    err = capsys.readouterr().err
    assert "run.options.model_args.base_url" in err and "trust_run_models=true" in err
    argv[-1] += ",trust_run_models=true"
    assert main(argv) == 0
    result = json.loads((tmp_path / "ranking" / "crosscheck.json").read_text())
    board = result["boards"]["avhallubench_visual"]
    # alpha's dog sentence has errors by every evidence model, its other sentence none: 0.5 per item; beta 0.
    assert board["ranking"] == ["beta", "alpha"] and board["scores"] == pytest.approx({"beta": 0.0, "alpha": 0.5})
    asked = server.requests[before:]
    analyses = [b for b in asked if b["model"] in ANSWERS]
    verdicts = [b for b in asked if b["model"] == "judge"]
    # 3 distinct sentences x 2 items x 2 evidence models, each analysed once and given one verdict.
    assert len(analyses) == len(verdicts) == 12 == result["judge"]["counters"]["calls"]
    assert all([p["type"] for p in b["messages"][-1]["content"]] == ["image_url", "image_url", "input_audio", "text"]
               for b in analyses)
    assert all([p["type"] for p in b["messages"][-1]["content"]] == ["text"] for b in verdicts)
    assert main(argv) == 0 and len(server.requests) == before + len(asked), "a rerun asks the server nothing"


@pytest.mark.parametrize("seen, same", [
    ({"video": {"indices": [0, 4], "path": "v.mp4"}}, True),
    ({"video": {"indices": [0, 4], "path": "v.mp4", "added_later": 1}}, True),  # a newer hallubench's extra field
    ({"video": {"indices": [0, 5], "path": "v.mp4"}}, False),
    ({"video": {"indices": [0, 4]}}, False),
    ({"video": {"indices": [0, 4], "path": "v.mp4"}, "audio": {"sr": 16000}}, False),
])
def test_media_shown_must_be_what_the_run_recorded(seen, same):
    assert implicit._same_media(seen, {"video": {"indices": [0, 4], "path": "v.mp4"}}) is same
