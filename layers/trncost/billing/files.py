"""Reading a billing export: CSV (streamed with the stdlib `csv` module), gzip CSV (how AWS
Data Exports deliver text) and Parquet (DuckDB), into a `ParsedBill`.

The format is told by the content, not the name: `PAR1` starts a Parquet file, `1f 8b` a gzip
stream, anything else is CSV text (UTF-8, a byte-order mark allowed).

CSV is read a record at a time and never held whole. A record whose bytes carry no trncost tag
key in any spelling (neither `trncost:` nor `trncost_`) is counted, not decoded nor parsed:
most of a bill is someone else's, and this is what reads a million rows in seconds
(benchmarks/bench_actuals.py). A record spans lines when a quoted field holds a newline: the
quote count of each line says whether the record goes on (RFC 4180: an escaped quote is two).

Parquet is read by DuckDB: only the columns trncost reads, only the rows whose tag map has a
trncost key (filtered inside DuckDB), the total counted from the file's metadata. DuckDB is in
the Lambda layer (about 55 MB of the 250 MB a function may unzip: tests/infra checks the
layer's size).
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import tempfile
from pathlib import Path
from typing import IO

from trncost.billing.rows import BillRows
from trncost.billing.tags import NEEDLES
from trncost.errors import InvalidInput
from trncost.model.actuals import ParsedBill

PARQUET_MAGIC = b"PAR1"
GZIP_MAGIC = b"\x1f\x8b"
BATCH = 4096  # tagged records parsed per csv.reader call
FETCH = 10_000  # Parquet rows per fetch
READ_BUFFER = 1 << 20


def read_bill_bytes(data: bytes, name: str = "body") -> ParsedBill:
    """A whole export held in memory (an API body): CSV, gzip CSV or Parquet."""
    if data[:4] == PARQUET_MAGIC:
        with tempfile.TemporaryDirectory(prefix="trncost-bill-") as tmp:
            path = Path(tmp) / "bill.parquet"
            path.write_bytes(data)
            return read_parquet(path, name)
    return read_csv_stream(io.BytesIO(data), name)


def read_bill_file(path: str | os.PathLike[str], name: str | None = None) -> ParsedBill:
    """An export on disk (the CLI's files): CSV, gzip CSV or Parquet, streamed."""
    shown = name or os.fspath(path)
    with open(path, "rb", buffering=READ_BUFFER) as f:
        head = f.read(4)
        if head == PARQUET_MAGIC:
            return read_parquet(Path(path), shown)
        f.seek(0)
        return read_csv_stream(f, shown)


def read_csv_stream(stream: IO[bytes], name: str = "body") -> ParsedBill:
    """A CSV export (plain or gzip) from a binary stream, a record at a time."""
    head = stream.read(2)
    stream.seek(0)
    raw: IO[bytes] | io.BufferedReader = stream
    if head == GZIP_MAGIC:  # buffered: GzipFile's own lines come half as fast
        raw = io.BufferedReader(gzip.GzipFile(fileobj=stream, mode="rb"), READ_BUFFER)
    try:
        return _read_csv(raw, name)
    except UnicodeDecodeError:
        raise InvalidInput(f"body: {name} is not UTF-8 text", fields=["body"]) from None
    except (OSError, EOFError) as exc:  # a truncated or corrupt gzip stream
        raise InvalidInput(f"body: {name}: {exc}", fields=["body"]) from None


def _read_csv(raw: IO[bytes] | io.BufferedReader, name: str) -> ParsedBill:
    """Lines are read as bytes and only a record with a trncost key is decoded and parsed:
    the rest are counted (the quote count of each line says whether a record goes on)."""
    lines = iter(raw)
    first = next(lines, b"")
    while first.count(b'"') & 1:  # a header with a quoted line break
        more = next(lines, None)
        if more is None:
            break
        first += more
    header_text = first.decode("utf-8-sig")
    if not header_text.strip():
        raise InvalidInput(f"body: {name} is empty (no CSV header)", fields=["body"])
    header = next(csv.reader([header_text]))
    rows = BillRows(header, name)
    needle = b"trncost"  # both NEEDLES start with it: one search, then the two
    needle_a, needle_b = (n.encode() for n in NEEDLES)
    batch: list[str] = []
    numbers: list[int] = []
    number = skipped = 0
    parts: list[bytes] = []
    for line in lines:  # once per line of the bill: kept to the fewest operations
        if parts:
            parts.append(line)
            if not line.count(b'"') & 1:
                continue
            record, parts = b"".join(parts), []
        elif line.count(b'"') & 1:
            parts.append(line)
            continue
        else:
            record = line
        if needle in record and (needle_a in record or needle_b in record):
            number += 1
            batch.append(record.decode("utf-8"))
            numbers.append(number)
            if len(batch) >= BATCH:
                _parse(rows, batch, numbers, name)
                batch, numbers = [], []
        elif record.strip():
            number += 1
            skipped += 1
    if parts:
        number += 1
        batch.append(b"".join(parts).decode("utf-8"))  # an unterminated quote: csv says so
        numbers.append(number)
    if batch:
        _parse(rows, batch, numbers, name)
    rows.skipped(skipped)
    return rows.result([name])


def _parse(rows: BillRows, batch: list[str], numbers: list[int], name: str) -> None:
    try:
        for row, number in zip(csv.reader(batch), numbers, strict=True):
            rows.add(row, number)
    except csv.Error as exc:
        raise InvalidInput(
            f"body: {name} is not CSV trncost reads ({exc})", fields=["body"]
        ) from None


def _quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def read_parquet(path: Path, name: str) -> ParsedBill:
    """A Parquet export: the columns trncost reads, the rows with a trncost tag (DuckDB)."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        # Lambda: only /tmp is writable (DuckDB's home holds its extension cache)
        home = tempfile.gettempdir().replace("'", "''")
        con.execute(f"SET home_directory = '{home}'")
        con.execute("SET enable_progress_bar = false")  # never onto the caller's stdout
        source = "read_parquet(?)"
        try:
            schema = con.execute(f"DESCRIBE SELECT * FROM {source}", [str(path)]).fetchall()
        except duckdb.Error as exc:
            raise InvalidInput(f"body: {name} is not Parquet DuckDB reads ({exc})".split("\n")[0],
                               fields=["body"]) from None  # fmt: skip
        names = [str(r[0]) for r in schema]
        types = {str(r[0]): str(r[1]).upper() for r in schema}
        probe = BillRows(names, name)
        selected = sorted(probe.index.items(), key=lambda kv: kv[1])
        columns = [names[i] for _, i in selected]
        rows = BillRows(columns, name)
        tag_columns = [c for k, c in ((k, names[i]) for k, i in selected) if k in ("tags", "tags2")]
        conditions = []
        for column in tag_columns:
            if types[column].startswith("MAP"):
                keys = f"array_to_string(map_keys({_quoted(column)}), ' ')"
            else:
                keys = f"CAST({_quoted(column)} AS VARCHAR)"
            conditions += [f"{keys} LIKE '%{needle}%'" for needle in NEEDLES]
        where = " OR ".join(conditions) or "FALSE"
        (total,) = con.execute(f"SELECT count(*) FROM {source}", [str(path)]).fetchone() or (0,)
        cursor = con.execute(
            f"SELECT {', '.join(_quoted(c) for c in columns)} FROM {source} WHERE {where}",
            [str(path)],
        )
        number = 0
        while batch := cursor.fetchmany(FETCH):
            for row in batch:
                number += 1
                rows.add(row, number)
        rows.skipped(int(total) - number)
        return rows.result([name])
    finally:
        con.close()
