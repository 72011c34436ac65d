"""UniHD (benchmarks/unihd.py) on the mini MHaluBench release: the whole chain (queries, Grounding DINO, attribute
answers, scene-text OCR, Serper search through a loopback stand-in, verification) on tiny random tool checkpoints and
a model double that answers each step's prompt in its format; a run killed before verification resumes there and
ends with the records of an unbroken run; a tiny random chat checkpoint runs it end to end; the offline search
backend ranks a user's corpus."""
from __future__ import annotations

import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from kill_support import kill_when_journalled
from test_cchall_strategies import NON, final

from hallubench import models
from hallubench.benchmarks.unihd import per_claim, read_json
from hallubench.benchmarks.unihd_prompts import QUERY_GENERATE, VERIFY
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.models.protocol import GenerationSettings, Message, TextPart
from hallubench.testing.tiny_tools import make_tiny_grounding_dino, make_tiny_trocr

TASK = "mhalubench_unihd"
CCHALL = "cchall_unihd"
KEY = "loopback-key"


class Killed(BaseException):
    """Stands in for kill -9: nothing in the harness catches it."""


class UniHDDouble:
    """Answers each UniHD step in the format its prompt asks for (by the prompt's own words), deterministically."""

    accepts = frozenset({"image"})
    name, fingerprint = "double:unihd", "double-unihd"

    def __init__(self, model: str, kill_on: str = "", **_):
        self.kill_on = kill_on

    def reply(self, text: str) -> str:
        claims = len(re.findall(r"^\s*claim\d+:", text.rsplit("claim list:", 1)[-1], re.MULTILINE))
        if "brilliant hallucination judger" in text:
            return json.dumps([{f"claim{k}": "hallucination" if k % 2 else "non-hallucination", "reason": "r"}
                               for k in range(1, claims + 1)])
        if text.startswith("You are a hallucination detection system"):  # CCHall's final answer
            return final(NON)
        if "brilliant claim generator" in text:
            return json.dumps([{"segment": "s", "claims": [{"claim": "A square is in the image"},
                                                           {"claim": "Acme made the square"}]}])
        if text.startswith("Rewrite the answer"):
            return "A square is in the image, made by Acme."
        if "object extractor" in text:
            return json.dumps({f"claim{k}": "square.circle" if k == 1 else "none" for k in range(1, claims + 1)})
        if "questions about attributes" in text:
            return json.dumps({"claim1": ["What color is the square?"]})
        if text.startswith("1."):
            return "The square is red."
        if "questions about scene text" in text:
            return json.dumps({f"claim{k}": ["What is written on the sign?"] for k in range(1, claims + 1)})
        if "search engine questions" in text:
            return json.dumps({f"claim{claims}": ["Who made the sign?", "sign maker"]})
        return "?"

    def generate(self, conversations, settings, seeds=None):
        texts = [conv[-1].content[-1].text for conv in conversations]
        if self.kill_on and any(self.kill_on in text for text in texts):
            raise Killed()
        return [[self.reply(text)] * settings.n for text in texts]


