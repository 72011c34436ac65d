"""`hallubench reproduce` and its registry: every declared reproduction computed from the authors' released files
gives the values and verdict the docs page states; the pins equal the files; the page's table is the generator's;
the fetcher takes files only from its endpoint, checked, and never connects offline.

The fetch tests run `hallubench reproduce` against a stand-in file server on 127.0.0.1 that serves the reference
folder under the pinned `<repo>/<commit>/<path>` URLs (as raw.githubusercontent.com does), and count its requests.
"""
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hallubench.errors import ReferenceFilesError
from hallubench.registry import REPRODUCTIONS
from hallubench.reproduce import wikibio
from hallubench.reproduce.references import References, _python_literal_to_json, pins
from hallubench.reproduce.report import page_with_table

PAGE = Path(__file__).resolve().parents[1] / "docs" / "topics" / "reproductions.md"
COMPUTED = [name for name in REPRODUCTIONS if REPRODUCTIONS[name].compute is not None]


@pytest.mark.parametrize("name", COMPUTED)
def test_every_reproduction_gives_the_values_and_verdict_the_page_states(references, name):
    reproduction = REPRODUCTIONS[name]
    result = reproduction.run(references)
    drifted = {cell["cell"]: cell["ours"] for cell, declared in zip(result["cells"], reproduction.cells)
               if declared.drifted(cell["ours"])}
    assert not drifted, f"{name}: computed values differ from the page's: {drifted}"
    assert result["verdict"] == reproduction.declared_verdict()


def test_table6_llama2_based_rho_is_exact(references):
    cells = {c["cell"]: c for c in REPRODUCTIONS["crosscheck-table6-self-bias"].run(references)["cells"]}
    assert cells["ρ Llama-2-based"]["published"] == 55.49 and cells["ρ Llama-2-based"]["verdict"] == "exact"


def test_table1_weighted_run_uses_the_selfcheck_softmax(references):
    from hallubench.reproduce.crosscheck_tables import _wikibio

    runs = _wikibio(references)
    selfcheck, falcon_eta = runs["selfcheck"]["scores"], runs["explicit_weighted"]["eta"]["falcon"]
    assert sorted(falcon_eta) == sorted(wikibio.EVIDENCE + ["falcon"])
    assert sum(falcon_eta.values()) == pytest.approx(1.0)
    assert max(falcon_eta, key=falcon_eta.get) == min(falcon_eta, key=lambda model: selfcheck[model])


def test_table10_selfcheck_convention_drops_the_all_major_passages(references):
    from hallubench.reproduce.reproduction import load_metric

    released = references.read_json(wikibio.GPT3)
    predictions = [[value / wikibio.SAMPLES for value in document["llama2"]] for document in released["results"]]
    detection = load_metric("sentence_detection")
    kept = detection.compute(predictions=predictions, references=released["labels"], drop_all_major=False)
    dropped = detection.compute(predictions=predictions, references=released["labels"])
    assert (kept["num_passages"], kept["num_sentences"], dropped["num_passages_nonfact_star"]) == (238, 1908, 206)
    assert dropped["nonfact_star_auc_pr"] < kept["nonfact_star_auc_pr"]


def test_every_pin_equals_its_reference_file(shared_data):
    for local, pin in pins().items():
        data = (shared_data / local).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (pin.size, pin.sha256), local


def test_every_file_a_reproduction_reads_is_pinned_and_every_pin_is_read_or_a_release():
    read = {local for name in REPRODUCTIONS for local in REPRODUCTIONS[name].files}
    assert read <= set(pins())
    # the releases and the unscored passages are pinned for the builders' and data tests (tests/conftest.py)
    assert {local.split("/")[0] for local in set(pins()) - read} <= {"releases", "crosscheck_wikibio", "avhallubench",
                                                                      "sac3", "mhalubench"}


def test_the_docs_table_is_the_generators_output():
    page = PAGE.read_text(encoding="utf-8")
    assert page == page_with_table(page), "regenerate it: python -m hallubench.reproduce docs/topics/reproductions.md"
    for name in REPRODUCTIONS:
        assert REPRODUCTIONS[name].table in page


def test_a_python_literal_is_read_without_running_code(tmp_path):
    pin = next(iter(pins().values()))
    assert json.loads(_python_literal_to_json(b"# x\nmetrics = {'a': {'b': 1.5}}\n", pin)) == {"a": {"b": 1.5}}
    marker = tmp_path / "ran"
    with pytest.raises(ReferenceFilesError, match="not one Python literal"):
        _python_literal_to_json(f"metrics = open({str(marker)!r}, 'w')\n".encode(), pin)
    assert not marker.exists()


def test_a_given_folder_with_an_altered_file_is_refused_naming_it(shared_data, tmp_path):
    name = "leaderboard/avhallu-audio.csv"
    (tmp_path / "leaderboard").mkdir()
    original = shared_data.joinpath(name).read_bytes()
    (tmp_path / name).write_bytes(original[:-2] + (b"9" if original[-2:-1] != b"9" else b"8") + original[-1:])
    with pytest.raises(ReferenceFilesError, match="avhallu-audio.csv is not the authors' file"):
        References(tmp_path, cache=False).ensure([name])


