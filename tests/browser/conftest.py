"""The browser tests' fixtures for the files of this folder: ``chromium``, ``browser`` and
``site``, from browsing.py beside this file (which test_browser.py imports by name too)."""

from browsing import browser, chromium, site

__all__ = ["browser", "chromium", "site"]