class SerperStandIn(BaseHTTPRequestHandler):
    """Serper's API shape on 127.0.0.1: POST /search with X-API-KEY, the answer's organic snippets."""

    queries: ClassVar[list[str]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/search" or self.headers.get("X-API-KEY") != KEY:
            self.send_response(403)
            self.end_headers()
            return
        self.queries.append(body["q"])
        answer = {"organic": [{"snippet": f"Snippet about {body['q']}", "link": "https://example.org"},
                              {"snippet": "Missing: dropped", "link": "https://example.org"}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serper():
    server = HTTPServer(("127.0.0.1", 0), SerperStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tools")
    return make_tiny_grounding_dino(folder / "gdino"), make_tiny_trocr(folder / "trocr")


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(models.MODELS, "unihd_double", UniHDDouble)
    monkeypatch.setenv("SERPER_API_KEY", KEY)


def run(data, out, tools, serper, *extra, model=("unihd_double", "pretrained=x"), task=TASK):
    detector, ocr = tools
    ocr_helper = ["--helper", "ocr", f"adapter=scene_text,pretrained={ocr},detector={detector},box_threshold=0.0"]
    return main(["run", "--model", model[0], "--model-args", model[1], "--tasks", task, "--data-dir", str(data),
                 "--output-dir", str(out),
                 "--helper", "detector", f"adapter=grounding_dino,pretrained={detector},box_threshold=0.0",
                 *(ocr_helper if task == TASK else []),
                 "--helper", "search", f"adapter=search,pretrained=serper,base_url={serper}", *extra])


def samples(run_dir):
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {r["id"]: {k: v for k, v in r.items() if k != "time_s"} for r in records}


def reference_run(out, mini_datasets, tools, serper, task=TASK) -> list:
    """A run of `task` by the scripted double with the Serper key set; the queries the search stand-in received."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(models.MODELS, "unihd_double", UniHDDouble)
        patch.setenv("SERPER_API_KEY", KEY)
        SerperStandIn.queries.clear()
        assert run(mini_datasets, out, tools, serper, task=task) == 0
        return list(SerperStandIn.queries)


@pytest.fixture(scope="module")
def reference(mini_datasets, tools, serper, tmp_path_factory):
    out = tmp_path_factory.mktemp("unihd") / "run"
    reference_run(out, mini_datasets, tools, serper)
    return out


def test_the_chain_runs_every_tool_and_verifies_with_their_evidence(reference):
    records, tooled = samples(reference), 0
    assert len(records) == 6 and all(r["error"] is None for r in records.values())
    for record in records.values():
        steps = record["steps"]
        assert list(steps) == ["claims", "objects", "queries", "detect", "attribute", "ocr", "search", "verify"]
        assert steps["claims"]["outputs"] == []  # MHaluBench's annotated claims are used (the paper's footnote 2)
        verify = steps["verify"]["prompts"][0]["text"]
        kind = "text-to-image" if record["group"] == "text-to-image" else "image-to-text"
        assert verify.startswith(VERIFY[kind]["system"] + "\n\n" + VERIFY[kind]["user"])
        if kind == "image-to-text" and len(record["parsed"]) == 1:
            # its one claim has a fact question: no object, attribute or scene-text query (EasyDetect's filter)
            assert not (steps["detect"]["prompts"] or steps["attribute"]["prompts"] or steps["ocr"]["prompts"])
            indent = "\n" + " " * 16  # verify.py's template
            assert f"scene text recognition expert model's result:{indent}none information" in verify
            assert f"Here is the attribute information:{indent}none information" in verify
        else:
            assert [p["text"] for p in steps["detect"]["prompts"]] == ["square.circle"]
            detections = steps["detect"]["outputs"][0][0].splitlines()
            assert detections and all(re.fullmatch(r".* \[[0-9., ]+\]", line) for line in detections)
            assert detections[0] + " \n" in verify
            assert steps["attribute"]["prompts"][0]["text"] == "1.What color is the square?\n"
            assert "The square is red." in verify
            assert steps["ocr"]["prompts"][0]["text"] == "word.number"
            tooled += 1
        assert [p["text"] for p in steps["search"]["prompts"]] == ["Who made the sign?", "sign maker"]
        assert "1.Snippet about Who made the sign?\n2.Snippet about sign maker\n" in verify
        assert "Missing" not in verify
        assert record["parsed"] and None not in record["parsed"]
    assert tooled >= 3 and set(SerperStandIn.queries) == {"Who made the sign?", "sign maker"}
    written = [path.read_bytes() for path in reference.rglob("*") if path.is_file()]
    assert written and not any(KEY.encode() in data for data in written)  # the key is read, never stored


def test_query_prompts_are_the_authors(reference):
    record = next(iter(samples(reference).values()))
    objects = record["steps"]["objects"]["prompts"][0]["text"]
    prompt = QUERY_GENERATE["image-to-text"]["object"]
    assert objects.startswith(prompt["system"] + "\n\n" + prompt["user"].split("{claims}")[0].replace("{{", "{")
                              .replace("}}", "}"))


def test_scores_by_claim_and_segment_per_part(reference):
    result = json.loads((reference / "results.json").read_text())["tasks"][TASK]
    assert result["n_scored"] == 6 and result["n_unparsed"] == 0
    assert {"claim_accuracy", "claim_macro_f1", "segment_macro_f1"} <= set(result["metrics"])
    assert sorted(result["groups"]) == ["image-caption", "text-to-image", "vqa"]


def test_a_run_killed_before_verification_resumes_there_and_matches_an_unbroken_run(mini_datasets, tools, serper,
                                                                                      reference, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Killed):
        run(mini_datasets, out, tools, serper, model=("unihd_double", "pretrained=x,kill_on=hallucination judger"))
    journal = store.read_store(out, store.STEPS).records
    journalled = {r["step"] for r in journal.values()}
    assert {"objects", "queries", "search"} <= journalled and "verify" not in journalled
    SerperStandIn.queries.clear()
    assert run(mini_datasets, out, tools, serper) == 0
    searched = sum(r["step"] == "search" for r in journal.values())
    assert searched and len(SerperStandIn.queries) == 2 * (6 - searched)  # journalled searches are not sent again
    assert samples(out) == samples(reference)


def tiny_argv(data, out, tools, serper, model_folder):
    detector, ocr = tools
    return ["run", "--model", "hf", "--model-args", f"pretrained={model_folder},dtype=float32",
            "--tasks", f"{TASK},{CCHALL}",
            "--data-dir", str(data), "--output-dir", str(out), "--gen-kwargs", "max_new_tokens=8", "--batch-size", "1",
            "--limit", "2",
            "--helper", "detector", f"adapter=grounding_dino,pretrained={detector},box_threshold=0.0",
            "--helper", "ocr", f"adapter=scene_text,pretrained={ocr},detector={detector},box_threshold=0.0",
            "--helper", "search", f"adapter=search,pretrained=serper,base_url={serper}"]


@pytest.fixture(scope="module")
def tiny_reference(mini_datasets, tiny_checkpoint, tools, serper, tmp_path_factory):
    out = tmp_path_factory.mktemp("unihd-tiny") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SERPER_API_KEY", KEY)
        assert main(tiny_argv(mini_datasets, out, tools, serper, tiny_checkpoint("qwen2_vl"))) == 0
    return out


def test_a_tiny_random_checkpoint_runs_both_chains_and_scores(tiny_reference):
    results = json.loads((tiny_reference / "results.json").read_text())["tasks"]
    for task, last in ((TASK, "verify"), (CCHALL, "answer")):
        result = results[task]
        assert result["n_scored"] + result["n_unparsed"] == result["n_selected"] == 2
        records = [r for r in samples(tiny_reference).values() if r["task"] == task]
        assert len(records) == result["n_selected"] and all(r["error"] is None and last in r["steps"] for r in records)


@pytest.mark.slow
def test_a_tiny_run_killed_with_sigkill_mid_chain_resumes_and_matches(mini_datasets, tiny_checkpoint, tools, serper,
                                                                       tiny_reference, tmp_path):
    out = tmp_path / "run"
    argv = tiny_argv(mini_datasets, out, tools, serper, tiny_checkpoint("qwen2_vl"))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "SERPER_API_KEY": KEY}
    # kill once an item is past its query step
    kill_when_journalled(argv, env, store.rank_file(out, 0, store.STEPS), b'"step": "queries"')
    steps_done = {(r["id"], r["step"]) for r in store.read_store(out, store.STEPS).records.values()}
    samples_done = {r["id"] for r in store.read_store(out).records.values()}
    assert any(step == "queries" and item not in samples_done for item, step in steps_done)  # killed inside an item
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SERPER_API_KEY", KEY)
        assert main(argv) == 0
    assert samples(out) == samples(tiny_reference)


def test_query_answers_are_read_as_easydetect_writes_them():
    # the paper's Figure 5 writes Python literals; text-to-image scene-text answers are strings, not lists
    assert read_json("Sure: {'claim1': ['athlete', 'uniform'], 'claim2': ['none']}") == {
        "claim1": ["athlete", "uniform"], "claim2": ["none"]}
    assert read_json("no JSON here") is None
    assert per_claim({"claim1": "man.motorcycle", "claim2": "none"}, 3, objects=True) == [["man", "motorcycle"], [], []]
    assert per_claim({"claim1": "What does the sign say? It reads St. Louis."}, 1) == [
        ["What does the sign say? It reads St. Louis."]]


@pytest.fixture(scope="module")
def cchall_reference(mini_datasets, tools, serper, tmp_path_factory):
    out = tmp_path_factory.mktemp("cchall-unihd") / "run"
    return out, reference_run(out, mini_datasets, tools, serper, task=CCHALL)


def test_cchall_unihd_extracts_claims_of_both_answers_calls_the_tools_and_answers_in_cchalls_format(cchall_reference):
    out, queries = cchall_reference
    records = samples(out)
    assert records and all(r["error"] is None for r in records.values())
    for record in records.values():
        steps = record["steps"]
        assert list(steps) == ["statements", "claims", "objects", "facts", "detect", "search", "answer"]
        assert len(steps["claims"]["prompts"]) == 2  # one claim extraction per answer
        assert "[text]:A square is in the image, made by Acme." in steps["claims"]["prompts"][0]["text"]
        assert [p["text"] for p in steps["detect"]["prompts"]] == ["square.circle"]
        answer = steps["answer"]["prompts"][0]["text"]
        assert "claim2: Acme made the square" in answer and "1.Snippet about Who made the sign?" in answer
        assert steps["detect"]["outputs"][0][0].splitlines()[0] + " \n" in answer
        assert record["parsed"] is not None
    assert len(queries) == 2 * 2 * len(records)  # two questions for each answer's fact claim
    result = json.loads((out / "results.json").read_text())["tasks"][CCHALL]
    assert result["n_unparsed"] == 0 and "accuracy" in result["metrics"]


def test_cchall_unihd_killed_before_its_answer_resumes_there(mini_datasets, tools, serper, cchall_reference, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Killed):
        run(mini_datasets, out, tools, serper, task=CCHALL,
            model=("unihd_double", "pretrained=x,kill_on=You are a hallucination detection system"))
    journalled = {r["step"] for r in store.read_store(out, store.STEPS).records.values()}
    assert {"statements", "claims", "search"} <= journalled and "answer" not in journalled
    assert run(mini_datasets, out, tools, serper, task=CCHALL) == 0
    assert samples(out) == samples(cchall_reference[0])


def test_offline_search_ranks_the_users_corpus(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Club America is a football club based in Mexico City.\nThe Eiffel Tower is in Paris.\n"
                      "Bananas are yellow fruit.\n")
    search = models.get_model("search", model=str(corpus), top_k=2)
    conv = [Message("user", [TextPart("Where is the Eiffel Tower?")])]
    evidence = search.generate([conv], GenerationSettings())[0][0].splitlines()
    assert evidence[0] == "The Eiffel Tower is in Paris." and len(evidence) == 2


def test_serper_needs_its_key_from_the_environment(monkeypatch, mini_datasets, tools, serper, tmp_path, capsys):
    monkeypatch.delenv("SERPER_API_KEY")
    assert run(mini_datasets, tmp_path / "run", tools, serper) != 0
    assert "SERPER_API_KEY" in capsys.readouterr().err