# --- fetching, through the CLI against a stand-in server -------------------------------------------------------

class FileServer(http.server.ThreadingHTTPServer):
    """Serves `files` (url path -> bytes) and records every request path."""

    def __init__(self, files):
        self.files, self.requests = files, []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                body = outer.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def server(shared_data):
    files = {f"/{pin.repo}/{pin.commit}/{pin.path}": (shared_data / local).read_bytes()
             for local, pin in pins().items() if pin.convert is None}
    with FileServer(files) as running:
        yield running
        running.shutdown()


def reproduce(args, home, endpoint, **env):
    environment = {**{key: value for key, value in os.environ.items() if key != "HF_HUB_OFFLINE"},
                   "HF_HOME": str(home), "HALLUBENCH_REFERENCES_ENDPOINT": endpoint, **env}
    return subprocess.run([sys.executable, "-m", "hallubench", "reproduce", *args], capture_output=True, text=True,
                          env=environment, timeout=300)


def test_a_reproduction_fetches_its_files_once_checked_then_runs_from_the_cache(server, tmp_path):
    out = reproduce(["mhalubench-release", "-o", str(tmp_path / "out")], tmp_path / "home", server.url)
    assert out.returncode == 0, out.stderr
    assert server.requests == ["/BriansIDP/crosscheckgpt/358512a1e2f71318cae9c48bb492cb1e7252b965/"
                               "data/VisualImage/image_to_text_annotated.json"]
    cached = tmp_path / "home" / "hallubench" / "references" / "mhalubench" / "image_to_text_annotated.json"
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == pins()["mhalubench/image_to_text_annotated.json"].sha256
    rows = json.loads((tmp_path / "out" / "reproductions.json").read_text())
    assert [(c["cell"], c["verdict"]) for c in rows[0]["cells"]][:3] == [("responses", "exact"), ("segments", "exact"),
                                                                         ("claims", "exact")]
    assert "1142" in out.stdout and "1 reproductions: 1 exact" in out.stdout
    again = reproduce(["mhalubench-release", "-o", str(tmp_path / "out")], tmp_path / "home", "http://127.0.0.1:9")
    assert again.returncode == 0, again.stderr
    assert len(server.requests) == 1


def test_a_served_file_that_differs_from_its_pin_is_refused_and_not_written(server, tmp_path):
    pin = pins()["leaderboard/avhallu-visual.csv"]
    server.files[f"/{pin.repo}/{pin.commit}/{pin.path}"] += b"\nextra,row\n"
    out = reproduce(["crosscheck-table4-visual"], tmp_path / "home", server.url)
    assert out.returncode == 1
    (line,) = out.stderr.strip().splitlines()[-1:]
    assert "is not the pinned file" in line and "refusing it, nothing written" in line
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "home" / "hallubench" / "references" / "leaderboard" / "avhallu-visual.csv").exists()


def test_offline_nothing_connects_and_one_line_says_how_to_get_the_files(server, tmp_path):
    out = reproduce(["crosscheck-table4-audio"], tmp_path / "home", server.url, HF_HUB_OFFLINE="1")
    assert out.returncode == 1 and server.requests == []
    last = out.stderr.strip().splitlines()[-1]
    assert "HF_HUB_OFFLINE is set" in last and "hallubench reproduce --fetch-only" in last
    assert "Traceback" not in out.stderr


def test_without_network_one_line_names_the_file_and_what_to_do(tmp_path):
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
    out = reproduce(["sac3-table3-binary"], tmp_path / "home", closed)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("hallubench reproduce: error: could not fetch sac3/") and "--references DIR" in last


def test_references_folder_reads_no_network_and_list_names_every_row(shared_data, server, tmp_path):
    folder = tmp_path / "refs"
    shutil.copytree(shared_data / "leaderboard", folder / "leaderboard")
    out = reproduce(["crosscheck-table4-visual", "--references", str(folder), "-o", str(tmp_path / "o")],
                    tmp_path / "home", server.url)
    assert out.returncode == 0, out.stderr
    assert server.requests == [] and "86.67" in out.stdout
    listed = reproduce(["--list"], tmp_path / "home", server.url)
    assert [line.split(":")[0] for line in listed.stdout.splitlines() if not line.startswith(" ")] == list(REPRODUCTIONS)


def test_every_reproduction_is_linked_from_a_docs_page_by_its_anchor():
    docs = PAGE.parents[1]
    text = "\n".join(page.read_text(encoding="utf-8") for page in docs.rglob("*.md") if page != PAGE)
    unlinked = [name for name in REPRODUCTIONS if f"reproductions.md#{name})" not in text]
    assert not unlinked, f"no benchmark or method page links these rows: {unlinked}"
    assert all(f'<a id="{name}"></a>' in PAGE.read_text(encoding="utf-8") for name in REPRODUCTIONS)
