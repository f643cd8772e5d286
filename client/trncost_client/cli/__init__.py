"""The `trncost` command.

    trncost init DIR [--force]                      a workload's request files to fill in,
                                                    every field documented in DIR/README.md
    trncost estimate FILE [--json] [--candidate INSTANCE_TYPE] [--no-inputs]
                                                    offline: the API's services on a file
    trncost compare FILE [--seed N] [--samples N] [--top N] [--json] [--html FILE]
                                                    offline: ranking, ranges, tornado, decision
    trncost compare --workload ID [FILE] [--candidate TYPE:COUNT@REGION …] [--seed N]
        [--samples N] [--json]                      on the API: stored; its id and report URL
    trncost workload create FILE [--json]           a workload, in the API
    trncost trial add FILE [--workload ID] [--json] a trial or a list of trials, in the API
    trncost trial retract TRIAL_ID --workload ID --reason TEXT
                                                    a trial no longer counts (the record stays)
    trncost workload retract ID --reason TEXT [--superseded-by ID]
    trncost trial run --local [--url U] [--workload ID --instance-type T]
        [--phase fit|baseline|target] [--instance-count N] [--trial-id ID] [--wait S] -- CMD …
                                                    a training command under the trial agent
    trncost serve [--host H] [--port P] [--live-prices] [--no-example] [--no-demo]
                                                    the service on this machine
    trncost workloads [--json]                      the API's workloads
    trncost report ESTIMATE_ID [--version N] [--format html|csv|md] [--open] [--out FILE]
                                                    an estimate's HTML report (or CSV/Markdown)
    trncost report COMPARISON_ID [--format html|csv|md] [--open] [--out FILE]
                                                    a stored comparison's report (cmp-…)
    trncost report ESTIMATE_ID --format focus
                                                    the run's forecast as FOCUS-shaped rows
    trncost actuals import FILE|DIR … [--dry-run] [--json]
                                                    FOCUS 1.2 / CUR 2.0 exports (CSV, gzip,
                                                    Parquet; any size): read here, sent as JSON
    trncost actuals show ESTIMATE_ID [--json]       an estimate against what AWS billed
    trncost actuals scorecard [--workload ID] [--json]
                                                    how often actuals fell inside P10–P90
    trncost actuals budget ESTIMATE_ID --email A [--sns ARN] [--start D] [--end D]
                                                    an AWS Budget: limit P90, alerts P50, P90
    trncost prices latest [--json]                  the latest price snapshot
    trncost prices upload FILE [--note N] [--publish] [--json]
                                                    a saved Price List file (saved_file)
    trncost dlq list [--prefix P] [--url U | --aws] [--region R] [--json]
                                                    dead-letter queues, depth
    trncost dlq redrive QUEUE [--to SOURCE] [--max-per-second N] [--wait] [--by-copy]
    trncost dlq status QUEUE                        its message move tasks

`estimate` and `compare` answer a request file (see examples/) with no server: the file is
held in memory as one workload's evidence and prices and the API's comparison service runs on
it, so the checks, merges and figures are the API's. `estimate` prints each candidate's
estimate with its line items, warnings and input table; `compare` analyses all of them
together: the ranking within comparable groups, break-even prices, P10/P50/P90 ranges (seeded
Monte Carlo), the sensitivity tornado and the decision (--html also writes the report). With
--json, stdout holds only JSON and every message goes to stderr.

`trial run --local` runs a training command under the trial agent against the local runtime at
--url (`make run`): its metrics and "Trial Run Completed" event go to that runtime's embedded
AWS, the trial is recorded and the workload's estimates refresh, as they would on AWS. By
default it is a trial of the runtime's demo workload (tiny-demo, recorded as 1× c7i.16xlarge);
another workload needs --workload and --instance-type.

`dlq` works on the queues of the runtime at --url: a local one's embedded AWS (endpoint and
region from its state file, no flags, no credentials), else (or with --aws) your AWS account
with the default credentials (--region; --endpoint-url for any SQS endpoint). `dlq redrive`
moves a DLQ's messages back to their source queue with SQS message move tasks (--wait follows
the task); --by-copy receives, re-sends and deletes them instead, for endpoints without move
tasks (the local runtime).

Every command that writes says where: the runtime and embedded AWS it talks to, the trial's
URL, the file it wrote (`report` without --out: a temporary file).

`workload create`, `trial add` and `compare --workload` write to the API and print where: the
workload's and each trial's URL (a record already there with the same content is left
unchanged), the stored comparison's id, URL and report URL.

`workloads`, `report`, `prices`, `workload`, `trial add`, `compare --workload`, `actuals`,
`trial run` and `dlq` talk to the runtime at --url (default
$TRNCOST_URL, else the local runtime at http://127.0.0.1:8080); a local runtime is found by its
own state file ($TRNCOST_STATE_DIR/local-<port>.json). Requests to a deployed stage
(https://<id>.execute-api.<region>.amazonaws.com/<stage>) are SigV4-signed with the default AWS
credentials; nothing else is ever signed or sent to AWS. Errors exit 2 with one line.

One module per command group: offline (estimate, compare), trial, serve, remote (workloads,
report, prices), writes (workload create, trial add, compare --workload), dlq; output holds
what they share, parser assembles them into `main`.
"""

from trncost_client.cli.parser import main

__all__ = ["main"]
