"""Errors a user can act on. Each renders as one line; the CLI maps them to exit status 2."""


class LogscanError(Exception):
    """Base for every error that reaches the user as a one-line message."""


class InputError(LogscanError):
    """A path or file the user gave cannot be used."""


class RuleFileError(LogscanError):
    """A rule file is malformed; the message names the file and the field."""

    def __init__(self, path, field: str, problem: str):
        self.path = path
        self.field = field
        super().__init__(f"{path}: field '{field}': {problem}")


class ConfigError(LogscanError):
    """A setting in pyproject.toml, logscan.toml or on the command line is invalid."""
