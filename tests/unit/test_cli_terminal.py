"""Names printed to a terminal carry no control sequence (issue 23: `trncost workloads` printed
the escape sequences of stored names): the CLI's console renders every text terminal-safe."""

from __future__ import annotations

import argparse
import io

import pytest

from trncost_client.cli import remote
from trncost_client.cli.output import SafeConsole, terminal_safe

HOSTILE_NAMES = [
    "\x1b]0;pwned\x07",  # set the window title
    "ok\x1b[2J\x1b[H",  # clear the screen
    "bell\x07\x08\x7f",
    "c1\x9b31m",  # CSI as one C1 character
    "bidi\u202egnp.exe",
    "lone\ud800surrogate",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_terminal_safe_escapes_every_control_character(name):
    shown = terminal_safe(name)
    assert shown.isprintable() and shown != name
    assert terminal_safe("plain name, with ünïcode") == "plain name, with ünïcode"


def test_trncost_workloads_prints_stored_names_without_control_sequences(monkeypatch):
    # Given a server that answers with workloads whose stored names hold escape sequences
    class Client:
        def workloads(self):
            return [
                {"workload_id": f"wl-{i}", "name": name, "model": {"name": name},
                 "quality_gate": {"metric": name, "direction": "at_most", "threshold": 1}}
                for i, name in enumerate(HOSTILE_NAMES)
            ]  # fmt: skip

    monkeypatch.setattr(remote, "_client", lambda args: Client())
    out = io.StringIO()
    console = SafeConsole(file=out, width=200, force_terminal=True, color_system=None)
    args = argparse.Namespace(url="http://127.0.0.1:1", json=False)
    # When the CLI lists them
    assert remote.cmd_workloads(args, console) == 0
    # Then the terminal gets none of their control characters, each shown as its escape
    text = out.getvalue()
    assert not any(c in text for c in "\x1b\x07\x08\x7f\x9b\u202e")
    assert "\\x1b" in text and "pwned" in text  # shown, escaped (a cell may wrap it)
