"""Real-browser end-to-end tests (a package, so test_pages.py does not clash with tests/app/)."""
