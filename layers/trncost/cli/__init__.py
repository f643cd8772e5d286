"""The `trncost` command.

    trncost estimate FILE [--json] [--candidate INSTANCE_TYPE] [--no-inputs]
                                                    offline: the engine directly
    trncost compare FILE [--seed N] [--samples N] [--top N] [--json] [--html FILE]
                                                    offline: ranking, ranges, tornado, decision
    trncost trial run --local [--workload ID] [--phase fit|baseline|target]
        [--instance-type T] [--instance-count N] [--trial-id ID] [--wait S] -- CMD …
                                                    a training command under the trial agent
    trncost serve [--host H] [--port P] [--live-prices] [--no-example]
                                                    the service on this machine
    trncost workloads [--json]                      the API's workloads
    trncost report ESTIMATE_ID [--version N] [--open] [--out FILE]
                                                    an estimate's HTML report
    trncost prices latest [--json]                  the latest price snapshot
    trncost dlq list [--prefix P] [--region R] [--json]
                                                    dead-letter queues, depth
    trncost dlq redrive QUEUE [--to SOURCE] [--max-per-second N] [--wait] [--by-copy]
    trncost dlq status QUEUE                        its message move tasks

`estimate` runs the pure engine on an estimate request file (see examples/) and prints each
candidate's estimate with its line items, warnings and input table. `compare` analyses all of
them together: the ranking within comparable groups, break-even prices, P10/P50/P90 ranges
(seeded Monte Carlo), the sensitivity tornado and the decision (--html also writes the report).

`trial run --local` runs a training command under the trial agent against the local runtime
(`make run`): its metrics and "Trial Run Completed" event go to the runtime's embedded AWS, the
trial is recorded and the workload's estimates refresh, as they would on AWS.

`dlq` talks to SQS with the default AWS credentials (--region, --endpoint-url, or
$AWS_ENDPOINT_URL_SQS for the local runtime's embedded AWS). `dlq redrive` moves a DLQ's
messages back to their source queue with SQS message move tasks (--wait follows the task);
--by-copy receives, re-sends and deletes them instead, for endpoints without move tasks.

`workloads`, `report` and `prices` talk to the API at --url (default $TRNCOST_URL, else the
local runtime at http://127.0.0.1:8080). Requests to a deployed stage
(https://<id>.execute-api.<region>.amazonaws.com/<stage>) are SigV4-signed with the default AWS
credentials; nothing else is ever signed or sent to AWS. Errors exit 2 with one line.

One module per command group: offline (estimate, compare), trial, serve, remote (workloads,
report, prices), dlq; output holds what they share, parser assembles them into `main`.
"""

from trncost.cli.parser import main

__all__ = ["main"]
