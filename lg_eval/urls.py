"""Checkpointer URLs: parse them, and show them without their password.

lg_eval names a checkpointer by URL so that a dataset run, a CLI flag and a
config file can all say where threads live in one string:

* ``sqlite:///relative/file.sqlite`` or ``sqlite:////absolute/file.sqlite``
  (SQLAlchemy's convention: the path is what follows the third slash),
* ``postgresql://user:pass@host:port/db`` (``postgres://`` too), handed to
  psycopg as it is,
* ``memory://`` (an in-process ``InMemorySaver``, gone when the process ends),
* ``None``: the default, an embedded SQLite file ``.lg_eval/checkpoints.sqlite``
  under the current directory.

A URL can carry a password, and error messages and logs end up in CI output and
bug reports, so anything lg_eval prints about a URL goes through
:func:`redact_url` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote

from lg_eval.errors import CheckpointerURLError

CheckpointerKind = Literal["sqlite", "postgres", "memory"]
DEFAULT_SQLITE_PATH = Path(".lg_eval") / "checkpoints.sqlite"
"""Where the default checkpointer keeps threads, relative to the current directory."""

_REDACTED = "***"
_PASSWORD_PARAM = re.compile(r"(?i)(\bpassword=)('[^']*'|[^&\s]*)")
_SCHEMES = "sqlite:///…, postgresql://…, postgres://… or memory://"
_KEYWORD_DSN = re.compile(r"^\s*[A-Za-z_]+\s*=")


@dataclass(frozen=True)
class CheckpointerURL:
    """A parsed checkpointer URL.

    ``path`` is set for SQLite (relative paths stay relative: they are resolved
    against the current directory when the file is opened), ``dsn`` for
    Postgres (the URL itself, which psycopg parses).
    """

    kind: CheckpointerKind
    url: str
    path: Path | None = None
    dsn: str | None = None

    @property
    def redacted(self) -> str:
        """The URL as lg_eval shows it: :func:`redact_url` of :attr:`url`."""
        return redact_url(self.url)


def parse_checkpointer_url(url: str | None) -> CheckpointerURL:
    """Parse ``url`` (``None``: the default SQLite file); a bad one is a CheckpointerURLError."""
    if url is None:
        return CheckpointerURL("sqlite", f"sqlite:///{DEFAULT_SQLITE_PATH}", DEFAULT_SQLITE_PATH)
    if not isinstance(url, str) or not url.strip():
        raise CheckpointerURLError(
            f"A checkpointer URL must be a non-empty string (got {url!r}); use {_SCHEMES}, or "
            "None for the default .lg_eval/checkpoints.sqlite."
        )
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep and is_keyword_dsn(url):
        raise CheckpointerURLError(keyword_dsn_problem(url))
    if not sep:
        raise CheckpointerURLError(
            f"{redact_url(url)!r} is not a checkpointer URL (no '://'); use {_SCHEMES}."
        )
    if scheme == "memory":
        if rest.strip("/"):
            raise CheckpointerURLError(
                f"{redact_url(url)!r}: memory:// takes no path; write just 'memory://'."
            )
        return CheckpointerURL("memory", url)
    if scheme == "sqlite":
        return CheckpointerURL("sqlite", url, _sqlite_path(url, rest))
    if scheme in ("postgresql", "postgres"):
        if not rest.strip("/"):
            raise CheckpointerURLError(
                f"{redact_url(url)!r} names no server; write postgresql://user:pass@host:port/db."
            )
        return CheckpointerURL("postgres", url, dsn=url)
    raise CheckpointerURLError(
        f"{redact_url(url)!r}: unknown checkpointer scheme {scheme!r}; use {_SCHEMES}."
    )


def _sqlite_path(url: str, rest: str) -> Path:
    """The file of ``sqlite://<host>/<path>``: the host must be empty, as in SQLAlchemy."""
    if not rest.startswith("/"):
        raise CheckpointerURLError(
            f"{redact_url(url)!r}: a SQLite URL has three slashes before a relative path "
            "(sqlite:///checkpoints.sqlite) and four before an absolute one "
            "(sqlite:////var/lib/threads.sqlite)."
        )
    path = unquote(rest[1:].partition("?")[0])
    if not path or path.endswith("/"):
        raise CheckpointerURLError(
            f"{redact_url(url)!r} names no file; write e.g. sqlite:///checkpoints.sqlite."
        )
    if path == ":memory:":
        raise CheckpointerURLError(
            f"{redact_url(url)!r}: for an in-memory checkpointer use 'memory://' (a ':memory:' "
            "SQLite database would be private to one connection)."
        )
    return Path(path)


def is_keyword_dsn(text: str) -> bool:
    """Whether ``text`` reads like a libpq keyword DSN (``host=... dbname=...``), not a URL."""
    return "://" not in text and _KEYWORD_DSN.match(text) is not None


def keyword_dsn_problem(text: str) -> str:
    """Why a keyword DSN is refused, and the URL to write instead (``text`` redacted)."""
    return (
        f"{redact_url(text)!r} is a libpq keyword DSN; lg_eval takes Postgres as a URL: write "
        "postgresql://user:password@host:port/dbname (percent-encode special characters in "
        "the password). A SQLite file whose name has '=' in it is written sqlite:///name."
    )


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe to print.

    Covers the password of the userinfo (``postgresql://user:***@host/db``) and a
    ``password=`` query or key-value parameter. It works on any string, even one
    that is not a valid URL: everything between ``://`` and the last ``@`` is
    treated as userinfo, so a password containing ``/``, ``@`` or ``?`` is still
    hidden (at worst more than the password is).
    """
    text = str(url)
    scheme, sep, rest = text.partition("://")
    if sep:
        at = rest.rfind("@")
        if at != -1:
            userinfo, host = rest[:at], rest[at + 1 :]
            user, colon, _password = userinfo.partition(":")
            if colon:
                rest = f"{user}:{_REDACTED}@{host}"
        text = f"{scheme}{sep}{rest}"
    return _PASSWORD_PARAM.sub(lambda m: m.group(1) + _REDACTED, text)


def url_password(url: str) -> str | None:
    """The password ``url`` carries (userinfo or ``password=`` parameter), if any."""
    _, sep, rest = url.partition("://")
    if sep:
        at = rest.rfind("@")
        if at != -1:
            _user, colon, password = rest[:at].partition(":")
            if colon and password:
                return password
    match = _PASSWORD_PARAM.search(url)
    if match and match.group(2):
        return match.group(2).strip("'")
    return None


def scrub(text: str, url: str) -> str:
    """``text`` (say, a driver's error message) with ``url`` and its password hidden.

    Drivers echo the connection string they were given; this replaces the URL by
    its redacted form and then every spelling of the password (as written,
    percent-decoded, percent-encoded) by ``***``.
    """
    out = text.replace(url, redact_url(url))
    password = url_password(url)
    if password:
        for spelling in sorted({password, unquote(password), quote(password, safe="")}, key=len)[
            ::-1
        ]:
            if spelling:
                out = out.replace(spelling, _REDACTED)
    return _PASSWORD_PARAM.sub(lambda m: m.group(1) + _REDACTED, out)


__all__ = [
    "DEFAULT_SQLITE_PATH",
    "CheckpointerKind",
    "CheckpointerURL",
    "is_keyword_dsn",
    "keyword_dsn_problem",
    "parse_checkpointer_url",
    "redact_url",
    "scrub",
    "url_password",
]
