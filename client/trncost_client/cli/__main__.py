"""`python -m trncost_client.cli …`: the same as the `trncost` command."""

from trncost_client.cli.parser import main

if __name__ == "__main__":
    raise SystemExit(main())
