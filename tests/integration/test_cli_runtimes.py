"""The CLI talks to the runtime it is told (--url, $TRNCOST_URL, else http://127.0.0.1:8080)
and says which: a local runtime's own state file (local-<port>.json) gives its embedded AWS,
so `trncost dlq …` needs no flag and no credentials against it; with two runtimes on one
machine each command goes to the one named; no runtime at the URL is one line naming the
running ones. A moto server stands in for a runtime's embedded AWS."""

from __future__ import annotations

import json
import os
import socket

import boto3
import pytest
from moto.server import ThreadedMotoServer

from trncost.settings import STATE_DIR_ENV, URL_ENV
from trncost_client.cli import main


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def embedded_aws():
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    sqs = boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url=endpoint,
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    dlq = sqs.create_queue(QueueName="trncost-ingest-dlq")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]
    policy = {"deadLetterTargetArn": arn["QueueArn"], "maxReceiveCount": "5"}
    sqs.create_queue(QueueName="trncost-ingest", Attributes={"RedrivePolicy": json.dumps(policy)})
    sqs.send_message(QueueUrl=dlq, MessageBody="{}")
    yield endpoint
    server.stop()


@pytest.fixture
def runtimes(tmp_path, monkeypatch, embedded_aws):
    """Two local runtimes' state files (ports A and B), as `trncost serve` writes them; no
    AWS credentials anywhere."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path))
    ports = {"A": free_port(), "B": free_port()}
    endpoints = {"A": embedded_aws, "B": "http://127.0.0.1:9"}
    for name, port in ports.items():
        state = {
            "url": f"http://127.0.0.1:{port}",
            "port": port,
            "aws_endpoint": endpoints[name],
            "region": "us-east-1",
            "bus": "trncost-local",
            "pid": os.getpid(),
        }
        (tmp_path / f"local-{port}.json").write_text(json.dumps(state))
    gone = free_port()  # a runtime that died without removing its file
    stale = {"url": f"http://127.0.0.1:{gone}", "pid": 2**22 + 12345, "aws_endpoint": "x"}
    (tmp_path / f"local-{gone}.json").write_text(json.dumps(stale))
    return ports, gone


def test_dlq_against_the_local_runtime_needs_no_flag_and_says_where(runtimes, capsys, monkeypatch):
    ports, _ = runtimes
    monkeypatch.setenv(URL_ENV, f"http://127.0.0.1:{ports['A']}")
    assert main(["dlq", "list"]) == 0
    out = capsys.readouterr().out
    assert f"the local runtime http://127.0.0.1:{ports['A']}: embedded AWS http://127.0.0.1:" in out
    assert "region us-east-1" in out and "trncost-ingest-dlq" in out
    assert main(["dlq", "list", "--url", f"http://localhost:{ports['A']}", "--json"]) == 0
    captured = capsys.readouterr()
    (listed,) = json.loads(captured.out)
    assert listed["name"] == "trncost-ingest-dlq" and listed["messages"] == 1
    assert listed["sources"] == ["trncost-ingest"]
    assert "embedded AWS" in captured.err  # where, on stderr: stdout stays JSON
    assert main(["dlq", "redrive", "trncost-ingest-dlq", "--by-copy"]) == 0
    assert "moved 1 messages by copy" in capsys.readouterr().out


def test_no_runtime_at_the_url_names_the_running_ones(runtimes, capsys):
    ports, gone = runtimes
    errors = []
    for argv in (
        ["dlq", "list", "--url", f"http://127.0.0.1:{gone}"],
        ["trial", "run", "--local", "--url", f"http://127.0.0.1:{gone}", "--", "true"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"no local runtime at http://127.0.0.1:{gone}" in err, err
        assert f"http://127.0.0.1:{ports['A']}" in err and f"http://127.0.0.1:{ports['B']}" in err
        errors.append(err)
    assert "for your AWS account give --aws" in errors[0]


def test_each_command_goes_to_the_runtime_its_url_names(runtimes, capsys):
    ports, _ = runtimes
    # B's embedded AWS is not there: a command sent to B fails naming B's endpoint, never A's
    assert main(["dlq", "list", "--url", f"http://127.0.0.1:{ports['B']}"]) == 2
    captured = capsys.readouterr()
    assert "http://127.0.0.1:9" in captured.out + captured.err
    assert main(["dlq", "list", "--url", f"http://127.0.0.1:{ports['A']}"]) == 0
    assert "trncost-ingest-dlq" in capsys.readouterr().out


def test_a_deployed_url_means_aws_in_its_region(runtimes, capsys, monkeypatch):
    from trncost_client.cli import dlq as cli_dlq

    seen = {}

    class Ops:
        def __init__(self, region=None, endpoint_url=None, access_key=None):
            seen.update(region=region, endpoint_url=endpoint_url, access_key=access_key)

        def dead_letter_queues(self, prefix):
            return []

    monkeypatch.setattr(cli_dlq, "QueueOps", Ops)
    url = "https://abc123.execute-api.eu-west-1.amazonaws.com/dev"
    assert main(["dlq", "list", "--url", url]) == 0
    assert seen == {"region": "eu-west-1", "endpoint_url": None, "access_key": None}
    assert "your AWS account (default credentials), region eu-west-1" in capsys.readouterr().out


def test_a_local_trial_of_another_workload_must_say_what_it_is_recorded_as(runtimes, capsys):
    ports, _ = runtimes
    url = f"http://127.0.0.1:{ports['A']}"
    argv = ["trial", "run", "--local", "--url", url, "--workload", "llama31-8b-cpt", "--", "true"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--instance-type is required for workload llama31-8b-cpt" in err
