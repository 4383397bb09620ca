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
_SCHEMES = "sqlite:///…, postgresql://…, postgres://… or memory://"
_KEYWORD_DSN = re.compile(r"^\s*[A-Za-z_]+\s*=")
_SCHEME_PREFIX = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*(?::/*|/{2,})")
"""A scheme and what follows it, however misspelled: ``postgresql://``, ``postgresql:/``,
``postgresql//``: where a userinfo (and its password) may start."""
_MISSPELLED = re.compile(r"(?i)\s*(sqlite3?|postgres(?:ql)?|memory|file)\s*(?::(?!//)|//)")
"""A known scheme whose ``://`` is misspelled (``sqlite:/x``, ``sqlite//x``, ``sqlite:x``)."""
_SECRET_NAME = re.compile(r"(?i)pass|pwd|secret|token|key|credential|auth")
"""Parameter and keyword names whose value is secret: password, sslpassword, passfile,
api_key, access_token, client_secret, sslkey, ... (a harmless one is hidden at worst)."""
_PARAMETER = re.compile(
    r"(?P<lead>^|[\s?&;,(\"])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<eq>\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*(?:'|$)|\"(?:[^\"\\]|\\.)*(?:\"|$)|[^&\s;,)\"]*)"
)
"""``name=value`` in a URL's query, a keyword DSN or a message (a quoted value may hold
spaces and escaped quotes)."""


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
    problem = malformed_url_problem(url)
    if problem is not None:
        raise CheckpointerURLError(problem)
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
    if path.lower().startswith("file:"):
        raise CheckpointerURLError(
            f"{redact_url(url)!r}: SQLite would read {path.partition('?')[0]!r} as a file: URI "
            "and open another file than the one named; write the file's path "
            "(sqlite:///relative/file.sqlite or sqlite:////absolute/file.sqlite)."
        )
    if path == ":memory:":
        raise CheckpointerURLError(
            f"{redact_url(url)!r}: for an in-memory checkpointer use 'memory://' (a ':memory:' "
            "SQLite database would be private to one connection)."
        )
    return Path(path)


def malformed_url_problem(text: str) -> str | None:
    """Why ``text`` is a misspelled URL (``sqlite:/x``, ``sqlite//x``, ``postgresql:/u:pw@h``)
    rather than a file path, or None. Such text is refused, never taken as a path: a path
    made of it would create a folder named after the scheme (or the password)."""
    misspelled = _MISSPELLED.match(text)
    if misspelled is None:
        return None
    scheme = misspelled.group(1).lower()
    shown = redact_url(text)
    if scheme.startswith("sqlite"):
        fix = (
            "write sqlite:///relative/file.sqlite (three slashes) or "
            "sqlite:////absolute/file.sqlite (four)"
        )
    elif scheme.startswith("postgres"):
        fix = "write postgresql://user:password@host:port/dbname (two slashes after the colon)"
    elif scheme == "memory":
        fix = "write memory://"
    else:
        fix = f"use {_SCHEMES}"
    return f"{shown!r} is a malformed URL (the '://' after {scheme!r} is misspelled); {fix}."


def sqlite_file(url: str | Path | None) -> Path | None:
    """The SQLite file ``url`` names (a ``sqlite://`` URL or a plain path), or None: no
    URL, another kind of store, or text the openers refuse with their own message."""
    if url is None:
        return None
    text = str(url)
    if "://" not in text:
        if not text.strip() or malformed_url_problem(text) or is_keyword_dsn(text):
            return None
        return Path(text)
    try:
        return parse_checkpointer_url(text).path
    except CheckpointerURLError:
        return None


def new_folder(url: str | Path | None) -> Path | None:
    """The outermost folder that opening the SQLite file ``url`` names (a ``sqlite://`` URL
    or a plain path) would create, or None (it exists, or ``url`` names no SQLite file).
    A command that creates a store on purpose says so: a typo in a path otherwise makes a
    folder silently."""
    path = sqlite_file(url)
    if path is None:
        return None
    missing = [folder for folder in [path.parent, *path.parent.parents] if not folder.exists()]
    return missing[-1] if missing else None


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
    """``url`` with every secret replaced by ``***``, safe to print.

    Covers the password of the userinfo (``postgresql://user:***@host/db``, also when the
    ``://`` is misspelled: ``postgresql:/user:***@host``), every parameter whose name says
    it is secret (``password=``, ``sslpassword=``, ``token=``, ...), and a libpq keyword
    DSN, which is parsed with psycopg's own parser and shown rebuilt from its keywords
    (quotes, escapes and spaces around ``=`` cannot leak part of a password); a keyword DSN
    that does not parse is not shown at all. It works on any string, even one that is not
    a valid URL: everything between the scheme and the last ``@`` is treated as userinfo,
    so a password containing ``/``, ``@`` or ``?`` is still hidden (at worst more than the
    password is).
    """
    text = str(url)
    if is_keyword_dsn(text):
        return _redacted_keywords(text)
    prefix = _SCHEME_PREFIX.match(text)
    if prefix is not None:
        head, rest = text[: prefix.end()], text[prefix.end() :]
        at = rest.rfind("@")
        if at != -1:
            user, colon, _password = rest[:at].partition(":")
            if colon:
                rest = f"{user}:{_REDACTED}@{rest[at + 1 :]}"
        text = head + rest
    return _redact_parameters(text)


def url_secrets(url: str) -> list[str]:
    """Every secret ``url`` carries (the userinfo password, secret parameters, a keyword
    DSN's passwords as psycopg parses them), as written and as meant: what must not appear
    in anything lg_eval shows."""
    text = str(url)
    found: list[str] = []
    if is_keyword_dsn(text):
        found += [v for k, v in _keywords(text).items() if _SECRET_NAME.search(k) and v]
    else:
        prefix = _SCHEME_PREFIX.match(text)
        if prefix is not None:
            rest = text[prefix.end() :]
            at = rest.rfind("@")
            if at != -1:
                _user, colon, password = rest[:at].partition(":")
                if colon and password:
                    found.append(password)
    for match in _PARAMETER.finditer(text):
        value = match.group("value")
        if _secret(match) and value:
            found.append(value)
            if value[0] in "'\"":  # quoted: also the text between the quotes, unescaped
                inner = value[1:-1] if len(value) > 1 and value[-1] == value[0] else value[1:]
                found.append(re.sub(r"\\(.)", r"\1", inner))
    return [secret for secret in dict.fromkeys(found) if secret]


def url_password(url: str) -> str | None:
    """The first secret ``url`` carries (see :func:`url_secrets`), if any."""
    found = url_secrets(url)
    return found[0] if found else None


def scrub(text: str, url: str) -> str:
    """``text`` (say, a driver's error message) with ``url`` and its secrets hidden.

    Drivers echo the connection string they were given; this replaces the URL by
    its redacted form and then every spelling of each secret (as written,
    percent-decoded, percent-encoded) by ``***``.
    """
    out = text.replace(url, redact_url(url))
    spellings = {
        spelling
        for secret in url_secrets(url)
        for spelling in (secret, unquote(secret), quote(secret, safe=""))
        if spelling
    }
    for spelling in sorted(spellings, key=len, reverse=True):
        out = out.replace(spelling, _REDACTED)
    return _redact_parameters(out)


def _secret(match: re.Match[str]) -> bool:
    return _SECRET_NAME.search(match.group("name")) is not None


def _redact_parameters(text: str) -> str:
    """``text`` with the value of every ``name=value`` whose name says it is secret hidden."""
    return _PARAMETER.sub(
        lambda m: (
            m.group("lead") + m.group("name") + m.group("eq") + _REDACTED
            if _secret(m)
            else m.group(0)
        ),
        text,
    )


def _keywords(text: str) -> dict[str, str]:
    """A keyword DSN parsed by psycopg (libpq's own rules); {} when it does not parse or
    psycopg is not installed."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # pragma: no cover - the postgres extra is missing
        return {}
    try:
        parsed = conninfo_to_dict(text)
    except Exception:  # malformed: libpq's message may quote the text, so it is not kept
        return {}
    return {str(key): str(value) for key, value in parsed.items()}


def _redacted_keywords(text: str) -> str:
    """A keyword DSN rebuilt from its parsed keywords, secrets as ``***``; one that does
    not parse is not shown (a regex could not say where its password ends)."""
    keywords = _keywords(text)
    if not keywords:
        return "<a libpq keyword DSN that does not parse; not shown>"
    shown = []
    for key, value in sorted(keywords.items(), key=lambda item: _position(text, item[0])):
        if _SECRET_NAME.search(key):
            value = _REDACTED
        elif not value or re.search(r"[\s'\\]", value):
            value = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        shown.append(f"{key}={value}")
    return " ".join(shown)


def _position(text: str, key: str) -> int:
    """Where ``key=`` is first written in a keyword DSN (to show the keywords in its order)."""
    found = re.search(rf"(?:^|\s){re.escape(key)}\s*=", text)
    return found.start() if found else len(text)
