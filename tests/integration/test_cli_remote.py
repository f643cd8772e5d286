"""The `trncost` CLI and its HTTP client against the real API handler over real HTTP: a wsgiref
server in a thread (the local runtime's API Gateway stand-in) on moto. And SigV4: a deployed
stage's requests are signed, verifiably; a local URL never is, and nothing here reaches AWS."""

from __future__ import annotations

import json
import re
import socket
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.credentials import Credentials

from tests.support.events import saved_price_list
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, lambda_env, load_handler
from tests.support.http import serve_http as _serve
from trncost import display
from trncost.errors import ApiError, ClientError, ConnectionFailed, SigningError
from trncost.settings import ACCEPT_UPLOADS_ENV
from trncost_client import http as client_module
from trncost_client.cli import main
from trncost_client.http import TrncostClient
from trncost_client.local.gateway import WsgiGateway

STAGE = "https://abc123.execute-api.us-east-1.amazonaws.com/dev"
SIGV4_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<akid>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), "
    r"Signature=(?P<signature>[0-9a-f]{64})$"
)


@pytest.fixture
def url(table, monkeypatch) -> Iterator[str]:
    """The API handler, loaded as the runtime loads it, behind HTTP on 127.0.0.1."""
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "true")  # as the local runtime: uploads may publish
    # as the local runtime does: no EMF line of the API's among the CLI's own output
    lambda_env(monkeypatch, table, POWERTOOLS_METRICS_DISABLED="true")
    monkeypatch.delenv("TRNCOST_URL", raising=False)
    module = load_handler("api")
    yield from _serve(WsgiGateway(module.handler, FakeContext()))


@pytest.fixture
def no_aws(monkeypatch):
    """Any attempt to find AWS credentials fails the test (local URLs must not look)."""

    def forbidden() -> Any:
        raise AssertionError("a local request looked for AWS credentials")

    monkeypatch.setattr(client_module, "_default_credentials", forbidden)


