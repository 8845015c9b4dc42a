"""Step 5, Files: what was released (the rule, its spend, its private evaluation) and the files
that carry it: the rule file (the pipeline's, as every surface writes it), the per-row
recommendations, the report and the script that redoes the release."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpcore_app.ui.upload import karm, results

if TYPE_CHECKING:
    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.flow import Flow
    from dpcore_app.ui.upload.release import Released


def files(last: Released, source: Source, flow: Flow) -> None:
    """The release on screen and its files, in step 5's box."""
    if last.over_all_arms:
        karm.arms_result(last, files=lambda: flow.at(5))
        flow.has(5, "the rule file and the script")
        return
    results.result_panel(last, source, files=lambda: flow.at(5))
    flow.has(5, "the rule, the per-row file, the report and the script")
