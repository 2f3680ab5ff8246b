"""`python -m slacheck`: the same command line as the `slacheck` script."""

from slacheck.cli import main

if __name__ == "__main__":
    main()
