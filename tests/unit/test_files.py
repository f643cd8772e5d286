"""trncost_client.files: only regular files are read, each up to its cap, and JSON within
bounds; every refusal is one RequestFileError saying "path: why". Nothing here may block."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from trncost.errors import RequestFileError
from trncost_client import files


def refused(call, *args) -> str:
    with pytest.raises(RequestFileError) as info:
        call(*args)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_regular_file_and_a_symlink_to_one_are_read(tmp_path: Path) -> None:
    # Given a JSON file, with a byte-order mark, and a symlink to it
    real = tmp_path / "w.json"
    real.write_bytes(b'\xef\xbb\xbf{"a": [1, 2.5, "x"]}')
    link = tmp_path / "link.json"
    link.symlink_to(real)
    # Then both read as the same document
    assert files.read_json_file(real) == files.read_json_file(link) == {"a": [1, 2.5, "x"]}


def test_a_directory_a_fifo_a_device_and_a_socket_are_refused_before_opening(tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        cases = {
            tmp_path: "a directory, not a regular file",
            fifo: "a FIFO (named pipe), not a regular file",
            Path("/dev/zero"): "a character device, not a regular file",
            sock_path: "a socket, not a regular file",
        }
        for path, why in cases.items():
            assert refused(files.read_json_file, path) == f"{path}: {why}"


def test_a_symlink_loop_a_missing_file_and_a_nul_byte_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    loop = refused(files.read_json_file, tmp_path / "a")
    assert loop == f"{tmp_path / 'a'}: too many levels of symbolic links (a symlink loop?)"
    missing = tmp_path / "nope.json"
    assert refused(files.read_json_file, missing) == f"{missing}: no such file"
    assert "NUL byte" in refused(files.read_json_file, "a\0b.json")


def test_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path, monkeypatch) -> None:
    # Given a FIFO with no writer, and a check that a swap made stale
    fifo = tmp_path / "swapped"
    os.mkfifo(fifo)
    monkeypatch.setattr(files, "check_regular", lambda path: None)
    result: list[str] = []
    # When it is opened for reading (in a thread: a blocking open would hang the test)
    worker = threading.Thread(target=lambda: result.append(refused(files.open_regular, fifo)))
    worker.daemon = True
    worker.start()
    worker.join(5)
    # Then the open returns at once and what was opened is refused
    assert not worker.is_alive(), "opening a FIFO blocked"
    assert result == [f"{fifo}: a FIFO (named pipe), not a regular file"]


def test_a_file_over_its_cap_is_refused_from_its_size(tmp_path: Path) -> None:
    # Given a sparse file one byte over the cap (nothing is read to refuse it)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(files.REQUEST_FILE_MAX_BYTES + 1)
    message = refused(files.read_json_file, big)
    assert message == f"{big}: 16,777,217 bytes, more than the 16 MiB a JSON file may be"
    assert files.read_bytes(tmp_path / "big.json", files.PRICE_FILE_MAX_BYTES)[:1] == b"\0"


def test_a_file_that_grows_past_its_cap_while_read_is_refused(tmp_path, monkeypatch) -> None:
    small = tmp_path / "grows.json"
    small.write_text("[1, 2, 3]")
    real_fstat = os.fstat

    def fstat_before_it_grew(fd: int) -> os.stat_result:
        found = real_fstat(fd)
        return os.stat_result((*found[:6], 0, *found[7:10]))  # st_size 0 when checked

    monkeypatch.setattr(files.os, "fstat", fstat_before_it_grew)
    assert "grew while it was read" in refused(files.read_bytes, small, 4)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 65 + "]" * 65, "JSON nested deeper than 64 levels"),
        ("[" * 100_000, "JSON nested deeper than 64 levels"),
        ('{"a": ' + "7" * 5000 + "}", "an integer of more than 30 digits"),
        ('{"a": -' + "7" * 31 + "}", "an integer of more than 30 digits"),
        ('{\n  "a": 1,\n  "b": \n}', "not valid JSON: Expecting value at line 4 column 1"),
        ("", "not valid JSON: Expecting value at line 1 column 1"),
    ],
)
def test_json_out_of_bounds_is_refused_with_its_reason(tmp_path, text: str, why: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    assert refused(files.read_json_file, path) == f"{path}: {why}"


def test_deep_brackets_inside_strings_and_long_floats_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"note": "' + "[" * 1000 + '", "x": ' + "9" * 400 + ".5}")
    data = files.read_json_file(path)
    assert data["note"] == "[" * 1000 and data["x"] > 1e300


def test_bytes_that_are_not_utf8_say_where(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a":\n "\xff"}')
    assert refused(files.read_json_file, path) == f"{path}: not UTF-8 text (byte 8, line 2)"
