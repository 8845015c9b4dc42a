"""The overview page's chart."""
