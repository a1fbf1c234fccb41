"""logscan's exit statuses: the one place they are defined, and the table every command's help shows."""

EXIT_HEALTHY = 0      # no finding at or above --fail-on
EXIT_FINDINGS = 1     # findings at or above --fail-on
EXIT_USAGE = 2        # usage, config or input error: one line on stderr
EXIT_INTERNAL = 3     # a bug in logscan: one line on stderr, asking for a report
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
# sweep only (sysexits.h numbers: a service manager counts both as a failure):
EXIT_UNDELIVERED = 69  # EX_UNAVAILABLE: changes not all delivered (webhook, standard output); kept
EXIT_BUSY = 75         # EX_TEMPFAIL: another sweep holds the state's lock; nothing was done

# `\b` keeps click from re-wrapping the table.
EXIT_STATUS_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    HEALTHY or RUNNING, no finding at or above --fail-on (default: error)
  {EXIT_FINDINGS}    FAILED or INCONCLUSIVE, or findings at or above --fail-on
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""

# `logscan lint`: its verdict is HEALTHY or FAILED only, from findings on the scripts.
LINT_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    no finding at or above --fail-on (default: error)
  {EXIT_FINDINGS}    findings at or above --fail-on
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""

# `logscan rules`: it judges nothing.
RULES_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    the rules were listed or explained
  {EXIT_USAGE}    usage or config error, a bad rule file, an unknown rule id (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)"""
