"""Cached calls into dpcore, one module per page, and the limits every page's work obeys."""
