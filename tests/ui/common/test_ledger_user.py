"""Who the ledger answers for on a server: the proxy's header, trusted only when the server
authenticates (``dpcore serve --auth`` sets DPCORE_AUTH_HEADER and DPCORE_PROXY_SECRET)."""

from types import SimpleNamespace

import pytest

from dpcore_app.ui.common import ledger


@pytest.fixture
def request_headers(monkeypatch):
    """Set this session's request headers (what ``st.context.headers`` reads)."""
    fake = SimpleNamespace(context=SimpleNamespace(headers={}))
    monkeypatch.setattr(ledger, "st", fake)
    for name in ("DPCORE_AUTH_HEADER", "DPCORE_PROXY_SECRET", "DPCORE_KEEPERS"):
        monkeypatch.delenv(name, raising=False)
    return fake.context.headers


def test_without_authentication_no_header_names_a_user(request_headers, monkeypatch):
    request_headers.update({"X-Dpcore-User": "kim", "X-Dpcore-Proxy": "s"})
    monkeypatch.setenv("DPCORE_KEEPERS", "kim")  # not without authentication either
    assert ledger.ledger_user() is None
    assert ledger.ledger_keepers() == frozenset()


def test_with_authentication_the_proxys_user_is_the_ledgers(request_headers, monkeypatch):
    monkeypatch.setenv("DPCORE_AUTH_HEADER", "X-Dpcore-User")
    monkeypatch.setenv("DPCORE_PROXY_SECRET", "s3cret")
    monkeypatch.setenv("DPCORE_KEEPERS", " kim, ann ,")
    request_headers.update({"X-Dpcore-User": " ann ", "X-Dpcore-Proxy": "s3cret"})
    assert ledger.ledger_user() == "ann"
    assert ledger.ledger_keepers() == {"kim", "ann"}
    # A request to a replica's port past nginx (no secret, or a wrong one) names no one.
    request_headers["X-Dpcore-Proxy"] = "guess"
    with pytest.raises(ledger.NotSignedIn, match="proxy"):
        ledger.ledger_user()
    del request_headers["X-Dpcore-Proxy"]
    with pytest.raises(ledger.NotSignedIn):
        ledger.ledger_user()
    request_headers.update({"X-Dpcore-Proxy": "s3cret", "X-Dpcore-User": ""})
    with pytest.raises(ledger.NotSignedIn, match="no signed-in user"):
        ledger.ledger_user()
