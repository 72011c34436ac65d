"""The viewer in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`, installed by install.sh)
driven by selenium opens sites from disk (file://, no server): the site of a demo-style ranking (three tiny random
Qwen2.5-Omni thinkers through `hallubench crosscheck` on the mini AVHalluBench, embedding judge) and that of a
ranking of hand-written runs where one sentence is known to be unsupported. Every page must load without a
JavaScript error in the console. Screenshots go to $HALLUBENCH_SCREENSHOTS (default: the test's temporary folder)."""
import csv
import importlib.metadata
import json
import os
import re
import shutil
import time
import urllib.parse
from pathlib import Path

import pytest
import yaml

from hallubench.cli.demo import write_site
from hallubench.cli.main import main
from hallubench.harness.data import default_data_dir
from hallubench.view.site import build_site
from run_folder_support import rewrite_results
from view_support import (HOSTILE_NAME, SUPPORTED, TASK, UNSUPPORTED, hand_ranking, served_ranking, write_cmm_run,
                          write_pope_run)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
CHROMIUM, DRIVER = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="no headless browser: install Debian's chromium and "
                                "chromium-driver (./install.sh does)")
TASKS = ["avhallubench_visual", "avhallubench_audio"]


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra: pip install -e .[test]")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
                 "--allow-file-access-from-files"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("HALLUBENCH_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_page(browser, path: Path, anchor: str = ""):
    """Load `path` from disk (at `#anchor`); fail on any console error (JavaScript errors, missing files)."""
    browser.get(path.resolve().as_uri() + (f"#{anchor}" if anchor else ""))
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == [], errors


WIDTHS = (400, 1400)  # a phone and a desktop


def check_page(browser, path: Path, width: int, shots: Path | None = None):
    """At `width` px: `path` loads without a console error, nothing scrolls sideways, and every link inside the site
    names a file that exists (links to the Hub are checked by the tests of their ids); a full-page screenshot."""
    browser.set_window_size(width, 900)
    open_page(browser, path)
    scroll, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner, f"{path} scrolls sideways at {width} px: {scroll} > {inner}"
    for href in browser.execute_script("return Array.from(document.querySelectorAll('a[href]'), a => a.href)"):
        if href.startswith("file://"):
            target = Path(urllib.parse.unquote(urllib.parse.urlsplit(href).path))
            assert target.is_file(), f"{path} links to {href}, which is not there"
        else:
            assert href.startswith("https://huggingface.co/"), href
    if shots is not None:
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(width, min(height + 140, 6000))
        browser.save_screenshot(str(shots / f"{'-'.join(path.with_suffix('').parts[-4:])}-{width}.png"))  # one per site
        browser.set_window_size(width, 900)


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory, mini_datasets):
    """What `hallubench demo` ranks, made smaller (three tiny models, two items, two samples each), and its site."""
    import torch

    from hallubench.testing.demo import tiny_specs

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("demo-view")
    specs = tiny_specs(root / "models")
    config = root / "models.yaml"
    config.write_text(yaml.safe_dump({
        "model_args": {"dtype": "float32"}, "tasks": TASKS, "limit": 2, "num_samples": 2, "num_frames": 2,
        "gen_kwargs": {"max_new_tokens": 12},
        "models": [{"name": s.name, "pretrained": s.model_args["pretrained"]} for s in specs]}))
    out = root / "crosscheck"
    with pytest.MonkeyPatch.context() as patch:  # `--data-dir mini` as the demo runs it, on the session's mini build
        patch.setenv("HALLUBENCH_CACHE", str(root / "cache"))
        default_data_dir().parent.mkdir()
        default_data_dir().symlink_to(mini_datasets.parent, target_is_directory=True)
        assert main(["crosscheck", "--config", str(config), "--data-dir", "mini", "--output-dir", str(out),
                     "--cache", str(root / "judgments.sqlite"), "--refcheck"]) == 0
        write_cmm_run(root / "run")  # where the demo's own run folder goes
        write_site(root)  # the demo's last step: the site of root/crosscheck/ranking and every run folder
    return out / "ranking", root / "site"


