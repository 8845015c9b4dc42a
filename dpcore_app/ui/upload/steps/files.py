"""Step 5, Files: what was released (the rule, its spend, its private evaluation) and the files
that carry it: the rule file (the pipeline's, as every surface writes it), the per-row
recommendations, the report and the script that redoes the release."""

from __future__ import annotations

from dpcore_app.ui.upload import karm, results


def files(last, source, flow):
    if last.over_all_arms:
        karm.arms_result(last, files=lambda: flow.at(5))
        flow.has(5, "the rule file and the script")
        return
    results.result_panel(last, source, files=lambda: flow.at(5))
    flow.has(5, "the rule, the per-row file, the report and the script")
