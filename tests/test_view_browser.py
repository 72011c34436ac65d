"""The viewer in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`, installed by install.sh)
driven by selenium opens sites from disk (file://, no server): the site of a demo-style ranking (three tiny random
Qwen2.5-Omni thinkers through `hallubench crosscheck` on the mini AVHalluBench, embedding judge) and that of a
ranking of hand-written runs where one sentence is known to be unsupported. Every page must load without a
JavaScript error in the console. Screenshots go to $HALLUBENCH_SCREENSHOTS (default: the test's temporary folder)."""
import csv
import os
import shutil
import time
from pathlib import Path

import pytest
import yaml

from hallubench.cli.demo import write_site
from hallubench.cli.main import main
from view_support import HOSTILE_NAME, SUPPORTED, TASK, UNSUPPORTED, hand_ranking, write_cmm_run

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


def open_page(browser, path: Path):
    """Load `path` from disk; fail on any console error (JavaScript errors, missing files)."""
    browser.get(path.resolve().as_uri())
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == [], errors


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
    assert main(["crosscheck", "--config", str(config), "--data-dir", str(mini_datasets), "--output-dir", str(out),
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
    for board in boards:
        expected = [row for row in rows if row["board"] == board]
        shown = browser.find_elements("css selector", f'table[data-board="{board}"] tbody tr')
        assert [tr.get_attribute("data-model") for tr in shown] == [row["model"] for row in expected]
        for tr, row in zip(shown, expected):
            cell = tr.find_element("css selector", "td.interval")
            assert float(cell.get_attribute("data-low")) == pytest.approx(float(row["ci_low"]), abs=1e-12)
            assert float(cell.get_attribute("data-high")) == pytest.approx(float(row["ci_high"]), abs=1e-12)
            assert cell.find_element("css selector", ".range").size["width"] > 0  # the error bar is drawn
    assert "MINI DATA" in browser.find_element("css selector", ".mini").text
    browser.save_screenshot(str(shots / "leaderboard.png"))
    table = browser.find_element("css selector", f'table[data-board="{boards[0]}"]')
    table.find_elements("css selector", "th button")[1].click()  # sort by model name
    names = [tr.get_attribute("data-model") for tr in table.find_elements("css selector", "tbody tr")]
    assert names == sorted(names)
    table.find_elements("css selector", "th button")[2].click()  # by CrossCheck score: the ranking again
    assert [tr.get_attribute("data-model") for tr in table.find_elements("css selector", "tbody tr")] == \
        [row["model"] for row in rows if row["board"] == boards[0]]


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
    assert main(["view", str(ranking), str(cmm), "--out", str(site)]) == 0
    open_page(browser, site / "items" / "0" / "0.html")  # a hostile sentence would raise an alert here
    dog = browser.find_element("css selector", f'.response[data-model="{HOSTILE_NAME}"] .sentence')
    assert dog.text == UNSUPPORTED and "cc-3" in dog.get_attribute("class").split()
    red = browser.find_element("css selector", '.response[data-model="a"] .sentence')
    assert red.text == SUPPORTED and "cc-0" in red.get_attribute("class").split()
    swatch = browser.find_element("css selector", ".legend .cc-3")
    assert dog.value_of_css_property("background-color") == swatch.value_of_css_property("background-color")
    assert dog.value_of_css_property("background-color") != red.value_of_css_property("background-color")
    browser.save_screenshot(str(shots / "document-unsupported.png"))
    open_page(browser, site / "runs" / "0.html")
    rows = browser.find_elements("css selector", "tr.sample")
    browser.find_element("id", "unreadable-filter").click()
    shown = [row.get_attribute("data-status") for row in rows if row.is_displayed()]
    assert len(rows) == 4 and sorted(shown) == ["error", "unreadable"]
    browser.save_screenshot(str(shots / "run.png"))
    assert TASK in (site / "index.html").read_text()