def test_leaderboard_order_and_intervals_match_leaderboard_csv(browser, demo_site, shots):
    ranking, site = demo_site
    open_page(browser, site / "index.html")
    rows = list(csv.DictReader(open(ranking / "leaderboard.csv")))
    boards = sorted({row["board"] for row in rows})
    assert len(boards) == 4  # the two tasks and their audio-visual boards
    tabs = browser.find_elements("css selector", '.tabs [role="tab"]')
    assert [tab.text for tab in tabs] == list(dict.fromkeys(row["board"] for row in rows))  # a tab per board
    for tab in tabs:
        tab.click()  # its board alone is shown
        board = tab.text
        shown_panels = [p.get_attribute("id") for p in browser.find_elements("css selector", ".board") if p.is_displayed()]
        assert shown_panels == [tab.get_attribute("aria-controls")] and tab.get_attribute("aria-selected") == "true"
        expected = [row for row in rows if row["board"] == board]
        shown = browser.find_elements("css selector", f'table[data-board="{board}"] tbody tr')
        assert [tr.get_attribute("data-model") for tr in shown] == [row["model"] for row in expected]
        for tr, row in zip(shown, expected):
            cell = tr.find_element("css selector", "td.interval")
            assert float(cell.get_attribute("data-low")) == pytest.approx(float(row["ci_low"]), abs=1e-12)
            assert float(cell.get_attribute("data-high")) == pytest.approx(float(row["ci_high"]), abs=1e-12)
            assert cell.find_element("css selector", ".range").size["width"] > 0  # the error bar is drawn
    assert "MINI DATA" in browser.find_element("css selector", ".banner-mini").text
    browser.save_screenshot(str(shots / "leaderboard.png"))
    tabs[0].click()
    first = tabs[0].text
    table = browser.find_element("css selector", f'table[data-board="{first}"]')
    table.find_elements("css selector", "th button")[1].click()  # sort by model name
    names = [tr.get_attribute("data-model") for tr in table.find_elements("css selector", "tbody tr")]
    assert names == sorted(names)
    table.find_elements("css selector", "th button")[2].click()  # by CrossCheck score: the ranking again
    assert [tr.get_attribute("data-model") for tr in table.find_elements("css selector", "tbody tr")] == \
        [row["model"] for row in rows if row["board"] == first]


@pytest.mark.parametrize("width", WIDTHS)
def test_demo_site_fits_a_phone_and_a_desktop(browser, demo_site, shots, width):
    _, site = demo_site
    for page in [site / "index.html", site / "items" / "0" / "0.html", *sorted((site / "runs").glob("*.html"))]:
        check_page(browser, page, width, shots)
        assert "MINI DATA" in browser.find_element("css selector", ".banner-mini").text
    check_page(browser, site / "published.html", width, shots)
    browser.set_window_size(1400, 1000)


def test_document_page_plays_the_media_and_breaks_a_sentence_down(browser, demo_site, shots):
    _, site = demo_site
    open_page(browser, site / "items" / "0" / "0.html")
    video = browser.find_element("css selector", "video")
    deadline = time.monotonic() + 10
    while browser.execute_script("return arguments[0].readyState", video) < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert browser.execute_script("return arguments[0].duration", video) > 0  # the copied clip opens from disk
    assert browser.find_element("css selector", ".reference").text
    sentence = browser.find_element("css selector", ".response .sentence")
    sentence.click()
    panel = browser.find_element("css selector", ".response .breakdown")
    assert panel.is_displayed() and len(panel.find_elements("css selector", "tr")) == 3  # one per evidence model
    browser.save_screenshot(str(shots / "document.png"))
    browser.find_element("id", "next").click()
    assert browser.current_url.endswith("/items/0/1.html")
    search = browser.find_element("id", "search")
    search.send_keys("hbMini")
    results = browser.find_elements("css selector", "#search-results a")
    assert results and all("hbMini" in a.text for a in results)
    results[0].click()
    assert "/items/" in browser.current_url
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_known_unsupported_sentence_is_coloured_unsupported(browser, tmp_path, mini_datasets, shots):
    ranking, runs = hand_ranking(tmp_path, mini_datasets)
    cmm = write_cmm_run(tmp_path / "cmm-run")
    site = tmp_path / "site"
    assert main(["view", str(ranking), *map(str, runs), str(cmm), "--out", str(site)]) == 0
    open_page(browser, site / "items" / "0" / "0.html")  # a hostile sentence would raise an alert here
    dog = browser.find_element("css selector", f'.response[data-model="{HOSTILE_NAME}"] .sentence')
    assert dog.text == UNSUPPORTED and "cc-3" in dog.get_attribute("class").split()
    red = browser.find_element("css selector", '.response[data-model="a"] .sentence')
    assert red.text == SUPPORTED and "cc-0" in red.get_attribute("class").split()
    swatch = browser.find_element("css selector", ".legend .cc-3")
    assert dog.value_of_css_property("background-color") == swatch.value_of_css_property("background-color")
    assert dog.value_of_css_property("background-color") != red.value_of_css_property("background-color")
    browser.save_screenshot(str(shots / "document-unsupported.png"))
    cmm_page = next(page for page in sorted((site / "runs").glob("*.html")) if 'data-task="cmm"' in page.read_text())
    open_page(browser, cmm_page)
    rows = browser.find_elements("css selector", "tr.sample")
    browser.find_element("id", "flagged-filter").click()
    shown = [row.get_attribute("data-verdict") for row in rows if row.is_displayed()]
    assert len(rows) == 5 and sorted(shown) == ["error", "unreadable", "wrong", "wrong"]
    browser.save_screenshot(str(shots / "run.png"))
    assert TASK in (site / "index.html").read_text()
    for width in WIDTHS:
        for page in [site / "index.html", *sorted((site / "items").rglob("*.html")), site / "runs" / "0.html"]:
            check_page(browser, page, width, shots if page.stem in ("index", "0") else None)
            assert "MINI DATA" in browser.find_element("css selector", ".banner-mini").text
    open_page(browser, site / "index.html")
    detail = browser.find_element("css selector", "details.sign-test")
    summary = detail.find_element("css selector", "summary")
    browser.execute_script("arguments[0].focus()", summary)
    summary.send_keys(" ")  # the keyboard opens it (a tap does too: it is a <details>)
    assert detail.get_attribute("open") is not None and "items better" in detail.text


