"""``mtcb-curate stats NAME``: the set's statistics as text tables (coverage of documents and
windows, passage lengths, question forms and types, verdicts, statuses, rejections, edits,
review pace, LLM usage, balance against the ``[stats]`` targets).

``--json FILE`` writes every figure (``stats.compute.Stats.to_json``), ``--markdown FILE`` the
same as Markdown (its first section is the one the dataset card carries; its last, "Does this
benchmark separate chunkers?", the card's evidence density and chunker comparison). ``--checklist``
also runs the checklist (without ``loads``) and counts its results; ``--llm-tags`` first asks
the LLM for the form and type of each question not tagged yet (``llm.tagging``). Exit 0, or 2
on bad input or no usable LLM server.
"""

from __future__ import annotations

import argparse

from mtcb_curate.cli.common import command_session, emit, note, report_problems, write_json, write_text


def llm_tag(args: argparse.Namespace, session, has_ws: bool) -> None:
    """``--llm-tags``: the LLM tags the pairs not tagged yet (their replies are cached in the
    workspace, where the statistics read them); asks before more than 10 uncached calls.

    Raises:
        LLMUnavailable, LLMError, LLMConfigError: no usable server (exit 2 with one line).
        CurateError: no workspace (the tags would be lost), or more than 10 calls without
            ``--yes`` and no terminal to ask.
    """
    import threading

    from mtcb_curate.app.stats import tag_items
    from mtcb_curate.cli.common import confirm
    from mtcb_curate.cli.generate import llm_client
    from mtcb_curate.errors import CurateError
    from mtcb_curate.llm.estimate import estimate_run
    from mtcb_curate.llm.pool import read_concurrency
    from mtcb_curate.llm.tagging import tag_questions, tag_requests

    if not has_ws:
        raise CurateError("--llm-tags needs a workspace (--workspace): the tags are kept in its LLM cache")
    client = llm_client(args, session.workspace.path)
    items = tag_items(session)
    estimate = estimate_run(tag_requests(items), client.config, output_tokens=20, client=client)
    note(f"LLM tags of question forms and types: {estimate.summary()}")
    if estimate.needs_confirmation and not confirm("Run these calls?", args.yes):
        raise CurateError("LLM tags not made: more than 10 calls; pass --yes to run them without asking")
    tags = tag_questions(client, items, cancel=threading.Event(), on_retry=lambda n: note(str(n)),
                         concurrency=read_concurrency(args.config))
    bad = sum(1 for t in tags if t.form is None or t.type is None)
    if bad:
        note(f"LLM tags: {bad:,} replies without a known form or type (shown as such, never guessed)")


def run(args: argparse.Namespace) -> int:
    """Compute and print the statistics; see the module docstring."""
    from mtcb_curate.app.stats import session_stats
    from mtcb_curate.stats.render import markdown_report, text_report

    with command_session(args) as (session, has_ws):
        if report_problems(session.dataset.problems, args.strict):
            return 2
        if not has_ws:
            note("no workspace: statistics of the source alone (no decisions, edits or LLM usage)")
        report = None
        if args.checklist:
            from mtcb_curate.cli.check import checklist

            report = checklist(session, has_ws, config=args.config, loads=False)
        if getattr(args, "llm_tags", False):
            llm_tag(args, session, has_ws)
        stats = session_stats(session, has_workspace=has_ws, config=args.config, report=report)
        try:  # files first: a closed pipe never costs them
            if args.json:
                write_json(args.json, stats.to_json())
            if args.markdown:
                from mtcb_curate.hub.card import separation_markdown

                sep = stats.separation if stats.separation.get("run") else None
                write_text(args.markdown, markdown_report(stats) + "\n" + separation_markdown(
                    sep, stats.evidence or None, heading="##", scope="pairs"))
        except OSError as exc:
            note(f"error: {exc.filename}: cannot write ({exc.strerror})")
            return 2
        emit(text_report(stats), end="")
        return 0