def seed(url: str) -> str:
    """A workload, two trials and a price snapshot via the API; returns an estimate id."""
    api = TrncostClient(url)
    api.create_workload(
        workload(workload_id="wl-cli", name="Llama 8B pretrain", dataset_gb=100).model_dump(
            mode="json"
        )
    )
    for tid in ("t-1", "t-2"):
        t = trial(tid, count=2, phase="target", workload_id="wl-cli")
        api.import_trial("wl-cli", t.model_dump(mode="json"))
    saved = saved_price_list()
    taken = api.take_snapshot(saved, note="from the saved Price List file", publish=True)
    assert taken["published_as_latest"]
    created = api.create_estimate(
        "wl-cli",
        {
            "candidate": {
                "instance_type": "trn2.48xlarge",
                "instance_count": 2,
                "region": "us-east-1",
            }
        },
    )
    assert created["version"] == 1 and created["estimate"]["status"] == "complete"
    return created["estimate_id"]


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- the CLI over HTTP ------------------------------------------------------------------------
def test_workloads_prints_a_table_and_json(url, capsys, no_aws):
    seed(url)
    assert main(["workloads", "--url", url]) == 0
    out = capsys.readouterr().out
    for text in ("wl-cli", "Llama 8B pretrain", "llama-3.1-8b (8B params)", "7.2B tokens"):
        assert text in out, text
    assert "eval_loss ≤ 2.0" in out

    assert main(["workloads", "--url", url, "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)
    assert only["workload_id"] == "wl-cli" and only["target"]["unit"] == "tokens"


def test_url_defaults_to_trncost_url(url, capsys, monkeypatch, no_aws):
    seed(url)
    monkeypatch.setenv("TRNCOST_URL", url)
    assert main(["workloads", "--json"]) == 0
    assert [w["workload_id"] for w in json.loads(capsys.readouterr().out)] == ["wl-cli"]


def test_report_is_downloaded_to_out(url, capsys, tmp_path, no_aws):
    eid = seed(url)
    out = tmp_path / "report.html"
    assert main(["report", eid, "--url", url, "--out", str(out)]) == 0
    html = out.read_text()
    assert html.lstrip().startswith("<!DOCTYPE html>") and "trn2.48xlarge" in html
    assert str(out) in capsys.readouterr().out

    assert main(["report", eid, "--url", url, "--version", "1", "--out", "-"]) == 0
    assert capsys.readouterr().out == html


def test_report_without_out_is_a_temporary_file_whose_path_is_printed(
    url, capsys, tmp_path, monkeypatch
):
    import tempfile

    eid = seed(url)
    cwd, temp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir(), temp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert main(["report", eid, "--url", url, "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)
    (written,) = temp.glob(f"trncost-report-{eid}-*.html")
    assert meta["path"] == str(written) and meta["opened"] is False and meta["bytes"] > 1000
    assert list(cwd.iterdir()) == []  # nothing written where the command ran
    assert main(["report", eid, "--url", url]) == 0
    out = capsys.readouterr().out
    assert f"report of estimate {eid}" in out and str(temp) in out


@pytest.mark.parametrize(("fmt", "content"), [("csv", "table,candidate,id,"), ("md", "# trncost")])
def test_report_format_writes_the_export_and_says_where(url, capsys, tmp_path, monkeypatch, fmt,
                                                        content):  # fmt: skip
    import csv
    import tempfile

    eid = seed(url)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["report", eid, "--url", url, "--format", fmt]) == 0
    out = capsys.readouterr().out
    (written,) = tmp_path.glob(f"trncost-report-{eid}-*.{fmt}")
    assert str(written) in out and ("CSV" if fmt == "csv" else "Markdown") in out
    text = written.read_text(encoding="utf-8")
    assert text.startswith(content)
    if fmt == "csv":
        rows = list(csv.DictReader(text.splitlines()))
        assert {r["table"] for r in rows} == {"line_item", "input"}
        assert all(not r["amount"].startswith("$0.0000") for r in rows)
    assert main(["report", eid, "--url", url, "--format", fmt, "--out", "-"]) == 0
    assert capsys.readouterr().out.splitlines() == text.splitlines()


def test_report_format_other_than_html_csv_md_is_refused(url, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["report", "est-x", "--url", url, "--format", "pdf"])
    assert exit_.value.code == 2 and "--format" in capsys.readouterr().err


def test_report_open_writes_a_temp_file_and_opens_it(url, capsys, tmp_path, monkeypatch):
    import tempfile
    import webbrowser

    eid = seed(url)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda u, *a, **k: opened.append(u) or True)
    assert main(["report", eid, "--url", url, "--open"]) == 0
    out = capsys.readouterr().out
    (uri,) = opened
    (written,) = tmp_path.glob("trncost-report-*.html")
    assert uri == written.as_uri() and str(written) in out and "opened in your browser" in out
    assert "trn2.48xlarge" in written.read_text()


def test_report_open_without_a_browser_still_succeeds(url, capsys, tmp_path, monkeypatch):
    import webbrowser

    eid = seed(url)

    def no_browser(*_: Any, **__: Any) -> bool:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "open", no_browser)
    target = tmp_path / "r.html"
    assert main(["report", eid, "--url", url, "--open", "--out", str(target)]) == 0
    out = capsys.readouterr().out
    assert target.exists() and "no browser could be opened" in out
    assert target.as_uri() in out


def test_prices_latest_table_and_json(url, capsys, no_aws):
    seed(url)
    assert main(["prices", "latest", "--url", url, "--json"]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert snap["source"] == "saved_price_list_file"
    assert snap["quotes"] and snap["publication_dates"]
    official = next(q for q in snap["quotes"] if q["status"] == "official")

    assert main(["prices", "latest", "--url", url]) == 0
    out = capsys.readouterr().out
    for text in (
        snap["snapshot_id"],
        "saved_price_list_file",
        display.timestamp(snap["taken_at"]),  # to the second with its zone
        "Price List publication dates",
        "AmazonEC2/us-east-1/trn2.48xlarge/on_demand",
        f"per {official['unit']}",
        f"rejected items: {len(snap['rejected'])}",
    ):
        assert text in out, text
    for q in snap["quotes"]:
        if q["status"] == "pending":  # PENDING with its reason, never a $0 price
            assert q["pending_reason"][:40] in out


def test_unknown_ids_exit_2_with_one_clean_line(url, capsys, tmp_path):
    eid = seed(url)
    assert main(["report", "nope", "--url", url, "--out", str(tmp_path / "x.html")]) == 2
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert line == "trncost: error: estimate nope not found (HTTP 404 not_found)"
    assert captured.out == "" and not (tmp_path / "x.html").exists()

    assert main(["report", eid, "--url", url, "--version", "7"]) == 2
    assert "version 7 not found" in _one_error_line(capsys.readouterr().err)


def test_no_snapshot_yet_is_a_clean_404(url, capsys):
    assert main(["prices", "latest", "--url", url]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "no price snapshot yet" in line and "404" in line


def test_connection_refused_says_to_run_make_run(capsys, no_aws):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    assert main(["workloads", "--url", f"http://127.0.0.1:{port}"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "connection refused" in line and "make run" in line and "--url" in line


def test_a_bad_url_is_a_clean_error(capsys):
    assert main(["workloads", "--url", "ftp://example.com"]) == 2
    assert "not an http(s) URL" in _one_error_line(capsys.readouterr().err)


# -- the client -------------------------------------------------------------------------------
def test_client_paginates_with_next_cursor(url, no_aws):
    api = TrncostClient(url)
    ids = [f"wl-{i}" for i in range(5)]
    for wid in ids:
        api.create_workload(workload(workload_id=wid).model_dump(mode="json"))
    first = api.get_json("/workloads", {"limit": 2})
    assert len(first["items"]) == 2 and first["next_cursor"]
    assert sorted(w["workload_id"] for w in api.workloads(page_size=2)) == ids


def test_client_raises_api_errors_with_the_fields(url, no_aws):
    api = TrncostClient(url)
    bad = workload(workload_id="wl-bad").model_dump(mode="json")
    bad["target"]["amount"] = -1
    with pytest.raises(ApiError) as info:
        api.create_workload(bad)
    err = info.value
    assert err.status == 422 and err.code == "validation_error"
    assert "target.amount" in err.fields and "target.amount" in err.message
    api.create_workload(workload(workload_id="wl-x").model_dump(mode="json"))
    with pytest.raises(ApiError) as info:
        api.create_workload(workload(workload_id="wl-x").model_dump(mode="json"))
    assert info.value.status == 409 and info.value.code == "conflict"


def test_client_times_out_with_a_message():
    with socket.socket() as s:  # listens, never answers
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        api = TrncostClient(f"http://127.0.0.1:{port}", timeout=0.3)
        with pytest.raises(ConnectionFailed, match=r"no answer within 0.3 s"):
            api.health()


def test_a_server_that_is_not_trncost_is_named():
    def html_app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"<html>hello</html>"]

    for base in _serve(html_app):
        with pytest.raises(ClientError, match="not JSON: is --url the trncost API"):
            TrncostClient(base).workloads()


# -- SigV4 ------------------------------------------------------------------------------------
@pytest.fixture
def nothing_sent(monkeypatch):
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("prepare() sent a request")

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", refuse)


def test_a_deployed_stage_is_signed_for_execute_api(nothing_sent):
    api = TrncostClient(STAGE, credentials=Credentials("AKID", "SECRET"))
    req = api.prepare("GET", "/workloads")
    assert req.signed and req.url == f"{STAGE}/workloads"
    auth = req.headers["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKID/")
    assert "/us-east-1/execute-api/aws4_request" in auth
    m = SIGV4_AUTH.match(auth)
    assert m, auth
    assert {"host", "x-amz-date"} <= set(m["signed"].split(";"))
    assert re.fullmatch(r"\d{8}T\d{6}Z", req.headers["X-Amz-Date"])
    assert m["date"] == req.headers["X-Amz-Date"][:8]
    assert "X-Amz-Security-Token" not in req.headers


def test_signing_takes_the_region_from_the_host_and_carries_the_session_token(nothing_sent):
    api = TrncostClient(
        "https://xyz789.execute-api.eu-west-2.amazonaws.com/prod/",
        credentials=Credentials("ASIAKID", "SECRET", "SESSION"),
    )
    req = api.prepare("POST", "/workloads", body={"workload_id": "w"})
    m = SIGV4_AUTH.match(req.headers["Authorization"])
    assert m and m["region"] == "eu-west-2" and m["service"] == "execute-api"
    assert req.headers["X-Amz-Security-Token"] == "SESSION"
    assert "x-amz-security-token" in m["signed"] and "content-type" in m["signed"]
    assert req.url == "https://xyz789.execute-api.eu-west-2.amazonaws.com/prod/workloads"


@pytest.mark.parametrize(
    "base", ["http://127.0.0.1:8080", "http://localhost:8080/", "http://[::1]:9000"]
)
def test_a_local_url_is_never_signed(base, nothing_sent, no_aws):
    api = TrncostClient(base, credentials=Credentials("AKID", "SECRET"))
    req = api.prepare("GET", "/workloads", query={"limit": 2})
    assert not api.sign and not req.signed
    assert not {"Authorization", "X-Amz-Date"} & set(req.headers)


def test_sign_can_be_forced_or_refused(nothing_sent):
    creds = Credentials("AKID", "SECRET")
    custom = TrncostClient("https://trncost.example.com", sign=True, credentials=creds)
    with pytest.raises(SigningError, match="--region"):
        custom.prepare("GET", "/workloads")
    custom = TrncostClient(
        "https://trncost.example.com", sign=True, region="us-west-2", credentials=creds
    )
    assert "/us-west-2/execute-api/" in custom.prepare("GET", "/health").headers["Authorization"]
    unsigned = TrncostClient(STAGE, sign=False, credentials=creds)
    assert "Authorization" not in unsigned.prepare("GET", "/health").headers


@pytest.fixture
def env_credentials(monkeypatch, tmp_path):
    """The default boto3 session sees these keys and nothing else (no files, no IMDS)."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SECRETENV")


def test_signing_uses_the_default_session_credentials(env_credentials, nothing_sent):
    req = TrncostClient(STAGE).prepare("GET", "/workloads")
    assert req.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDENV/")


def test_no_credentials_is_a_clean_error(env_credentials, monkeypatch, capsys, nothing_sent):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert main(["workloads", "--url", STAGE]) == 2
    assert "no AWS credentials" in _one_error_line(capsys.readouterr().err)


def test_what_is_sent_is_what_was_signed(env_credentials, capsys):
    """A local server recomputes the signature from the request as received (the check API
    Gateway makes): the headers urllib sends match the ones botocore signed."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    received: list[tuple[dict[str, str], bool]] = []

    def verifier(environ, start_response):
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        m = SIGV4_AUTH.match(environ.get("HTTP_AUTHORIZATION", ""))
        headers = {}
        for name in m["signed"].split(";") if m else []:
            key = "CONTENT_TYPE" if name == "content-type" else "HTTP_" + name.upper()
            headers[name] = environ[key.replace("-", "_")]
        query = environ.get("QUERY_STRING")
        target = f"http://{environ['HTTP_HOST']}{environ['PATH_INFO']}" + (
            f"?{query}" if query else ""
        )
        ok = False
        if m:
            req = AWSRequest(
                method=environ["REQUEST_METHOD"], url=target, headers=headers, data=body
            )
            req.context["timestamp"] = environ["HTTP_X_AMZ_DATE"]
            auth = SigV4Auth(Credentials("AKIDENV", "SECRETENV"), m["service"], m["region"])
            sts = auth.string_to_sign(req, auth.canonical_request(req))
            ok = auth.signature(sts, req) == m["signature"]
        received.append((headers, ok))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"items": [], "next_cursor": null}']

    for base in _serve(verifier):
        api = TrncostClient(base, sign=True, region="us-east-1")
        api.get_json("/workloads", {"limit": 3, "cursor": '{"pk": "a b"}'})
        api.post_json("/workloads", {"workload_id": "w", "name": "é"})
        assert main(["workloads", "--url", base, "--sign", "--region", "us-east-1"]) == 0
    assert "no workloads" in capsys.readouterr().out
    assert len(received) == 3 and all(ok for _, ok in received), received
    assert all("host" in h and "x-amz-date" in h for h, _ in received)


def test_trial_import_records_through_the_api_once(url, capsys) -> None:
    # Given a workload on the server
    from pathlib import Path

    wl = workload(workload_id="wl-import").model_dump(mode="json")
    TrncostClient(url).post_json("/workloads", wl)
    log = Path(__file__).resolve().parents[1] / "events" / "logs" / "megatron_llm_epfl.log"
    args = ["trial", "import", str(log), "--workload", "wl-import", "--phase", "baseline",
            "--instance-type", "p5.48xlarge", "--instance-count", "4", "--url", url,
            "--status", "completed", "--json"]  # fmt: skip
    # When its log is imported, twice
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    # Then the trial is recorded once, with the log's provenance, and readable from the API
    assert first["recorded"] is True and again["recorded"] is False
    trial_id = first["trial"]["trial_id"]
    assert again["trial"]["trial_id"] == trial_id
    stored = TrncostClient(url).get_json(f"/trials/{trial_id}")["trial"]
    assert stored["work"] == {
        "unit": "samples",
        "done": 3072.0,
        "quality_meeting": 3072.0,
        "warmup": None,  # not counted apart by the log import
    }
    assert stored["provenance"]["work.done"]["measured_in"][0]["file"] == "megatron_llm_epfl.log"