@pytest.fixture(scope="module")
def pope_site(tmp_path_factory):
    """The site of two models' POPE run folders and a CMM run, without a ranking."""
    root = tmp_path_factory.mktemp("pope-view")
    runs = [write_pope_run(root / "a", "org/model-a", 0.8125),
            write_pope_run(root / "b", "/ckpt/local/model-b", 0.5, mini=True, unreadable=12),
            write_cmm_run(root / "cmm")]
    assert main(["view", *map(str, runs), "--out", str(root / "site")]) == 0
    return root / "site"


@pytest.mark.parametrize("width", WIDTHS)
def test_run_folders_alone_make_a_board_that_fits_the_screen(browser, pope_site, shots, width):
    pages = [pope_site / "index.html", *sorted((pope_site / "runs").glob("*.html"))]
    for page in pages:
        check_page(browser, page, width, shots)
        assert browser.find_element("css selector", ".top").is_displayed()
    open_page(browser, pope_site / "runs" / "1.html")  # model-b: mini data, mostly unreadable
    kinds = {b.get_attribute("class") for b in browser.find_elements("css selector", ".banner")}
    assert kinds == {"banner banner-mini", "banner banner-unreadable"}
    open_page(browser, pope_site / "runs" / "2.html")  # cmm: --limit
    assert "SUBSET (--limit 5)" in browser.find_element("css selector", ".banner-subset").text
    browser.find_element("id", "flagged-filter").click()
    shown = [row.get_attribute("data-verdict") for row in browser.find_elements("css selector", "tr.sample")
             if row.is_displayed()]
    assert sorted(shown) == ["error", "unreadable", "wrong", "wrong"]
    open_page(browser, pope_site / "index.html")
    matrix = browser.find_element("css selector", "table.matrix")
    rows = lambda: [tr.get_attribute("data-model") for tr in matrix.find_elements("css selector", "tbody tr")]  # noqa
    head = matrix.find_element("css selector", 'th[data-task="pope"] button')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", head)
    head.click()  # pope accuracy, ascending: b (0.5) before a (0.8125); cmm has none, so last
    assert rows() == ["model-b", "org/model-a", "org/model"]
    models = browser.find_element("id", "model-filter")
    models.send_keys("model-a")
    shown = [tr.get_attribute("data-model") for tr in browser.find_elements("css selector", "table.filterable tbody tr")
             if tr.is_displayed()]
    assert shown == ["org/model-a"]
    models.clear()
    models.send_keys(" ")
    if width == 400:  # the nav folds behind the menu button
        nav = browser.find_element("id", "site-nav")
        assert not nav.is_displayed()
        browser.find_element("css selector", ".menu-toggle").click()
        assert nav.is_displayed()


# Issue 41: a site people want to open. One browser session serves all of these; each saves its screenshots.

