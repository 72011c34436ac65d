"""`hallubench view` without a browser: the pages of a ranking of hand-written runs (real embedding judge), what
they say against the ranking's files, escaping of names and sentences we did not write, media confined to the
dataset folder, a run page's samples, and the push as a static Space to the stand-in Hub."""
import csv
import html
import json
import os
import re
import shutil

import pytest
import yaml

from run_folder_support import rewrite_results, seal

from hallubench.cli.main import main
from hallubench.errors import PublishError
from hallubench.view.pages import score_bin
from hallubench.view.site import build_site
from hallubench.view.space import push_site
from hub_server import StandInHub
from view_support import HOSTILE_NAME, SUPPORTED, TASK, UNSUPPORTED, hand_ranking, write_cmm_run, write_run

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def ranked(tmp_path_factory, mini_datasets):
    root = tmp_path_factory.mktemp("view")
    ranking, runs = hand_ranking(root, mini_datasets)
    site = root / "site"
    assert main(["view", str(ranking), *map(str, runs), "--out", str(site),  # every run folder it names
                 "--data-dir", str(mini_datasets)]) == 0
    return ranking, runs, site


def _sentences(ranking):
    return [json.loads(line) for line in (ranking / "sentences.jsonl").read_text().splitlines()]


def test_sentences_keep_a_score_per_evidence_model(ranked):
    ranking = ranked[0]
    rows = _sentences(ranking)
    models = {"a", "b", "c", HOSTILE_NAME}
    assert all(set(row["evidence"]) == models for row in rows)
    dog = next(r for r in rows if r["sentence"] == UNSUPPORTED)
    # uniform weighting: the CrossCheck score is the mean of the evidence models' judgments
    assert dog["crosscheck"] == pytest.approx(sum(dog["evidence"].values()) / len(models))


def test_leaderboard_page_matches_leaderboard_csv(ranked):
    ranking, _, site = ranked
    page = (site / "index.html").read_text()
    rows = [r for r in csv.DictReader(open(ranking / "leaderboard.csv")) if r["board"] == TASK]
    section = page[page.index('<section class="board" id="board-0"'):]
    shown = re.findall(r'<tr data-model="([^"]*)">', section)[:len(rows)]
    assert [html.unescape(m) for m in shown] == [r["model"] for r in rows]
    for row in rows:
        assert f"[{float(row['ci_low']):.4f}, {float(row['ci_high']):.4f}]" in section
    assert "MINI DATA" in page and "embedding:sentence-transformers/all-MiniLM-L6-v2" in page
    assert "η weights" in page and "refcheck_system_spearman" in page
    assert re.search(r'<td class="model" data-sort="a" title="a · hf · run folder [^"]*/runs/a"><a href="runs/0.html">a</a></td>', page)  # its run page
    assert re.search(r'<details class="sign-test"><summary>p = ', page)  # reachable by tap and keyboard
    assert page.count('<span class="axis"') == page.count('<table class="leaderboard')  # one labelled axis each


def test_the_models_by_benchmarks_board_carries_the_rankings_crosscheck_columns(ranked):
    ranking, _, site = ranked
    page = (site / "index.html").read_text()
    matrix = page[page.index('<table class="matrix'):]
    matrix = matrix[:matrix.index("</table>")]
    assert re.findall(r'<th class="group-head"[^>]*>([^<]*)</th>', matrix) == ["CrossCheck"]
    assert re.findall(r'data-task="([^"]*)" data-group="0"><button><span class="metric-name">([^<]*)</span> ↓', matrix) \
        == [(TASK, TASK)]
    rows = {html.unescape(m): cells for m, cells in re.findall(r'<tr data-model="([^"]*)" class="ours">(.*?)</tr>',
                                                               matrix, re.S)}
    assert set(rows) == {"a", "b", "c", HOSTILE_NAME}  # named as the board names them; a holds its given run folder
    assert 'href="runs/0.html">run a</a>' in rows["a"]
    for row in csv.DictReader(open(ranking / "leaderboard.csv")):
        cells = rows[row["model"]]
        assert f'<span class="value">{float(row["crosscheck"]):.3f}</span>' in cells and 'href="#board-0"' in cells
        assert f'[{float(row["ci_low"]):.3f}, {float(row["ci_high"]):.3f}]' in cells and "MINI" in cells


