# The one way this project's scripts start headless Chromium (Debian's chromium + chromium-driver,
# through python3-selenium): chromium-play.py, chromium-record.py and chromium-hls.py import it.
import sys


def start(script):
    """A WebDriver of headless Chromium that plays media without a gesture, muted; on any
    start-up failure, says why as `script: …` on standard error and exits 2 (a set-up failure)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--autoplay-policy=no-user-gesture-required", "--mute-audio"]:
            options.add_argument(flag)
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as error:  # noqa: BLE001 - any start-up failure is a set-up failure
        print("%s: cannot start Chromium: %s" % (script, error), file=sys.stderr)
        sys.exit(2)