@pytest.fixture(scope="module")
def served_site(tmp_path_factory, mini_datasets):
    """bars/viewer-3: three runs served as `model=x`, ranked as tiny_model_1..3, a fourth unranked POPE run served as
    `model=x` too, and a CMM run whose results.json was edited after scoring (verify fails)."""
    from hallubench.errors import VerdictMismatchError

    root = tmp_path_factory.mktemp("served-view")
    ranking, runs = served_ranking(root, mini_datasets)
    forged = write_cmm_run(root / "runs" / "cmm")
    results = json.loads((forged / "results.json").read_text())
    results["tasks"]["cmm"]["verdicts"]["p2"] = {"verdict": "correct", "reading": "yes"}
    rewrite_results(forged, results)
    with pytest.raises(VerdictMismatchError, match="cmm: results.json differs"):
        build_site(ranking, [*runs, forged], root / "site")  # written all the same, the folder flagged
    return ranking, root / "site"


def _rect(browser, element) -> dict:
    return browser.execute_script("return arguments[0].getBoundingClientRect().toJSON()", element)


def test_bars_viewer_3_the_ranking_opens_the_page_under_the_boards_names(browser, served_site, shots):
    ranking, site = served_site
    check_page(browser, site / "index.html", 1400, shots)
    browser.set_window_size(1400, 900)
    open_page(browser, site / "index.html")
    browser.save_screenshot(str(shots / "viewer-3-first-screen-1400.png"))
    board = browser.find_element("css selector", "#board-0 table.leaderboard")
    ranked = [tr.get_attribute("data-model") for tr in board.find_elements("css selector", "tbody tr")]
    assert sorted(ranked) == ["tiny_model_1", "tiny_model_2", "tiny_model_3"]
    height = browser.execute_script("return window.innerHeight")
    assert _rect(browser, board)["bottom"] <= height  # the whole ranked board, with intervals and sign tests, first
    assert all(tr.find_element("css selector", "td.interval .range").is_displayed() for tr in board.find_elements(
        "css selector", "tbody tr"))
    grid = browser.find_element("css selector", "table.matrix")
    assert _rect(browser, grid)["top"] > _rect(browser, board)["bottom"]  # the grid comes next
    rows = {tr.get_attribute("data-model"): tr for tr in grid.find_elements("css selector", "tbody tr")}
    assert set(rows) == {*ranked, "x", "org/model"}  # as the board names them; the unranked `model=x` run apart
    for k, name in enumerate(["tiny_model_1", "tiny_model_2", "tiny_model_3"], start=1):
        links = [a.text for a in rows[name].find_elements("css selector", ".runs a")]
        assert links == [f"run run{k}"]  # each ranked model its own run, never merged under the served name
    assert [a.text for a in rows["x"].find_elements("css selector", ".runs a")] == ["run pope"]
    scores = {row["model"]: float(row["crosscheck"]) for row in csv.DictReader(open(ranking / "leaderboard.csv"))}
    for name, score in scores.items():
        assert rows[name].find_elements("css selector", "td.cell")[0].get_attribute("data-sort") == repr(score)
    version = browser.find_element("css selector", ".made .version").text
    assert version == importlib.metadata.version("hallubench")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", browser.find_element("css selector", ".made time").text)
    downloads = browser.find_elements("css selector", "#board-0 .downloads a")
    assert [a.text for a in downloads] == ["CSV", "JSON"]
    path = Path(urllib.parse.unquote(urllib.parse.urlsplit(downloads[0].get_attribute("href")).path))
    assert {row["model"]: float(row["crosscheck"]) for row in csv.DictReader(open(path))} == scores
    grid_json = json.loads((site / "data" / "grid.json").read_text())
    assert {row["model"] for row in grid_json["rows"]} == set(rows) and grid_json["hallubench"] == version
    check_page(browser, site / "index.html", 400, shots)
    browser.save_screenshot(str(shots / "viewer-3-first-screen-400.png"))


