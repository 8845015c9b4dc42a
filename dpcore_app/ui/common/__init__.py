"""The pieces every page shares: controls bound to the link, grids, error messages, the figure cache, the ledger panel, the glossary, handout links and chart styling."""
