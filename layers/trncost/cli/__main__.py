"""`python -m trncost.cli …`: the same as the `trncost` command."""

from trncost.cli.parser import main

if __name__ == "__main__":
    raise SystemExit(main())