def test_document_page_colours_sentences_and_escapes_what_it_did_not_write(ranked):
    ranking, _, site = ranked
    pages = sorted((site / "items").rglob("*.html"))
    assert len(pages) == 2  # one board, items q1 and q2
    page = pages[0].read_text()
    rows = {r["sentence"]: r for r in _sentences(ranking) if r["id"] == "q1"}
    dog, red = rows[UNSUPPORTED], rows[SUPPORTED]
    assert score_bin(dog["crosscheck"]) == "cc-3" and score_bin(red["crosscheck"]) == "cc-0"
    assert re.search(rf'class="sentence cc-3"[^>]*>{re.escape(UNSUPPORTED)}</span>', page)
    for path in [site / "index.html", *pages]:
        text = path.read_text()
        assert "<img src=x" not in text and "dog</script>" not in text and "<b>" not in text
    data = re.search(r'<script type="application/json" id="evidence-data">(.*?)</script>', page, re.S).group(1)
    evidence = json.loads(data)
    crosscheck, refcheck, judgments = evidence["models"][HOSTILE_NAME][0]
    assert crosscheck == pytest.approx(dog["crosscheck"], abs=1e-4) and refcheck == pytest.approx(dog["refcheck"], abs=1e-4)
    assert dict(zip(evidence["sources"], judgments)) == pytest.approx(dog["evidence"], abs=1e-4)
    assert 'rel="next"' in page and 'rel="prev"' not in page
    assert "A red square slides left while a tone beeps." in page  # the human reference


def test_media_are_copied_from_the_dataset_folder_and_confined_to_it(ranked, tmp_path, mini_datasets):
    _, runs, site = ranked
    page = sorted((site / "items").rglob("*.html"))[0].read_text()
    src = re.search(r'<video controls preload="metadata" src="../../(media/[0-9a-f]+\.mp4)"', page).group(1)
    assert (site / src).is_file() and "frames at 0.50, 1.50 s" in page and "heard 0.00–2.00 s" in page
    outside = write_run(tmp_path / "runs" / "x", SUPPORTED, [SUPPORTED], mini_datasets, "../cmm/README.md")
    other = write_run(tmp_path / "runs" / "y", SUPPORTED, [SUPPORTED], mini_datasets, "../cmm/README.md")
    assert main(["rank", str(outside), str(other), "--output-dir", str(tmp_path / "r"), "--weighting", "uniform",
                 "--cache", str(tmp_path / "j.sqlite")]) == 0
    index = build_site(tmp_path / "r", [outside, other], tmp_path / "site", data_dir=mini_datasets)
    page = (index.parent / "items" / "0" / "0.html").read_text()
    assert "../cmm/README.md" in page and "not found on this machine" in page
    assert not (index.parent / "media").exists()


def test_a_data_dir_a_run_recorded_is_read_only_when_given_and_only_inside(tmp_path, mini_datasets):
    """results.json's --data-dir is data: here it names a folder linking to a private dataset elsewhere on this
    machine. Not given, nothing of it is read (each item page says why, once); given, its media are copied through
    the door, and a media file linked out of it is not."""
    private = tmp_path / "private" / "avhallubench"
    shutil.copytree(mini_datasets / "avhallubench", private)
    video = sorted((private / "videos").glob("*.mp4"))[0]
    video.write_bytes(b"SECRET-" + os.urandom(16).hex().encode())
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    (recorded / "avhallubench").symlink_to(private, target_is_directory=True)
    name = video.relative_to(private).as_posix()
    runs = [write_run(tmp_path / "runs" / run, SUPPORTED, [SUPPORTED], recorded, name) for run in ("x", "y")]
    assert main(["rank", *map(str, runs), "--output-dir", str(tmp_path / "r"), "--weighting", "uniform",
                 "--cache", str(tmp_path / "j.sqlite")]) == 0

    def site(out, **given):
        index = build_site(tmp_path / "r", runs, tmp_path / out, **given)
        copied = [p.read_bytes() for p in index.parent.rglob("*") if p.is_file() and p.suffix == ".mp4"]
        return (index.parent / "items" / "0" / "0.html").read_text(), copied

    page, copied = site("not-given")
    assert copied == [] and page.count("Media not shown") == 1 and "not found on this machine" not in page
    assert html.unescape(page).count(f"add `--data-dir {recorded}`") == 1 and name in page
    page, copied = site("given", data_dir=recorded)
    assert copied == [video.read_bytes()] and "Media not shown" not in page  # what the refusal kept out
    video.unlink()
    video.symlink_to(tmp_path / "secret.mp4")
    (tmp_path / "secret.mp4").write_bytes(b"SECRET-elsewhere")
    page, copied = site("linked-out", data_dir=recorded)
    assert copied == [] and "not found on this machine" in page


