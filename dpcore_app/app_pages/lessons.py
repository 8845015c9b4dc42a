"""Lessons: guided experiments a lecturer runs in class and a student runs alone."""

import streamlit as st

from dpcore_app.ui.common import address, glossary, handout
from dpcore_app.ui.common.link import check_link
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.lessons.catalog import LESSONS, Lesson

st.title("Lessons: six experiments with privacy")
check_link([], page="lessons")
st.markdown(
    "Each lesson asks one question, opens the page that answers it with every control set "
    "(the link is the whole experiment: share it with a class), says what to look at, and "
    "answers from the live numbers. Try to predict the answer before you show it."
)
base = address.app_base()  # now: a download's callback has no address to read
notice = address.loopback_notice(base)
if notice:  # before anything is printed: links to this computer open nothing for a class
    st.info(notice, icon=":material/wifi_off:")
st.download_button(
    "Printable handout of the lessons (HTML, works offline)",
    lambda: handout.lessons_page(LESSONS, base),
    "dpcore_lessons.html",
    "text/html",
    on_click="ignore",
    key="lessons_handout",
    icon=":material/print:",
)


@st.fragment
@guarded("This lesson")
def answer(number: int, lesson: Lesson) -> None:
    """The lesson's answer from live numbers, behind a toggle (computed only when shown)."""
    if st.toggle(f"Show the answer to lesson {number}"):  # no key: a key would be a URL parameter
        with st.spinner("Reading the live numbers…"):
            st.markdown(lesson.answer())


for number, lesson in enumerate(LESSONS, start=1):
    with st.container(border=True):
        st.subheader(f"{number}. {lesson.title}", anchor=lesson.key)
        st.markdown(f"**Question.** {lesson.question}")
        st.page_link(
            lesson.page,
            label="Open the experiment",
            icon=":material/science:",
            query_params=lesson.params,
        )
        there = lesson.look_link(base)
        st.markdown(f"**Look at.** {lesson.look}" + (f" [Go there]({there})" if there else ""))
        answer(number, lesson)
        if lesson.caveat:
            st.caption(f"Caveat: {lesson.caveat}")
        if lesson.terms:
            glossary.panel(
                lesson.terms, label="The words of this lesson", key=f"terms_{lesson.key}"
            )
