"""The Your-data page: reading the file, the release, the evaluation, the preview, the analyst's views, and their sentences, charts and panels."""
