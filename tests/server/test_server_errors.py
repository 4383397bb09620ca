"""Failures talking to a LangGraph Server are typed errors naming the server or thread."""

from __future__ import annotations

import uuid

import pytest

from lg_eval.errors import InvalidConfigError, InvalidOptionError, ServerError, ThreadNotFoundError
from lg_eval.server import ServerConnection, extract_server_thread


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unknown_thread_is_thread_not_found_naming_it(server_url: str) -> None:
    thread_id = str(uuid.uuid4())
    with pytest.raises(ThreadNotFoundError, match=thread_id):
        extract_server_thread(server_url, thread_id)


def test_server_down_is_server_error_after_retries() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    server = ServerConnection(url, retries=2, backoff=0.0, timeout=2.0)
    with pytest.raises(ServerError, match=r"could not be reached .* after 2 attempt"):
        extract_server_thread(server, str(uuid.uuid4()))


def test_api_key_is_not_in_repr_nor_errors() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    server = ServerConnection(url, api_key="lsv2-secret-key", retries=1, backoff=0.0)
    assert "lsv2-secret-key" not in repr(server)
    with pytest.raises(ServerError) as caught:
        extract_server_thread(server, str(uuid.uuid4()))
    assert "lsv2-secret-key" not in str(caught.value)


@pytest.mark.parametrize("url", ["127.0.0.1:2024", "", "ftp://host"])
def test_url_that_is_not_http_is_invalid_option(url: str) -> None:
    with pytest.raises(InvalidOptionError, match="http"):
        ServerConnection(url)


def test_empty_thread_id_is_invalid_config() -> None:
    with pytest.raises(InvalidConfigError, match="thread_id"):
        extract_server_thread("http://127.0.0.1:1", "")
