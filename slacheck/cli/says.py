"""The command line's own words."""

from __future__ import annotations

from slacheck.messages import NC_, NPC_, MessageCode


class CliSays(MessageCode):
    """The command line's own lines: what was written, progress, the error frame. In the
    language of the command's --lang, English where it has none."""

    ERROR = NC_("cli.error", "error:")
    AND_MORE = NC_("cli.error.and_more", "… and {n} more")
    INTERNAL = NC_(
        "cli.error.internal",
        "internal error in `{command}` while processing {where}: {error} — a bug in slacheck, "
        "not a verdict; please report it (SLACHECK_DEBUG=1 shows the traceback)",
    )
    NO_INPUT_FILE = NC_("cli.error.no_input_file", "(no input file)")
    VALID = NC_("cli.validate.valid", "valid")
    VALID_DETAIL = NPC_(
        "cli.validate.detail",
        "{path}  ({contract}, {n} latency term)",
        "{path}  ({contract}, {n} latency terms)",
    )
    WROTE = NC_("cli.wrote", "wrote {path}")
    WROTE_STARTER = NC_("cli.init.wrote", "wrote {path}; check it with: slacheck validate {path}")
    PRESET_HINT = NC_(
        "cli.init.preset_hint",
        "the published terms only: check every number against the text you signed",
    )
    WROTE_SLOS = NPC_("cli.openslo.wrote", "wrote {path}: {n} SLO", "wrote {path}: {n} SLOs")
    LEFT_OUT = NC_("cli.openslo.left_out", "left out: {what}")
    READING_TRACES = NC_("cli.status.reading", "reading traces…")
    READING_METRICS = NC_("cli.status.reading_metrics", "reading metrics…")
    ENGINE_FALLBACK = NC_(
        "cli.engine_fallback",
        "note: {file} was parsed in Python, not by the {engine} engine, which failed on it ({why})",
    )
    ID_PASS_IN_PARTS = NC_(
        "cli.id_pass_in_parts",
        "note: the {engine} engine ran out of memory finding duplicate ids and orphans in one "
        "pass, so it read the ids again in {parts} passes (the same result, more time)",
    )
    RECORD_REFUSED = NC_(
        "cli.record_refused",
        "note: the record `traces convert` wrote in {folder} does not hold: {why}; its facts "
        "are not used, and every row is read and checked again",
    )
    WRITING_PARQUET = NC_("cli.status.writing_parquet", "writing Parquet…")
    CHECKING = NC_("cli.status.checking", "checking terms…")
    CHECKING_RENDERING = NC_("cli.status.checking_rendering", "checking and rendering…")
    COMPUTING_CLAIM = NC_("cli.status.claim", "computing the claim…")
    RUNNING_DEMO = NC_("cli.status.demo", "running the demo…")
    PROGRESS = NC_("cli.status.progress", "{step}…")
    PROGRESS_READ = NC_("cli.progress.read", "files {done}/{total}, {rows}, {rate} spans/s")
    PROGRESS_READ_LEFT = NC_(
        "cli.progress.read_left",
        "files {done}/{total}, {rows}, {rate} spans/s, about {time} left",
    )
    PROGRESS_QUALITY = NC_("cli.progress.quality", "{rows} read, checking them")
    PROGRESS_CHECKS = NC_("cli.progress.checks", "checks {done}/{total}: {item}")
    PROGRESS_CHECKS_DONE = NC_("cli.progress.checks_done", "checks {done}/{total}")
    GENERATING = NC_("cli.status.generating", "generating {tasks} over {days}…")
    WROTE_CONVERTED = NC_(
        "cli.convert.wrote",
        "wrote {rows} ({used} used, {set_aside} set aside) in {files} under {folder}/",
    )
    WROTE_GENERATED = NC_("cli.generate.wrote", "wrote {path}: {spans}, {tasks}, {days} ({format})")
    WROTE_CLAIM = NC_(
        "cli.claim.wrote",
        "wrote {folder}/: {calls} (affected_calls.csv sha256 {sha256}), {incidents}, letters in "
        "en and zh",
    )
    DEMO_TITLE = NC_("cli.demo.title", "slacheck demo — {files} in {folder}/")
    HEADLINES = NC_("cli.demo.headlines", "Headline findings")
    ROWS = NPC_("cli.count.rows", "{n} row", "{n} rows")
    FILES = NPC_("cli.count.files", "{n} file", "{n} files")
    SPANS = NPC_("cli.count.spans", "{n} span", "{n} spans")
    TASKS = NPC_("cli.count.tasks", "{n} task", "{n} tasks")
    DAYS = NPC_("cli.count.days", "{n} day", "{n} days")
    AFFECTED_CALLS = NPC_("cli.count.affected_calls", "{n} affected call", "{n} affected calls")
    INCIDENTS = NPC_("cli.count.incidents", "{n} incident", "{n} incidents")