def test_run_page_shows_the_terminal_table_status_and_each_samples_verdict(tmp_path):
    from hallubench.harness.report import mini_notice, subset_notice, unreadable_notice
    from hallubench.view.status import typed_results

    run = write_cmm_run(tmp_path / "run")
    index = build_site(None, [run], tmp_path / "site")  # run folders alone: no ranking
    page = html.unescape((index.parent / "runs" / "0.html").read_text())
    results = typed_results(json.loads((run / "results.json").read_text()))
    for notice in (mini_notice(results), subset_notice(results), unreadable_notice(results)):
        assert notice and notice in page  # the terminal's words, from its functions
    assert "<title>org/model · cmm · hallubench</title>" in page and "Run run" not in page
    rows = re.findall(r'<tr class="group[^"]*" data-group="([^"]*)">\s*<td>[^<]*</td><td>(\d+)</td><td>(\d+)</td>'
                      r'<td class="unreadable">([^<]*)</td>', page)
    assert rows == [("all", "5", "3", "1 (25%) ⚠"), ("visual-language", "5", "3", "1 (25%) ⚠")]
    assert "0.3333 ± 0.2500" in page and "0.0000 ± 0.1250" in page
    assert re.search(r'<table class="nested" data-metric="per_class">.*<th scope="row">yes</th><td>0.5000</td><td>3</td>',
                     page, re.S) and '{"yes"' not in page  # a table, not raw JSON
    verdicts = {item: verdict for verdict, item in
                re.findall(r'data-status="[^"]*" data-verdict="([^"]*)">\s*<td[^>]*><code>cmm</code><br>(\w+)', page)}
    assert verdicts == {"p1": "correct", "p2": "wrong", "p3": "unreadable", "p4": "error",
                        "p5": "wrong"}
    p5 = page[page.index("<br>p5</td>"):]
    assert "✘ wrong" in p5[:p5.index("</tr>")] and "✔" not in p5[:p5.index("</tr>")]  # parser says yes = reference
    assert page.count("✔ correct") == 1 and page.count("✘ wrong") == 2 and "matches" not in page
    assert "only wrong, unreadable or failed (4)" in page and "strict parser's reading" in page
    assert "\x07" not in page and "\x1b" not in page and "I cannot tell\\x07\\x1b[2J" in page  # seen, not sent raw


