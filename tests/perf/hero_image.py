"""Remake the README's hero image, docs/assets/leaderboard.png: the first screen (1,400 x 900) of the site that
`hallubench demo` writes, as headless Chromium shows it (Debian's `chromium` and `chromium-driver`, as the browser
tests use). Not a benchmark; it lives with the scripts run by hand.

    python tests/perf/hero_image.py                      # runs the demo into runs/demo first when it has no ranking
    python tests/perf/hero_image.py --demo /tmp/demo --out docs/assets/leaderboard.png

The demo takes minutes on a CPU; its folder is reused when it already holds a ranking. The site is rebuilt with this
checkout's viewer (`hallubench.cli.demo.write_site`, the demo's own last step), so the image shows today's layout.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def screenshot(page: Path, out: Path, width: int = 1400, height: int = 900) -> None:
    """Save the first screen of `page` (opened from disk) at `width` x `height` px as `out` (PNG)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if not (chromium and driver):
        sys.exit("no headless browser: install Debian's chromium and chromium-driver (./install.sh does)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                 "--allow-file-access-from-files", f"--window-size={width},{height}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        browser.set_window_size(width, height)
        inner = browser.execute_script("return [window.innerWidth, window.innerHeight]")
        browser.set_window_size(2 * width - inner[0], 2 * height - inner[1])  # the page itself width x height
        browser.get(page.resolve().as_uri())
        out.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(out))
    finally:
        browser.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", type=Path, default=ROOT / "runs" / "demo", help="the demo's folder (default runs/demo)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "assets" / "leaderboard.png")
    args = parser.parse_args()
    if not (args.demo / "crosscheck" / "ranking" / "crosscheck.json").is_file():
        subprocess.run([sys.executable, "-m", "hallubench", "demo", "--output-dir", str(args.demo)], check=True)
    from hallubench.cli.demo import write_site

    write_site(args.demo)
    screenshot(args.demo / "site" / "index.html", args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
