"""trncost's client side: everything that runs on a person's machine or inside a training job,
never in a Lambda. The Lambda layer is the other package, `trncost` (layers/trncost), whole;
this package calls its services and never the other way round (tests/unit/test_layering.py).

    cli/            the `trncost` command (offline request files, the API, trials, dead letters)
    http.py         the CLI's HTTP client of the API (SigV4 for a deployed stage)
    requestfile.py  request files read from disk into the domain's RequestFile
    local/          the local runtime of `make run` (moto, the real handlers, pollers)
    agent/          the trial agent inside a training job (`python3 -m trncost_client.agent`)
    dead_letters.py list and redrive the dead-letter queues (`trncost dlq`)
    tensorboard.py  TensorBoard event files for `trncost trial import` (its reader is not a
                    layer dependency)
"""
