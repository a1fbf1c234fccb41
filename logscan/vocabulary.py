"""The words logscan's stages share, each declared once: what a user or a report can name."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """A report format: what `--format` takes, each with its `--FORMAT-output FILE` option, in
    the order the help lists them. `logscan.render` maps each to the module that renders it."""

    HUMAN = "human"
    JSON = "json"
    CONCISE = "concise"
    GITHUB = "github"
    GITLAB = "gitlab"
    JUNIT = "junit"
    SARIF = "sarif"
    MARKDOWN = "markdown"
    HTML = "html"


class Verdict(StrEnum):
    """The verdict on a job (logscan.diagnose.verdict says how each is earned)."""

    HEALTHY = "HEALTHY"
    FAILED = "FAILED"
    RUNNING = "RUNNING"
    INCONCLUSIVE = "INCONCLUSIVE"


class ExpectationStatus(StrEnum):
    """What a gate (`logscan check`) found of one expectation it asked for."""

    HELD = "held"
    NOT_MET = "not met"          # fails the gate
    NOT_CHECKED = "not checked"  # the lines cannot show it (no times): said, and the gate not failed


# The verdicts a gate does not pass: a failed job, and logs that show nothing to judge.
FAILING_VERDICTS = (Verdict.FAILED, Verdict.INCONCLUSIVE)


class Severity(StrEnum):
    """A rule's severity, the most severe first."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


# 0 for the most severe: a finding sorts, and `--fail-on` compares, by it.
SEVERITY_ORDER = {severity: rank for rank, severity in enumerate(Severity)}


class Level(StrEnum):
    """How loudly a CI format shows a finding (SARIF's levels; GitHub's annotation kinds say
    `notice` for a note): an error that is a consequence of the root cause is a note."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


LEVEL_OF_SEVERITY = {Severity.ERROR: Level.ERROR, Severity.WARNING: Level.WARNING, Severity.INFO: Level.NOTE}


class FailOn(StrEnum):
    """`--fail-on`: the least severe finding that fails the run, or never."""

    ERROR = Severity.ERROR.value
    WARNING = Severity.WARNING.value
    NEVER = "never"


class WebhookPayload(StrEnum):
    """What an alert's POST body looks like, for the service behind the webhook's URL."""

    AUTO = "auto"        # by the URL's host: Slack's and Teams' own hosts, else json
    SLACK = "slack"      # {"text": ...}: Slack's incoming webhooks (and Mattermost, Rocket.Chat)
    TEAMS = "teams"      # an Adaptive Card message: a Microsoft Teams Workflows webhook
    JSON = "json"        # {"text": ..., "job_id", "change", "verdict", ...}: a receiver of one's own


class JobStatus(StrEnum):
    """What the platform reports for a job: `--job-status`, or a `job_status` file."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RUNNING = "running"


class RuleKind(StrEnum):
    """What a catalogue entry is, and so where its code lives."""

    SIGNATURE = "signature"   # its patterns and message template make the finding
    CODE = "code"             # logscan.findings makes the finding
    SIGNAL = "signal"         # a line that tells the job model something; never a finding itself
    LINT = "lint"             # a pre-flight rule on launch scripts and commands (logscan.lint)
    # a line torch or its launcher prints that does not mean failure: never a finding, never a
    # signal to the job model; a report that found no failure names it (logscan.diagnose.harmless)
    HARMLESS = "harmless"


class Role(StrEnum):
    """What a rule's finding is to the root-cause pass (logscan.diagnose.root_cause)."""

    # A problem with the shape of the launch: it explains everything after it.
    LAUNCH_SHAPE = "launch-shape"
    # Something a process or Worker did wrong by itself.
    FAILURE = "failure"
    # What processes suffer from another's failure: it leads only when nothing else explains
    # the job.
    CASCADE = "cascade"
    # Something a gate asked for that the logs do not show.
    EXPECTATION = "expectation"


class RunStage(StrEnum):
    """Where in a run something happened, in the order a run goes through them: the stage a
    rule's finding is about, the stage a traceback was raised at, where a Worker or a process
    stopped."""

    LAUNCH = "launch"
    RENDEZVOUS = "rendezvous"
    INIT = "init"
    TRAINING = "training"
    EXIT = "exit"


class ProcessRole(StrEnum):
    """The one role a training process has in a diagnosis. The root cause's rank is that,
    whatever was done to it afterwards (a straggler's SIGTERM from torchrun is not a cascade)."""

    ROOT_CAUSE = "root-cause"
    FAILED = "failed"          # failed by itself, not the root cause
    CASCADE = "cascade"        # failed as a consequence of another's failure
    WAITING = "waiting"        # left waiting by a hang
    NO_FAILURE = "no-failure"


class MarkStage(StrEnum):
    """What a line marks on a Worker's (or a process's) timeline, in the order they happen, and
    LAST_LINE: the last line of its log, which the report shows but the timeline does not draw."""

    LAUNCHED = "launched"
    TORCHRUN_STARTED = "torchrun started"
    ENV_PRINTED = "env printed"
    FIRST_BATCH = "first batch"
    LAST_PROGRESS = "last progress"
    FAILURE = "failure"
    END = "end"
    LAST_LINE = "last line"


# The stages a timeline draws, in order.
TIMELINE = tuple(stage for stage in MarkStage if stage is not MarkStage.LAST_LINE)


class TimeAxis(StrEnum):
    """How a timeline places its marks."""

    TIME = "time"     # by the clock: every Worker's lines carry times
    ORDER = "order"   # by line order within each Worker; Workers are not placed against each other
