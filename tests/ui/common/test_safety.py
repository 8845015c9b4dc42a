"""Errors shown as messages; what reaches the server log."""

import logging

from dpcore_app.ui.common.safety import friendly_errors


def test_a_caught_error_is_logged_with_message_and_traceback(caplog):
    with caplog.at_level(logging.ERROR), friendly_errors("The study"):
        raise RuntimeError("solver exploded at gamma = 3")
    assert "The study failed" in caplog.text and "solver exploded at gamma = 3" in caplog.text
    assert "Traceback" in caplog.text


def test_on_uploaded_data_the_log_keeps_the_type_and_frames_but_not_the_message(caplog):
    with caplog.at_level(logging.ERROR), friendly_errors("Upload", sensitive=True):
        raise ValueError("row 17: outcome 4.2 for patient Smith")
    assert "ValueError" in caplog.text and "message withheld" in caplog.text
    assert 'raise ValueError("row 17' in caplog.text  # the frame's source line, written by us
    record = caplog.records[-1]
    assert "Smith" not in record.getMessage().split("\n")[0]
    assert record.exc_info is None  # no exception object (and its message) attached
