"""Step 1, Data: a demo file, or the analyst's trial CSV with its public dictionary (either may
come first). Hands on a Source (the dictionary attached), or None until there is a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpcore_app.ui.common import demos
from dpcore_app.ui.upload import dictionary_panels, form
from dpcore_app.ui.upload.controls import FILE

if TYPE_CHECKING:
    from dpcore_app.ui.common.demos import Source


def data() -> Source | None:
    """The trial to work on: the demo chosen, or the uploaded file with its dictionary."""
    kind = FILE.widget()
    if kind != "upload":
        return demos.demo_source(kind)
    source = form.uploaded_source()
    dictionary = dictionary_panels.dictionary_uploader()
    if source is None or dictionary is None:
        return source
    return form.with_dictionary(source, dictionary)
