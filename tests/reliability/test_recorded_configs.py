"""Credentials, endpoints and paths come only from the user, for every plug-in by construction.

Every text, path or mapping field of every registered model, judge and helper config says what it holds (a field
kind, hallubench/config.py), so the one loader of recorded configs (`PluginConfig.from_recorded`, reached through
`models.recorded_model_args`) can refuse what a file we did not write names: a server, a credential variable, code
to run, a path outside its folder. The registry walk below fails on a new plug-in config with an unmarked field;
the end-to-end test gives `rank --judge implicit` a hostile run folder for every registered adapter, with a loopback
server counting connections and HF_TOKEN set to a canary, and asserts a named refusal, no connection and no canary."""
import dataclasses
import json
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from hallubench.harness.digest import scored_digests
from hallubench.cli.main import main
from hallubench.config import (BENIGN, ENDPOINT, LOCAL_PATH, NAME_OR_PATH, OPAQUE, RUNS_CODE, SECRET, SECRET_ENV,
                               Benign, LocalPath, PluginConfig, Secret, field_kinds, unmarked_fields)
from hallubench.errors import UntrustedRecordError
from hallubench.models import recorded_model_args
from hallubench.judges.implicit import Subject
from hallubench.ranking import implicit_evidence as implicit
from hallubench.ranking.implicit_evidence import read_evidence_run
from hallubench.ranking.specs import ModelSpec
from hallubench.registry import JUDGES, MODELS

ROOT = Path(__file__).resolve().parents[2]
CANARY = "hf_CanaryToken0123456789abcdefABCDEF"  # ASCII, as real tokens are (an HTTP header takes no other)
CONSENT = "--judge-args trust_run_models=true"
TASK = "avhallubench_visual"


def offenders(registries=(("model", MODELS), ("judge", JUDGES))) -> list[str]:
    """'kind name: field' for each field of a registered config that may hold text, a path or a mapping without
    saying what it holds, and 'kind name: no config' for a plug-in registered without one."""
    found = []
    for kind, registry in registries:
        for name in sorted(registry):
            config = getattr(registry[name], "config", None)  # lazy targets carry it: nothing is imported
            if config is None:
                found.append(f"{kind} {name}: no config")
            else:
                found += [f"{kind} {name}: {field}" for field in unmarked_fields(config)]
    return found


def test_every_registered_config_says_what_each_text_field_holds():
    assert sorted(MODELS) and sorted(JUDGES)
    assert offenders() == []


