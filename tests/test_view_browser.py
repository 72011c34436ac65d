"""The viewer in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`, installed by install.sh)
driven by selenium opens sites from disk (file://, no server): the site of a demo-style ranking (three tiny random
Qwen2.5-Omni thinkers through `hallubench crosscheck` on the mini AVHalluBench, embedding judge) and that of a
ranking of hand-written runs where one sentence is known to be unsupported. Every page must load without a
JavaScript error in the console. Screenshots go to $HALLUBENCH_SCREENSHOTS (default: the test's temporary folder)."""
import csv
import os
import shutil
import time
import urllib.parse
from pathlib import Path

import pytest
import yaml

from hallubench.cli.demo import write_site
from hallubench.cli.main import main
from view_support import HOSTILE_NAME, SUPPORTED, TASK, UNSUPPORTED, hand_ranking, write_cmm_run, write_pope_run

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
    assert "MINI DATA" in browser.find_element("css selector", ".banner-mini").text
    browser.save_screenshot(str(shots / "leaderboard.png"))
    table = browser.find_element("css selector", f'table[data-board="{boards[0]}"]')
    table.find_elements("css selector", "th button")[1].click()  # sort by model name
    names = [tr.get_attribute("data-model") for tr in table.find_elements("css selector", "tbody tr")]
    assert names == sorted(names)
    table.find_elements("css selector", "th button")[2].click()  # by CrossCheck score: the ranking again
    assert [tr.get_attribute("data-model") for tr in table.find_elements("css selector", "tbody tr")] == \
        [row["model"] for row in rows if row["board"] == boards[0]]


@pytest.mark.parametrize("width", WIDTHS)
def test_demo_site_fits_a_phone_and_a_desktop(browser, demo_site, shots, width):
    _, site = demo_site
    for page in [site / "index.html", site / "items" / "0" / "0.html", *sorted((site / "runs").glob("*.html"))]:
        check_page(browser, page, width, shots)
        assert "MINI DATA" in browser.find_element("css selector", ".banner-mini").text
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
    open_page(browser, site / "runs" / "0.html")
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
    runs = [write_pope_run(root / "a", "org/model-a", 0.8125, 0.05),
            write_pope_run(root / "b", "/ckpt/local/model-b", 0.5, 0.1, mini=True, unreadable=True),
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
    assert rows() == ["local/model-b", "org/model-a", "org/model"]
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
