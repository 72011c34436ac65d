"""How fast `hallubench view` builds the site of a full-size AVHalluBench ranking and how heavy its pages are.

A synthetic ranking written by the real writer (ranking/report.py): 10 models x 175 documents, ~6 sentences per
answer, the four AVHalluBench boards (visual, audio and their audio-visual boards, 20 evidence sources each), and
10 run folders of 350 samples each whose media (one small file per video) sit in a dataset folder. Prints the
build time (best of --repeats, wall and CPU: on a shared machine the CPU time is the steadier figure), the size of the index, of a document page and of a run page, the whole site, and,
when Debian's chromium and chromedriver are installed, how long a document page takes to load from disk.

    python tests/perf/bench_viewer.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from hallubench.ranking.board import Board, Ranking
from hallubench.ranking.report import write_ranking
from hallubench.view.site import build_site
from hallubench.view.sources import read_ranking

MODELS, DOCUMENTS, SENTENCES = 10, 175, 6
TASKS = ("avhallubench_visual", "avhallubench_audio")
WORDS = "a red square moves left while tone beeps twice second blue circle stands still centre white dog piano".split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."


def _board(name: str, models: list[str], sources: list[str], documents: list[str], rng: random.Random) -> Board:
    sentences = {m: [[_sentence(rng) for _ in range(rng.randint(SENTENCES - 2, SENTENCES + 2))] for _ in documents]
                 for m in models}
    evidence = {m: {d: {s: [rng.random() for _ in sentences[m][k]] for s in sources} for k, d in enumerate(documents)}
                for m in models}
    sentence_scores = {m: {d: [statistics.fmean(evidence[m][d][s][i] for s in sources) for i in range(len(sentences[m][k]))]
                           for k, d in enumerate(documents)} for m in models}
    document_scores = {m: {d: statistics.fmean(v) for d, v in per.items()} for m, per in sentence_scores.items()}
    scores = {m: statistics.fmean(x for v in per.values() for x in v) for m, per in sentence_scores.items()}
    results = {"scores": scores, "ranking": sorted(scores, key=scores.get), "sentence_scores": sentence_scores,
               "document_scores": document_scores, "evidence_scores": evidence, "selfcheck_scores": {},
               "eta": {m: {s: 1 / len(sources) for s in sources} for m in models}}
    return Board(name, documents, sentences, results, selfcheck={m: rng.random() for m in models})


def make_workload(root: Path) -> tuple[Path, list[Path]]:
    rng = random.Random(0)
    models = [f"model-{k}" for k in range(MODELS)]
    documents = [f"video{k:03d}_0.000_10.000" for k in range(DOCUMENTS)]
    data = root / "datasets" / "avhallubench"
    (data / "videos").mkdir(parents=True)
    (data / "README.md").write_text("---\nhallubench:\n  benchmark: avhallubench\n---\n")
    for document in documents:
        (data / "videos" / f"{document}.mp4").write_bytes(bytes(rng.getrandbits(8) for _ in range(20_000)))
    runs = []
    for model in models:
        folder = root / "runs" / model
        folder.mkdir(parents=True)
        records = [{"key": f"{model}-{task}-{d}", "task": task, "id": d, "prompt": "Describe the video in one paragraph.",
                    "outputs": [_sentence(rng)], "samples": [], "parsed": None, "error": None,
                    "reference": " ".join(_sentence(rng) for _ in range(4)),
                    "media": {"video": {"path": f"videos/{d}.mp4", "timestamps": [0.6 * k for k in range(16)]},
                              "audio": {"path": f"videos/{d}.mp4", "start": 0.0, "end": 10.0}}}
                   for task in TASKS for d in documents]
        (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        (folder / "results.json").write_text(json.dumps({"run": {"options": {"data_dir": str(root / "datasets")}},
                                                         "tasks": {}, "model": {"name": "hf"}}))
        runs.append(folder)
    av = [f"{m}@{kind}" for kind in ("visual", "audio") for m in models]
    boards = [_board(t, models, models, documents, rng) for t in TASKS] + \
        [_board(f"{t}_av", models, av, documents, rng) for t in TASKS]
    ranking = Ranking(boards, judge={"judge_id": "synthetic", "prompt_version": "v0", "counters": {}}, config={},
                      runs={m: str(f) for m, f in zip(models, runs)})
    return write_ranking(ranking, root / "ranking"), runs


def _size(path: Path) -> str:
    return f"{path.stat().st_size / 1024:.0f} KiB"


def _browser_load_ms(page: Path) -> float | None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        times = []
        for _ in range(3):
            browser.get(page.as_uri())
            times.append(browser.execute_script(
                "var t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd - t.startTime;"))
        return min(times)
    finally:
        browser.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        ranking, runs = make_workload(root)
        print(f"workload: {MODELS} models x {DOCUMENTS} documents x 4 boards, {len(runs)} run folders "
              f"(made in {time.perf_counter() - started:.1f} s; sentences.jsonl {_size(ranking / 'sentences.jsonl')})")
        times, cpu = [], []
        for k in range(args.repeats):
            site = root / f"site{k}"
            started, started_cpu = time.perf_counter(), time.process_time()
            index = build_site(ranking, runs, site, data_dir=root / "datasets")  # the media folder, given
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        started_cpu = time.process_time()
        read_ranking(ranking)
        reading = time.process_time() - started_cpu
        print(f"build: best {min(times):.2f} s wall, {min(cpu):.2f} s CPU (median {statistics.median(times):.2f} s wall) "
              f"over {args.repeats}, the first including imports; reading the ranking folder alone {reading:.2f} s CPU")
        site = index.parent
        documents = sorted((site / "items").rglob("*.html"))
        sizes = sorted(p.stat().st_size for p in documents)
        files = [p for p in site.rglob("*") if p.is_file()]
        print(f"pages: index.html {_size(index)}; {len(documents)} document pages, median "
              f"{statistics.median(sizes) / 1024:.0f} KiB, largest {sizes[-1] / 1024:.0f} KiB; run page "
              f"{_size(site / 'runs' / '0.html')}; items.js {_size(site / 'assets' / 'items.js')}")
        print(f"site: {len(files)} files, {sum(p.stat().st_size for p in files) / 2**20:.1f} MiB "
              f"({len(list((site / 'media').iterdir()))} media files)")
        load = _browser_load_ms(documents[len(documents) // 2])
        print("document page load in headless chromium: " + (f"{load:.0f} ms (best of 3)" if load is not None
                                                            else "skipped (no chromium/chromedriver)"))


if __name__ == "__main__":
    main()