def test_the_walk_reads_the_configs_without_importing_torch():
    code = ("import sys; from tests.reliability.test_recorded_configs import offenders; "
            "assert offenders() == []; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr[-2000:]


@dataclass(frozen=True)
class PlantedArgs(PluginConfig):
    model: Benign[str]
    url: str = "http://127.0.0.1:9/"  # a new adapter's endpoint someone forgot to mark
    retries: int = 3


def test_a_new_adapter_with_an_unmarked_url_fails_the_walk_and_is_refused_when_recorded(monkeypatch, tmp_path):
    monkeypatch.setitem(MODELS, "planted", lambda **args: pytest.fail("the planted adapter was built"))
    MODELS["planted"].config = PlantedArgs
    assert offenders() == ["model planted: url"]
    with pytest.raises(UntrustedRecordError, match=r"model_args\.url='http://elsewhere/ü': its plug-in does not say"):
        recorded_model_args("planted", {"model": "m", "url": "http://elsewhere/ü"}, source="results.json",
                            folder=tmp_path, consent_flag=CONSENT)
    # no config at all: nothing can be checked, so it needs the user's word
    monkeypatch.setitem(MODELS, "bare", lambda **args: None)
    assert "model bare: no config" in offenders()
    with pytest.raises(UntrustedRecordError, match="declares no config"):
        recorded_model_args("bare", {}, source="results.json", folder=tmp_path, consent_flag=CONSENT)


def hostile_value(kind, field, outside: Path, url: str):
    """What a hostile run folder records for a field of this kind (None: leave the field out)."""
    if kind == ENDPOINT:
        return url
    if kind == SECRET_ENV:
        return "HF_TOKEN"
    if kind == SECRET:
        return "sk-from-the-folder-ü"
    if kind in (LOCAL_PATH, NAME_OR_PATH):
        return str(outside)
    if kind == RUNS_CODE:
        return True
    if kind == OPAQUE:
        return {"token": "from-the-folder-ü", "cache_dir": str(outside)}
    if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
        return "modèle-ü"  # a required benign field (openai's model name)
    return None


def hostile_args(config, outside, url):
    kinds = field_kinds(config)
    args = {f.name: hostile_value(kinds[f.name], f, outside, url) for f in dataclasses.fields(config)}
    return {name: value for name, value in args.items() if value is not None}


def dangerous_fields(config):
    return [name for name, kind in field_kinds(config).items() if kind not in (None, BENIGN)]


class CountingServer:
    """A loopback TCP server that counts connections and keeps the bytes (headers included) each one sent."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.connections, self.received, self.stop = 0, b"", threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/vü/"

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(1)
            try:
                self.received += conn.recv(65536)
            except OSError:
                pass
            conn.close()

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def counting_server():
    server = CountingServer()
    yield server
    server.close()


def write_run(folder: Path, adapter: str, model_args: dict, fingerprint: str = "0123456789abcdef") -> Path:
    """A finished run folder of TASK (two items with answers and samples) whose results.json records `adapter`
    with `model_args`, as `hallubench run` writes it."""
    folder.mkdir(parents=True)
    answer = "A red square moves to the left. A tone beeps twice a second."
    records = [{"key": f"{folder.name}-{item}", "task": TASK, "id": item, "prompt": "Describe the vidéo.",
                "outputs": [answer], "samples": [answer, "A red square slides left."], "parsed": answer,
                "reference": "A red square slides left.", "model": f"{adapter}:modèle", "error": None,
                "media": {"video": {"path": "videos/v.mp4", "indices": [4, 12]}}} for item in ("q1", "q2")]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                          encoding="utf-8")
    results = {"run": {"options": {"model": adapter, "model_args": model_args, "tasks": [TASK]}, "mini_data": [],
                       "records_digest": scored_digests(records, {})},
               "model": {"name": f"{adapter}:modèle", "fingerprint": fingerprint},
               "tasks": {TASK: {"metric": None, "scored_by": "crosscheck", "metrics": {}, "n_selected": 2,
                                "n_errors": 0, "n_unparsed": 0, "n_scored": 2}}}
    from run_folder_support import rewrite_results  # (tests/ is on the path under pytest, not in the torch probe)

    rewrite_results(folder, results)  # with its manifest, as a run leaves it
    return folder


# Every adapter with every field a run folder could abuse, and the reported case: the search tool's Serper backend,
# with the fingerprint it would have reloaded (so that on a main without the check it reaches the server).
@pytest.mark.parametrize("adapter,override,fingerprint", [(name, {}, "0123456789abcdef") for name in sorted(MODELS)]
                         + [("search", {"model": "serper"}, "search:serper:{url}:10")])
def test_rank_implicit_refuses_what_a_hostile_run_folder_names_for_every_adapter(adapter, override, fingerprint, tmp_path,
                                                                                 monkeypatch, counting_server, capsys):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # The items' media stand in as text, so that nothing but the refusal stops the evidence model from loading.
    monkeypatch.setattr(implicit.Subjects, "_subject", lambda self, key: Subject((), "Describe the vidéo."))
    config = MODELS[adapter].config
    assert dangerous_fields(config), f"{adapter}: nothing a run folder could abuse? then this test checks nothing"
    outside = tmp_path / "elsewhere-ünï"  # an existing folder outside the run folder
    outside.mkdir()
    (outside / "corpus.txt").write_text("a passage\n")
    args = {**hostile_args(config, outside, counting_server.url), **override}
    clean = write_run(tmp_path / "runs" / "clean", "hf", {"pretrained": "org/some-model"})  # a Hub id: fine
    hostile = write_run(tmp_path / "runs" / "hostïle", adapter, args, fingerprint.format(url=counting_server.url))
    out = tmp_path / "ranking"
    judge = CountingServer()  # the judge is the user's (a server on the command line): it may be built, not reached
    try:
        code = main(["rank", str(hostile), str(clean), "--output-dir", str(out), "--cache", str(tmp_path / "c.sqlite"),
                     "--judge", "implicit", "--judge-args",
                     f"adapter=openai,pretrained=judge-ü,base_url={judge.url},api_key_env=none,max_retries=0"])
    finally:
        judge.close()
    printed = capsys.readouterr()
    assert counting_server.connections == 0 and counting_server.received == b"", counting_server.received[:300]
    assert judge.connections == 0
    assert code == 2, printed.err
    assert f"{hostile / 'results.json'}" in printed.err and CONSENT in printed.err
    named = [name for name in dangerous_fields(config) if f"run.options.model_args.{name}=" in printed.err
             or f"run.options.model_args.{name} is" in printed.err]
    assert set(named) >= {name for name in dangerous_fields(config) if name in args and name not in override}, printed.err
    assert "Traceback" not in printed.err
    written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert all(CANARY not in text for text in (printed.out, printed.err))
    assert all(CANARY.encode() not in data for data in written)


@pytest.mark.parametrize("adapter", sorted(MODELS))
def test_each_dangerous_field_alone_is_refused_and_named(adapter, tmp_path):
    config = MODELS[adapter].config
    folder = tmp_path / "run"
    folder.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    required = {f.name: "modèle-ü" for f in dataclasses.fields(config)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    kinds = field_kinds(config)
    for name in dangerous_fields(config):
        field = next(f for f in dataclasses.fields(config) if f.name == name)
        value = hostile_value(kinds[name], field, outside, "http://127.0.0.1:9/ü")
        recorded = {**required, name: value}
        with pytest.raises(UntrustedRecordError, match=rf"model_args\.{name}\b") as refused:
            recorded_model_args(adapter, recorded, source="r/results.json", folder=folder, consent_flag=CONSENT)
        assert CONSENT in str(refused.value) and "r/results.json" in str(refused.value)
        if kinds[name] == SECRET:
            assert value not in str(refused.value)


@pytest.mark.parametrize("value,inside", [
    ("org/model", True), ("model-name", True),          # Hub ids: not paths
    ("{folder}/ckpt", True), ("{folder}/../elsewhere", False), ("{outside}", False), ("/", False),
    ("~/ckpt", False), ("../ckpt", False), ("{folder}/link-out", False),  # a link out of the folder is followed
    ("~no-such-user-ü/ckpt", False), ("{folder}/ckpt\x00/../../elsewhere", False),  # no path we could check
])
def test_a_recorded_checkpoint_is_a_hub_id_or_a_path_inside_the_run_folder(value, inside, tmp_path):
    folder = tmp_path / "rün"
    (folder / "ckpt").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (folder / "link-out").symlink_to(outside)
    recorded = {"pretrained": value.format(folder=folder, outside=outside)}
    check = lambda: recorded_model_args("hf", recorded, source="results.json", folder=folder,  # noqa: E731
                                        consent_flag=CONSENT)
    if inside:
        assert check() == recorded
    else:
        with pytest.raises(UntrustedRecordError, match=r"model_args\.pretrained=.* is a path outside"):
            check()
    # the user's consent, or the user's own arguments, let any of them through
    assert recorded_model_args("hf", recorded, source="results.json", folder=folder, consent_flag=CONSENT,
                               trusted=True) == recorded
    assert recorded_model_args("hf", recorded, source="results.json", folder=folder, consent_flag=CONSENT,
                               given=recorded) == recorded


def test_only_the_fields_the_user_gave_count_as_the_users(tmp_path):
    """crosscheck's own runs: the user's specs are given; a folder that says more than the spec is still refused."""
    spec = ModelSpec("a", "openai", {"pretrained": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "K"})
    folder = write_run(tmp_path / "a", "openai", spec.model_args)
    assert read_evidence_run("a", folder, given=spec).options.model_args == spec.model_args
    other = ModelSpec("a", "openai", {**spec.model_args, "base_url": "http://127.0.0.1:9/other"})
    with pytest.raises(UntrustedRecordError, match=r"base_url='http://127.0.0.1:9/v1' \(as recorded\)"):
        read_evidence_run("a", folder, given=other)
    hf = ModelSpec("a", "hf", spec.model_args)  # another adapter: nothing of it is the user's word for this one
    with pytest.raises(UntrustedRecordError, match="api_key_env='K'"):
        read_evidence_run("a", folder, given=hf)


def test_a_reloaded_run_keeps_no_helpers_or_includes(tmp_path):
    folder = write_run(tmp_path / "a", "hf", {"pretrained": "org/m"})
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    results["run"]["options"].update(helpers={"verifier": {"adapter": "search", "pretrained": "serper",
                                                           "base_url": "http://elsewhere/"}},
                                     include=["/tmp/evil.py"])
    from run_folder_support import rewrite_results

    rewrite_results(folder, results)
    options = read_evidence_run("a", folder).options
    assert options.helpers == {} and options.include == []


@dataclass(frozen=True)
class PathsArgs(PluginConfig):
    corpora: LocalPath[list[str]] = dataclasses.field(default_factory=list)
    api_key: Secret[str | None] = None


def test_a_path_field_holding_more_than_one_path_and_a_recorded_key_are_refused(tmp_path):
    folder = tmp_path / "run"
    (folder / "c.txt").parent.mkdir()
    with pytest.raises(UntrustedRecordError) as refused:
        PathsArgs.from_recorded({"corpora": [str(folder / "c.txt")], "api_key": "sk-from-the-file-ü"},
                                source="results.json", folder=folder, what="reloading it", consent_flag=CONSENT)
    assert "corpora=[" in str(refused.value) and "no single path" in str(refused.value)
    assert "api_key is a credential" in str(refused.value) and "sk-from-the-file" not in str(refused.value)
    assert PathsArgs.from_recorded({}, source="results.json", folder=folder, what="reloading it",
                                   consent_flag=CONSENT) == PathsArgs()
