"""A K-arm dictionary's arm labels reach a widget label as text: markdown in them (an image
link) is escaped, never rendered or fetched."""

from streamlit.testing.v1 import AppTest


def _page():
    from types import SimpleNamespace

    from dpcore_app.ui.upload import karm

    arms = ("placebo", "![pixel](http://127.0.0.1:9/p.png)", "**drug**")
    # The dictionary's labels, as read; put back after this run: the module is the test
    # process's, shared with every later AppTest of this worker.
    original, karm.compute.arms_of = karm.compute.arms_of, lambda dictionary: arms
    try:
        karm.arms_choice(SimpleNamespace(dictionary=None, digest="0" * 64))
    except TypeError:  # past the radio the page reads a real dictionary; none here
        pass
    finally:
        karm.compute.arms_of = original


def test_the_arm_labels_of_a_dictionary_are_shown_as_text():
    from dpcore_app.ui.common.safety import plain

    at = AppTest.from_function(_page, default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    label = at.radio[0].label
    shown = plain("placebo, ![pixel](http://127.0.0.1:9/p.png), **drug**")
    assert label == f"The dictionary lists 3 arms: {shown}"
    assert "![" not in label and "**drug**" not in label and "http://" not in label