def test_the_verdict_not_the_strict_parser_says_what_is_unreadable(tmp_path):
    """p3's output was unreadable to the strict parser, but results.json says the headline's rule read it and counted
    it correct: the row is neither tinted nor filtered as unreadable. The metric gives p3 no such verdict, so the
    folder fails `verify`: the page says so above and at the verdict, and the build says so as an error."""
    from hallubench.errors import VerdictMismatchError

    run = write_cmm_run(tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["tasks"]["cmm"]["verdicts"]["p3"] = {"verdict": "correct", "reading": "no"}
    rewrite_results(run, results)
    with pytest.raises(VerdictMismatchError, match=r"site written .*run: results.json differs .* in cmm"):
        build_site(None, [run], tmp_path / "site")
    page = (tmp_path / "site" / "runs" / "0.html").read_text()
    assert 'class="sample status-ok verdict-correct" data-task="cmm" data-status="ok" data-verdict="correct">\n' \
           '<td data-label="task / id"><code>cmm</code><br>p3' in page
    assert "only wrong, unreadable or failed (3)" in page and "<strong>unreadable</strong>" in page  # the parser's
    assert 'class="banner banner-verify"' in page and "VERDICTS DIFFER" in page and "p3: correct (&#39;no&#39;)" in page
    assert page.count("results.json claims:") == 5  # every verdict of the task, not only the edited one


def test_a_run_without_verdicts_shows_no_mark(tmp_path):
    run = write_cmm_run(tmp_path / "run", verdicts=False)
    page = (build_site(None, [run], tmp_path / "site").parent / "runs" / "0.html").read_text()
    assert "✔" not in page and "✘" not in page and "no answer is marked right or wrong" in page
    assert page.count('data-verdict=""') == 5
    assert 'class="banner banner-unverified"' in page and "written before answers had verdicts" in page


def test_an_unfinished_or_mixed_run_folder_is_refused(tmp_path, capsys):
    """The viewer reads run folders through the one check every reader uses (harness/run_state.py)."""
    from hallubench.harness import run_state, store

    run = write_cmm_run(tmp_path / "run")
    ranking = tmp_path / "ranking"
    ranking.mkdir()
    (ranking / "crosscheck.json").write_text(json.dumps({"boards": {}, "judge": {}, "config": {}, "runs": {}}))
    (ranking / "sentences.jsonl").write_text("")
    seal(ranking)
    run_state.mark_unfinished(run)
    assert main(["view", str(ranking), str(run), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and "hallubench run" in err and not (tmp_path / "site" / "index.html").exists()
    run_state.mark_finished(run)
    merged = run / store.MERGED
    first = json.loads(merged.read_text().splitlines()[0])
    stranger = {**first, "key": "x" * 32, "id": "other", "model": "other-model", "model_fingerprint": "f" * 16}
    merged.write_text(merged.read_text() + json.dumps(stranger) + "\n")
    assert main(["view", str(ranking), str(run), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err  # a second model's record: the counts no longer match results.json either
    assert str(run) in err and "--output-dir" in err and not (tmp_path / "site" / "index.html").exists()


def test_view_errors_name_the_folder(ranked, tmp_path, capsys):
    assert main(["view", str(tmp_path), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} is neither a ranking folder" in err and "hallubench rank" in err and "hallubench run" in err
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    assert main(["view", str(ranked[0]), "--out", str(tmp_path / "notes")]) == 2
    assert "hallubench did not write" in capsys.readouterr().err and (tmp_path / "notes" / "mine.txt").is_file()


def test_a_second_build_replaces_the_first_sites_pages(ranked, tmp_path):
    ranking, runs, _ = ranked
    site = tmp_path / "site"
    build_site(None, runs[:2], site)
    assert (site / "runs" / "1.html").is_file()
    build_site(None, runs[:1], site)
    assert sorted(p.name for p in (site / "runs").iterdir()) == ["0.html"]


def test_push_to_a_static_space_refuses_mini_data_unless_allowed(ranked, monkeypatch, tmp_path, capsys):
    ranking, _, site = ranked
    monkeypatch.setenv("HF_TOKEN", "hf_StandInToken")
    hub = StandInHub({})
    try:
        assert main(["view", str(ranking), *map(str, ranked[1]), "--out", str(tmp_path / "s"), "--push-to-hub",
                     "me/board"]) == 2
        assert "--allow-mini-data" in capsys.readouterr().err and hub.requests == []
        with pytest.raises(PublishError, match="mini benchmarks"):
            push_site(site, "me/board", mini=True, endpoint=hub.url)
        url, commit = push_site(site, "me/board", mini=True, allow_mini_data=True, endpoint=hub.url)
    finally:
        hub.close()
    [created] = hub.created
    assert (created["organization"], created["name"], created["type"], created["sdk"]) == ("me", "board", "space", "static")
    [pushed] = hub.commits
    assert pushed["kind"] == "space" and pushed["repo"] == "me/board" and "me/board" in commit
    card = pushed["files"]["README.md"].decode()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["sdk"] == "static" and meta["app_file"] == "index.html" and "hallubench-mini-data" in meta["tags"]
    assert "MINI DATA" in card
    expected = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert set(pushed["files"]) == expected | {"README.md"}
    assert pushed["files"]["index.html"] == (site / "index.html").read_bytes()


def test_serve_answers_on_loopback_with_the_site(ranked):
    import threading
    import urllib.request

    from hallubench.view.serve import make_server

    site = ranked[2]
    server = make_server(site, 0)
    host, port = server.server_address
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as response:
            assert response.read() == (site / "index.html").read_bytes()
    finally:
        server.shutdown()
        server.server_close()
    assert host == "127.0.0.1"


def test_reference_adds_rank_correlations_to_each_board(ranked, tmp_path):
    ranking = ranked[0]
    scores = {row["model"]: float(row["crosscheck"]) for row in csv.DictReader(open(ranking / "leaderboard.csv"))}
    reference = tmp_path / "human.csv"
    reference.write_text("model,score\n" + "".join(f"{m},{s}\n" for m, s in scores.items()))
    index = build_site(ranking, ranked[1], tmp_path / "site", reference=reference)
    page = html.unescape(index.read_text())
    assert re.search(r"viewer_reference_system_spearman</code>: 1\.000 \(n = 4\)", page)  # the same order


def test_view_flags_a_folder_whose_verdicts_were_edited(tmp_path, capsys):
    """`view` re-aggregates verdicts as `verify` does: an edited verdict (manifest and digest left as they were) gets
    the site written with the folder flagged, a line on stderr naming it, and exit status 1; an honest folder 0."""
    honest = write_cmm_run(tmp_path / "honest")
    assert main(["view", str(honest), "--out", str(tmp_path / "ok")]) == 0
    assert "banner-verify" not in (tmp_path / "ok" / "runs" / "0.html").read_text()
    capsys.readouterr()
    run = write_cmm_run(tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["tasks"]["cmm"]["verdicts"]["p2"] = {"verdict": "correct", "reading": "yes"}
    rewrite_results(run, results)
    assert main(["view", str(honest), str(run), "--out", str(tmp_path / "site")]) == 1
    out, err = capsys.readouterr()
    assert "site written" in out and len(err.strip().splitlines()) == 1
    assert f"{run}: results.json differs from its per-answer verdicts in cmm" in err and str(honest) + ":" not in err
    assert f"hallubench run --from-outputs {run}" in err
    index = (tmp_path / "site" / "index.html").read_text()
    assert index.count("≠ verdicts</span>") == 3  # the legend and the flagged folder's two cells (pa, hr)
    assert "VERDICTS DIFFER" in (tmp_path / "site" / "runs" / "1.html").read_text()
    assert "VERDICTS DIFFER" not in (tmp_path / "site" / "runs" / "0.html").read_text()
