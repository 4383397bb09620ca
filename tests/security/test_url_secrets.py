"""No secret in any output, path or message, in any URL form (#40 item 4).

A store URL missing a slash (``postgresql:/u:PW@host/db``) used to become a file path with
the password in a folder name; ``sslpassword=`` was shown as written; a keyword DSN with
spaces around ``=`` or an escaped quote in its password leaked part of it past a regex.
Every form is tried against the real CLI and real servers (a closed port, the test's
Postgres), and every output and every file written is searched for the secret.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval._urls import redact_url, scrub, url_secrets
from lg_eval.cli._common import INPUT_ERROR
from tests.security.conftest import WEATHER, invoke, squash

SECRET = "Hunter2Secret"


def _everything(folder: Path) -> str:
    """Every name and every byte of every file under ``folder``."""
    found = []
    for root, dirs, files in os.walk(folder):
        found += dirs + files
        for name in files:
            found.append((Path(root) / name).read_bytes().decode("utf-8", "replace"))
    return "\n".join(found)


FORMS = {
    "userinfo, one slash": f"postgresql:/u:{SECRET}@127.0.0.1:1/db",
    "userinfo, no colon": f"postgresql//u:{SECRET}@127.0.0.1:1/db",
    "sslpassword parameter": f"postgresql://u@127.0.0.1:1/db?sslpassword={SECRET}&connect_timeout=2",
    "password parameter": f"postgresql://u@127.0.0.1:1/db?connect_timeout=2&password={SECRET}",
    "keyword DSN, spaces around =": f"host=127.0.0.1 port=1 password = {SECRET} dbname=db",
    "keyword DSN, quoted with an escaped quote": (
        f"host=127.0.0.1 password='{SECRET[:4]}\\' {SECRET[4:]}' dbname=db"
    ),
    "keyword DSN, sslpassword": f"host=127.0.0.1 sslpassword={SECRET} dbname=db",
    "keyword DSN that does not parse": f"host=127.0.0.1 password='{SECRET}",
}
PARTS = (SECRET, SECRET[:4], SECRET[4:])


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("option", ["--store", "--checkpointer"])
def test_no_part_of_a_secret_is_shown_or_written_in_any_url_form(
    here: dict[str, str], tmp_path: Path, form: str, option: str
) -> None:
    url = FORMS[form]
    other = "--checkpointer" if option == "--store" else "--store"
    result = invoke(
        "run", str(WEATHER), "--run-id", "s1", option, url, other, here[other[2:]], "--quiet"
    )
    assert result.exit_code == INPUT_ERROR, result.output
    assert "Traceback" not in result.output
    written = _everything(tmp_path)
    for part in PARTS:
        assert part not in result.output, (form, result.output)
        assert part not in written, form
    assert not any(name.startswith(("postgres", "host=")) for name in os.listdir(tmp_path))


@pytest.mark.parametrize("form", list(FORMS))
def test_runs_and_view_show_no_part_of_a_secret(form: str, tmp_path: Path) -> None:
    for args in (("runs", "--store", FORMS[form]), ("view", "--store", FORMS[form])):
        result = invoke(*args)
        assert result.exit_code == INPUT_ERROR, (args, result.output)
        assert all(part not in result.output for part in PARTS), (args, result.output)


def test_keyword_dsns_are_shown_rebuilt_from_their_parsed_keywords() -> None:
    assert redact_url(FORMS["keyword DSN, spaces around ="]) == (
        "host=127.0.0.1 port=1 password=*** dbname=db"
    )
    assert redact_url(FORMS["keyword DSN, quoted with an escaped quote"]) == (
        "host=127.0.0.1 password=*** dbname=db"
    )
    assert redact_url(FORMS["keyword DSN that does not parse"]) == (
        "<a libpq keyword DSN that does not parse; not shown>"
    )
    assert redact_url("postgresql://h/db?sslpassword=x&sslmode=require&api_key=k") == (
        "postgresql://h/db?sslpassword=***&sslmode=require&api_key=***"
    )


@settings(max_examples=150, deadline=None)
@given(
    password=st.text(
        alphabet=st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="\x00"),
        min_size=1,
        max_size=16,
    ).map(lambda s: "PW" + s),
    spaces=st.sampled_from(["", " ", "  "]),
    key=st.sampled_from(["password", "sslpassword"]),
)
def test_no_keyword_dsn_shows_any_part_of_its_password(
    password: str, spaces: str, key: str
) -> None:
    escaped = password.replace("\\", "\\\\").replace("'", "\\'")
    dsn = f"host=db.example{spaces} {key}{spaces}={spaces}'{escaped}' dbname=x"
    shown = redact_url(dsn)
    assert password not in shown and escaped not in shown
    assert shown in (
        f"host=db.example {key}=*** dbname=x",
        "<a libpq keyword DSN that does not parse; not shown>",
    )
    assert password in url_secrets(dsn) or shown.startswith("<")
    message = f"connection failed: {dsn} (password {password})"
    assert password not in scrub(message, dsn)


@settings(max_examples=150, deadline=None)
@given(
    password=st.text(min_size=1, max_size=20).map(lambda s: "PW" + s),
    slashes=st.sampled_from([":/", ":", "//", "://", ":///"]),
    param=st.sampled_from([None, "password", "sslpassword", "token"]),
)
def test_no_url_spelling_shows_its_password(password: str, slashes: str, param: str | None) -> None:
    written = quote(password, safe="")
    url = (
        f"postgresql{slashes}u:{written}@h:5432/db"
        if param is None
        else f"postgresql{slashes}h/db?sslmode=disable&{param}={written}"
    )
    shown = redact_url(url)
    assert written not in shown
    assert written not in scrub(f"error for {url}: {password} / {written}", url)


@pytest.mark.postgres
def test_view_prints_the_store_it_opened_redacted(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lg-eval view`` on a real Postgres store whose URL carries secret parameters: the
    line it prints names the store with every secret hidden."""
    from lg_eval.viewer import ViewerServer

    served = threading.Event()

    def serve_once(self: ViewerServer) -> None:  # bound, then stopped as by Ctrl-C
        served.set()
        raise KeyboardInterrupt

    monkeypatch.setattr(ViewerServer, "serve_forever", serve_once)
    base, _, query = pg_dsn.partition("?")
    url = f"{base}?{query}&sslpassword={SECRET}&application_name=viewer"
    result = invoke("view", "--store", url, "--port", "0")
    assert result.exit_code == 0, result.output
    assert served.is_set() and SECRET not in result.output
    shown = squash(result.stderr)
    assert shown.startswith(squash(f"lg-eval view: {redact_url(url)} at http://127.0.0.1:"))
    assert squash("sslpassword=***&application_name=viewer") in shown
