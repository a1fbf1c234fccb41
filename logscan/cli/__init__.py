"""The `logscan` command: the typer app, its exit statuses, and the console entry `main()`.

Each command is one module of this package with a `register(app)` function, listed once in
COMMANDS. Nothing heavy is imported at module level, so `logscan --help` and `logscan rules`
start fast: a command imports the pipeline or rich only when it runs.
"""

from __future__ import annotations

import os
import signal
import sys
from importlib import import_module
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from logscan.cli.exit_codes import EXIT_HEALTHY, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_STATUS_HELP

# The command modules, in the order `logscan --help` lists them. A new command is one module
# here with a `register(app)` function, and its name in this tuple.
COMMANDS = ("scan", "check", "report", "sweep", "watch", "rules", "lint")


class LogscanCommand(TyperCommand):
    """A command whose help names each argument as its options are named, by what the user types
    (`PATH...`), never by a Python type (`paths... <list[str]>`, `{paths}...`)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                pieces += param.get_usage_pieces(ctx)
            else:
                pieces.append(_shown(param) if param.required else f"[{_shown(param)}]")
        return pieces

    def format_options(self, ctx, formatter) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((_shown(param), record[1]))
            else:
                options.append(record)
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _shown(argument) -> str:
    if argument.metavar:
        return argument.metavar
    return argument.name.upper() + ("..." if argument.nargs != 1 else "")


def _is(exc: BaseException, name: str) -> bool:
    """`exc` is click's exception class `name` or a subclass. Click's exceptions are its public
    API, but typer keeps its own copy of click from 0.26 on: they are known by name, not imported
    from where one typer or another keeps them."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


