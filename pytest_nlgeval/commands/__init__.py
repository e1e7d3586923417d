"""Subcommands of the ``nlgeval`` command line, one module each."""