def test_the_grid_fits_its_box_groups_scores_and_its_model_column_covers_nothing(browser, served_site, shots):
    _, site = served_site
    browser.set_window_size(1400, 900)
    open_page(browser, site / "index.html", "models-by-benchmarks")
    header = _rect(browser, browser.find_element("css selector", "header.top"))
    heading = browser.find_element("css selector", "#models-by-benchmarks h2")
    assert _rect(browser, heading)["top"] >= header["bottom"]  # the anchor lands below the sticky header
    grid = browser.find_element("css selector", "table.matrix")
    box = browser.find_element("css selector", ".grid-box")
    assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", box)  # fits 1,400
    heads = lambda: [th.text for th in grid.find_elements("css selector", ".metric-row th") if th.is_displayed()]  # noqa
    assert heads() == ["avhallubench_visual ↓", "pa ↑", "accuracy ↑"]  # one headline per group
    more = grid.find_element("css selector", '.group-head[data-group="2"] button.more')
    more.send_keys(pytest.importorskip("selenium.webdriver.common.keys").Keys.ENTER)  # the keyboard opens it
    assert heads() == ["avhallubench_visual ↓", "pa ↑", "accuracy ↑", "precision ↑", "recall ↑", "f1 ↑"]
    assert grid.find_element("css selector", '.group-head[data-group="2"]').get_attribute("colspan") == "4"
    browser.save_screenshot(str(shots / "grid-open-1400.png"))
    for tr in grid.find_elements("css selector", "tbody tr"):
        first, second = tr.find_elements("css selector", "td")[:2]
        assert _rect(browser, first)["right"] <= _rect(browser, second)["left"] + 0.5  # covers nothing beside it
    browser.set_window_size(400, 900)
    open_page(browser, site / "index.html", "models-by-benchmarks")
    assert browser.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", box)  # its own box
    model = grid.find_element("css selector", "tbody td.model")
    browser.execute_script("arguments[0].scrollLeft = 400", box)
    assert abs(_rect(browser, model)["left"] - _rect(browser, box)["left"]) < 1  # the model column stays
    browser.save_screenshot(str(shots / "grid-scrolled-400.png"))
    browser.set_window_size(1400, 900)


def test_forged_verdicts_nothing_scored_and_control_bytes_on_the_run_page(browser, served_site, tmp_path, shots):
    _, site = served_site
    index = site / "index.html"
    open_page(browser, index)
    cmm = browser.find_element("css selector", 'table.matrix tr[data-model="org/model"]')
    assert "≠ verdicts" in cmm.text  # its cell carries the mark
    cmm.find_element("css selector", ".runs a").click()
    banner = browser.find_element("css selector", ".banner-verify")
    assert banner.is_displayed() and "VERDICTS DIFFER" in banner.text and "p2" in banner.text
    forged = browser.find_element("css selector", "tr.sample:nth-child(2) td.verdict").text
    assert forged.splitlines() == ["results.json claims:", "✔ correct", "read as yes"]  # a claim, flagged
    p3 = browser.find_element("css selector", "tr.sample:nth-child(3) td[data-label='raw output']")
    assert p3.text == "I cannot tell\\x07\\x1b[2J"  # seen, not sent raw
    assert "\x07" not in (site / "runs" / "4.html").read_text()
    browser.save_screenshot(str(shots / "run-forged-1400.png"))
    empty = write_pope_run(tmp_path / "empty", "org/empty", 0.0, unreadable=16)
    build_site(None, [empty], tmp_path / "site")
    open_page(browser, tmp_path / "site" / "runs" / "0.html")
    metrics = browser.find_element("css selector", 'tr.group[data-group="all"] td.metric-list').text
    assert metrics == "– (0 of 16 scored: 16 unreadable)" and "0.0000" not in metrics
    heads = [th.text for th in browser.find_elements("css selector", "table.results th")]
    assert heads[:5] == ["group", "n", "scored", "unreadable", "errors"]
    browser.save_screenshot(str(shots / "run-nothing-scored-1400.png"))


def test_tabs_keyboard_and_the_item_page_says_its_order_is_the_boards(browser, demo_site, shots):
    _, site = demo_site
    browser.set_window_size(1400, 900)
    open_page(browser, site / "index.html", "board-2")  # a link to a board opens its tab
    tab = browser.find_element("id", "tab-2")
    assert tab.get_attribute("aria-selected") == "true" and browser.find_element("id", "board-2").is_displayed()
    assert _rect(browser, browser.find_element("css selector", "#board-2 h2"))["top"] >= _rect(
        browser, browser.find_element("css selector", "header.top"))["bottom"]  # it lands below the sticky header
    tab.send_keys(pytest.importorskip("selenium.webdriver.common.keys").Keys.ARROW_RIGHT)
    assert browser.find_element("id", "board-3").is_displayed() and not browser.find_element("id", "board-2").is_displayed()
    assert browser.switch_to.active_element.get_attribute("id") == "tab-3"
    open_page(browser, site / "items" / "0" / "0.html")
    hint = browser.find_element("css selector", ".responses .hint").text
    assert "order of the" in hint and "board's ranking" in hint
    ranks = [int(r.text.lstrip("#")) for r in browser.find_elements("css selector", ".response .rank")]
    assert ranks == sorted(ranks)
    browser.save_screenshot(str(shots / "item-order-1400.png"))
