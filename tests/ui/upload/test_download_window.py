"""The window the Limitations page and the Your-data page state for a clicked download.

Streamlit's MediaFileManager builds a deferred download (the page hands every download
button a callable) when it is clicked, ties the built file to no session, and deletes it at
the end of the second script run after that, in any session; a session's end (clear_session_refs,
what a shutdown does first) does not remove it. If Streamlit changes this, this test fails
and the stated window (dpcore_app/ui/upload/explain.py DOWNLOAD_WINDOW, dpcore_app/app_pages/limitations.py) must be
revisited.
"""

from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from dpcore_app.ui.upload.explain import DOWNLOAD_WINDOW


def test_a_clicked_download_lives_until_the_second_run_after_it():
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    placeholder = manager.add_deferred(lambda: b"patient rows", "text/csv", "coords", "rows.csv")
    assert not manager._file_metadata  # nothing is served before the click
    url = manager.execute_deferred(placeholder)  # the click
    file_id = url.rsplit("/", 1)[1].split(".")[0]
    manager.clear_session_refs()  # the session ends (a tab closed and dropped)
    assert manager.read_file(file_id) is not None
    manager.remove_orphaned_files()  # the end of the next run, in any session
    assert manager.read_file(file_id) is not None
    manager.remove_orphaned_files()  # the end of the one after
    assert manager.read_file(file_id) is None
    assert "two more page runs in any session" in DOWNLOAD_WINDOW
