"""Reusable UI parts: controls, cached computations, charts and plain-language text."""