class LogscanGroup(TyperGroup):
    """The command group, answering a bad command line in one line of its own (`logscan: error:
    ...`, exit status 2) rather than click's usage block."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            sys.exit(EXIT_INTERRUPTED)
        except Exception as exc:
            if _is(exc, "NoArgsIsHelpError"):  # `logscan` alone: the help, as a usage error
                exc.show()
                sys.exit(EXIT_USAGE)
            if _is(exc, "UsageError"):
                sys.exit(usage_error(exc))
            if _is(exc, "ClickException"):
                from logscan.cli.common import say

                say(f"logscan: error: {_sentence(exc.format_message())}")
                sys.exit(EXIT_USAGE)
            if _is(exc, "Abort"):  # click's own, raised for Ctrl-C at a prompt
                sys.exit(EXIT_INTERRUPTED)
            raise
        if not standalone_mode:
            return status
        sys.exit(status if isinstance(status, int) else EXIT_HEALTHY)


def usage_error(exc) -> int:
    """One line for a command line click could not take, with where to read how it goes."""
    from logscan.cli.common import say

    where = exc.ctx.command_path if exc.ctx is not None else "logscan"
    if _is(exc, "MissingParameter") and exc.param is not None:
        param = exc.param
        message = f"{where} needs {param.metavar or param.name.upper()}"
    elif _is(exc, "NoSuchOption"):  # said alike whichever click words it
        maybe = sorted(exc.possibilities or ())
        message = f"no such option: {exc.option_name}" + (f" (did you mean {', '.join(maybe)}?)" if maybe else "")
    else:
        message = _sentence(exc.format_message()).rstrip(".")
    say(f"logscan: error: {message} (see '{where} --help')")
    return EXIT_USAGE


def _sentence(message: str) -> str:
    text = " ".join(message.split())
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


# -h beside --help, for every command below the group too.
CONTEXT = {"help_option_names": ["-h", "--help"]}


def _print_version(value: bool) -> None:
    if value:
        from logscan.cli.common import emit, version

        emit(f"logscan {version()}\n")
        raise typer.Exit(EXIT_HEALTHY)


VERSION_FLAGS = ("--version", "-V")


# `LOGSCAN_DEBUG=1` (or `logscan --debug COMMAND`): an internal error shows its traceback.
DEBUG_ENV = "LOGSCAN_DEBUG"
_debug = False


def _root(
    show_version: Annotated[bool, typer.Option(
        *VERSION_FLAGS, is_eager=True, callback=_print_version,
        help="Print logscan's version and exit.")] = False,
    debug: Annotated[bool, typer.Option(
        "--debug", help=f"Show the traceback of an internal error (or set {DEBUG_ENV}=1).")] = False,
) -> None:
    """Diagnose PyTorch DDP jobs launched with torchrun from their per-Worker logs."""
    global _debug
    _debug = _debug or debug


def command_app(commands: tuple[str, ...] = COMMANDS) -> typer.Typer:
    """The `logscan` command group holding these commands."""
    group = typer.Typer(cls=LogscanGroup, no_args_is_help=True, rich_markup_mode=None,
                        pretty_exceptions_enable=False, epilog=EXIT_STATUS_HELP,
                        context_settings=CONTEXT, help=_root.__doc__)
    group.callback()(_root)
    for name in commands:
        import_module(f"{__name__}.{name}").register(group)
    return group


def app_for(args: list[str]) -> typer.Typer:
    """The group that runs this command line: when its first word names a command, a group of
    that command alone, so that a run neither imports nor builds the other commands; for the
    version, none; else (help, a mistyped command, shell completion) every command."""
    if args and args[0] in COMMANDS:
        return command_app((args[0],))
    if args and args[0] in VERSION_FLAGS:
        return command_app(())
    return __getattr__("app")


def __getattr__(name: str):
    if name == "app":  # every command, built on first use: `logscan.cli.app`
        globals()["app"] = whole = command_app()
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _terminated(signum, _frame) -> None:
    """SIGTERM (a platform or `timeout` stopping the command): end now, worker processes too."""
    _stop_children()
    os._exit(128 + signum)


def _stop_children() -> None:
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None:
        try:
            for child in multiprocessing.active_children():
                child.kill()
        except Exception:
            pass


def _interrupted(_signum, _frame) -> None:
    """Ctrl-C: stop now, quietly. Worker processes forked for a scan inherit this handler, so a
    Ctrl-C at the terminal (which reaches the whole process group) ends them the same way; when
    only this process is signalled, they are killed here rather than left behind."""
    _stop_children()
    os._exit(EXIT_INTERRUPTED)


def _unexpected(exc: Exception) -> int:
    """The exit status for an exception no command handled, said in one line. Output that the
    terminal or file cannot take (click printing `--help` to a full disk) is not a bug."""
    from logscan.cli.common import fail_stdout, say

    if isinstance(exc, OSError) and _raised_in_click_echo(exc):
        return fail_stdout(exc)
    if _debugging():
        from traceback import format_exception

        for line in "".join(format_exception(exc)).rstrip("\n").split("\n"):
            say(line)
        say(f"logscan: internal error: {type(exc).__name__}: {exc} (please report it at {_report_to()})")
        return EXIT_INTERNAL
    say(f"logscan: internal error: {type(exc).__name__}: {exc} (a bug in logscan: `logscan --debug "
        f"COMMAND ...` or {DEBUG_ENV}=1 shows its traceback; please report it at {_report_to()})")
    return EXIT_INTERNAL


def _debugging() -> bool:
    return _debug or os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def _report_to() -> str:
    """Where a bug is reported: the project's address in the package metadata, if it has one."""
    from logscan.cli.common import project_url

    try:
        return project_url() or "the project's issues"
    except Exception:  # reading metadata must not hide the error being reported
        return "the project's issues"


def _raised_in_click_echo(exc: BaseException) -> bool:
    from traceback import walk_tb

    return any(frame.f_code.co_name == "echo" and "click" in frame.f_globals.get("__name__", "")
               for frame, _ in walk_tb(exc.__traceback__))


def main() -> None:
    """The console command. Once the report is written, the process ends at once: tearing down
    the job model's modules would only add time to every scan."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if the shell ignores it
        signal.signal(signal.SIGINT, _interrupted)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    status = EXIT_HEALTHY
    try:
        app_for(sys.argv[1:])()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            status = exc.code
        elif exc.code is not None:
            from logscan.cli.common import say

            say(str(exc.code))
            status = EXIT_USAGE
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to tell it
        status = EXIT_FINDINGS
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line, not a traceback, and not a verdict on the job
        status = _unexpected(exc)
    from logscan.cli.common import flush_standard_streams

    os._exit(flush_standard_streams(status))
