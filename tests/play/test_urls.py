"""Checkpointer URLs: parsing and redaction."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval._urls import CheckpointerURL, parse_checkpointer_url, redact_url, scrub
from lg_eval.errors import CheckpointerURLError, InvalidOptionError


def test_sqlite_urls_follow_sqlalchemy_slashes() -> None:
    assert parse_checkpointer_url("sqlite:///runs/threads.sqlite").path == Path(
        "runs/threads.sqlite"
    )
    assert parse_checkpointer_url("sqlite:////var/lib/t.sqlite").path == Path("/var/lib/t.sqlite")


def test_the_default_is_an_embedded_sqlite_file() -> None:
    assert parse_checkpointer_url(None) == CheckpointerURL(
        "sqlite", "sqlite:///.lg_eval/checkpoints.sqlite", Path(".lg_eval/checkpoints.sqlite")
    )


def test_postgres_and_memory_urls() -> None:
    url = "postgresql://u:p@db.example:5433/evals"
    assert parse_checkpointer_url(url) == CheckpointerURL("postgres", url, dsn=url)
    assert parse_checkpointer_url("postgres://u@h/db").kind == "postgres"
    assert parse_checkpointer_url("memory://").kind == "memory"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "must be a non-empty string"),
        ("threads.sqlite", "is not a checkpointer URL (no '://')"),
        ("sqlite://threads.sqlite", "three slashes before a relative path"),
        ("sqlite:///", "names no file"),
        ("sqlite:///:memory:", "use 'memory://'"),
        ("memory://somewhere", "memory:// takes no path"),
        ("postgresql://", "names no server"),
        ("redis://u:secret@h/0", "unknown checkpointer scheme 'redis'"),
    ],
)
def test_bad_urls_are_typed_errors(url: str, message: str) -> None:
    with pytest.raises(CheckpointerURLError, match=re.escape(message)) as info:
        parse_checkpointer_url(url)
    assert isinstance(info.value, InvalidOptionError)
    assert "secret" not in str(info.value)


def test_redact_url_hides_the_password_only() -> None:
    assert redact_url("postgresql://user:pass@host/db") == "postgresql://user:***@host/db"
    assert redact_url("postgresql://user@host:5432/db") == "postgresql://user@host:5432/db"
    assert redact_url("postgresql://host/db?password=s3cret&sslmode=disable") == (
        "postgresql://host/db?password=***&sslmode=disable"
    )
    assert redact_url("sqlite:///a.sqlite") == "sqlite:///a.sqlite"
    assert redact_url("postgresql://u:p/a@ss@h/db") == "postgresql://u:***@h/db"


def test_scrub_hides_every_spelling_of_the_password() -> None:
    url = "postgresql://u:p%40ss@h/db"
    text = f'invalid dsn "{url}" (password "p@ss", p%40ss)'
    assert scrub(text, url) == 'invalid dsn "postgresql://u:***@h/db" (password "***", ***)'


NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)
PASSWORDS = st.text(min_size=1, max_size=20).map(lambda s: "PW" + s)


@settings(max_examples=200, deadline=500)
@given(user=NAMES, password=PASSWORDS, host=NAMES, db=NAMES, encode=st.booleans())
def test_a_password_never_appears_in_redact_url(
    user: str, password: str, host: str, db: str, encode: bool
) -> None:
    written = quote(password, safe="") if encode else password
    for url in (
        f"postgresql://{user}:{written}@{host}:5432/{db}",
        f"postgres://{user}:{written}@{host}/{db}?sslmode=disable",
        f"postgresql://{host}/{db}?password={quote(password, safe='')}",
    ):
        redacted = redact_url(url)
        assert written not in redacted
        assert quote(password, safe="") not in redacted
        assert host in redacted
