"""How the command line ends: exit codes, and the error for bad input."""

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


class UsageError(Exception):
    """Bad input from the command line, shown as one line."""
