"""The review screen's actions that change the pair through another screen or a question (edit,
repairs, note, a pair by hand, shrink, chunk_index, bulk) or open one (clusters, the checklist,
statistics, the team, the LLM's screens, publish, help). Each hands what the curator chose to the
review controller, whose ``Outcome`` the screen presents (``ReviewScreen._apply``); none writes
to the session itself."""

from __future__ import annotations

from textual import work
from textual.worker import get_current_worker

from mtcb_curate.app import bulk as app_bulk
from mtcb_curate.app.controller import ReviewController
from mtcb_curate.errors import CurateError
from mtcb_curate.tui.screens.bulk import BulkPlanScreen, BulkScreen
from mtcb_curate.tui.screens.checklist import ChecklistScreen
from mtcb_curate.tui.screens.cluster import ClusterScreen
from mtcb_curate.tui.screens.confirm import ConfirmScreen
from mtcb_curate.tui.screens.dedup import DedupScreen
from mtcb_curate.tui.screens.edit import EditScreen
from mtcb_curate.tui.screens.generate_more import GenerateMoreScreen
from mtcb_curate.tui.screens.hand_pair import HandPairScreen
from mtcb_curate.tui.screens.help import HelpScreen
from mtcb_curate.tui.screens.note import NoteScreen
from mtcb_curate.tui.screens.publish import PublishScreen
from mtcb_curate.tui.screens.regenerate import RegenerateScreen
from mtcb_curate.tui.screens.reject import CANCEL, RejectScreen
from mtcb_curate.tui.screens.review_keys import BINDINGS
from mtcb_curate.tui.screens.review_rows import FAIL_MARK, MARK_LEGEND, UNFINDABLE_MARK
from mtcb_curate.tui.screens.search import SearchScreen
from mtcb_curate.tui.screens.select_span import SelectSpanScreen
from mtcb_curate.tui.screens.semantic_dedup import SemanticDedupScreen
from mtcb_curate.tui.screens.shared_passage import SharedPassageScreen
from mtcb_curate.tui.screens.shrink import ShrinkScreen
from mtcb_curate.tui.widgets.source_viewer import SourceViewer


class Dialogs:
    """Mixin of the review screen (before ``Screen``): actions through other screens. Uses the
    screen's ``controller``, ``_apply``, ``_writable_pair``, ``_shown_doc`` and ``curate_app``."""

    controller: ReviewController

    # -- edit and search --------------------------------------------------------------------------

    def action_edit(self) -> None:
        """Edit the question, answer or passage; an edited passage is re-checked against the document."""
        pid = self._writable_pair()
        if pid is None:
            return
        c = self.controller

        def done(changes: dict[str, str] | None) -> None:
            if changes:  # saved by ``EditScreen`` through ``save`` (a failure keeps it open)
                self._apply(c.edited(pid))

        self.app.push_screen(EditScreen(c.session.view(pid), save=lambda ch: c.save_edit(pid, ch)), done)

    def action_search(self) -> None:
        """Find the next pair whose texts, document key or id contain a query."""

        def done(query: str | None) -> None:
            if query is not None:
                self._apply(self.controller.search(query))

        self.app.push_screen(SearchScreen(self.controller.last_query), done)

    # -- repairs: snap, trim, select ----------------------------------------------------------------

    def action_snap(self) -> None:
        """Replace the passage with the located source text (normalized or fuzzy match)."""
        pid = self._writable_pair()
        if pid is not None:
            self._apply(self.controller.snap(pid))

    def action_trim(self) -> None:
        """Strip whitespace and punctuation from both ends of the passage."""
        pid = self._writable_pair()
        if pid is not None:
            self._apply(self.controller.trim(pid))

    def _shown_document(self, pid: int):
        """Pair ``pid``'s document when it is the one shown in the source, else None (said)."""
        doc = self.controller.session.dataset.document_for(self.controller.session.pairs[pid])
        if doc is None or self._shown_doc != doc.key:
            self.notify("This pair's document is not in the corpus.", severity="warning")
            return None
        return doc

    def _picked_span(self, doc, start: tuple[int, int] | None) -> tuple[int, int]:
        """Where a span selection starts: the mouse selection, else ``start``, else 200
        characters from the source's top line."""
        viewer = self.query_one(SourceViewer)
        picked = viewer.selection_range() or start
        if picked is None:
            top = viewer.offset_of_line(viewer.scroll_offset.y)
            picked = (top, min(len(doc.text), top + 200))
        return picked

    def action_select_span(self) -> None:
        """Pick a span of the source with the keys (or the mouse selection) as the passage."""
        pid = self._writable_pair()
        if pid is None or (doc := self._shown_document(pid)) is None:
            return
        picked = self.query_one(SourceViewer).selection_range()
        if picked is None:  # the located passage, else the source's top lines
            picked = self._picked_span(doc, self.controller.select_start(pid))

        def done(span: tuple[int, int] | None) -> None:
            if span is not None:
                self._apply(self.controller.select(pid, *span))

        self.app.push_screen(SelectSpanScreen(self.query_one(SourceViewer), *picked), done)

    # -- notes and hand-written pairs ---------------------------------------------------------------

    def action_note(self) -> None:
        """Write, change or remove the current pair's free-text note (undoable)."""
        pid = self._writable_pair()
        if pid is None:
            return

        def done(text: str | None) -> None:
            if text is not None:
                self._apply(self.controller.set_note(pid, text))

        self.app.push_screen(NoteScreen(pid, self.controller.session.note(pid)), done)

    def action_hand_pair(self) -> None:
        """Write a new pair by hand on the current document: select the passage in the source
        (as ``m``), then type the question and the answer; added undecided, verified and queued."""
        pid = self._writable_pair()
        if pid is None or (doc := self._shown_document(pid)) is None:
            return
        picked = self._picked_span(doc, None)

        def typed(span: tuple[int, int], answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self._apply(self.controller.add_hand_pair(doc.key, span[0], span[1], *answer))

        def selected(span: tuple[int, int] | None) -> None:
            if span is None or span[1] <= span[0]:
                return
            self.app.push_screen(HandPairScreen(doc.key, doc.text[span[0]:span[1]]),
                                 lambda answer: typed(span, answer))

        self.app.push_screen(SelectSpanScreen(self.query_one(SourceViewer), *picked), selected)

    # -- shrink: a shorter part of the passage -------------------------------------------------------

    def action_shrink(self) -> None:
        """Propose the shortest run of whole sentences, lines or table rows of the passage that
        still holds the answer's figures and words (offline, at once); accept, edit or refuse."""
        pid = self._writable_pair()
        if pid is None:
            return
        proposal, out = self.controller.propose_shrink(pid, self.curate_app.config_path,
                                                       outcome=self.shrink_outcome_ahead(pid))
        if proposal is None:
            self._apply(out)
            return
        self.app.push_screen(ShrinkScreen(self.controller.session, pid, proposal), lambda c: self._shrunk(pid, c))

    def action_shrink_llm(self) -> None:
        """Ask the LLM for the minimal exact quote of the passage that supports the answer (in a
        worker, esc cancels); accept, edit or refuse it."""
        pid = self._writable_pair()
        if pid is None:
            return
        self.app.push_screen(ShrinkScreen(self.controller.session, pid), lambda c: self._shrunk(pid, c))

    def _shrunk(self, pid: int, choice: tuple[str, str] | None) -> None:
        """Back from the shrink proposal: apply it (undoable), or open the edit dialog with it."""
        if choice is None:
            return
        what, text = choice
        if what == "edit":
            self._edit_with_passage(pid, text)
            return
        self._apply(self.controller.apply_shrink(pid, text))

    def _edit_with_passage(self, pid: int, passage: str) -> None:
        """The edit dialog with ``passage`` in place of the current passage (saved only with ctrl+s)."""
        from mtcb_curate.tui.screens.shrink import PrefilledEditScreen

        c = self.controller
        view = c.session.view(pid)

        def done(changes: dict[str, str] | None) -> None:
            if changes:
                self._apply(c.edited(pid))

        self.app.push_screen(PrefilledEditScreen(view, passage, save=lambda ch: c.save_shrunk_edit(pid, ch, view.passage)),
                             done)

    # -- chunk_index repair -------------------------------------------------------------------------

    def action_repair_chunk_index(self) -> None:
        """Set this pair's chunk_index to the MTCB window holding its passage (undoable)."""
        pid = self._writable_pair()
        if pid is not None:
            self._apply(self.controller.repair_chunk_index(pid))

    def action_repair_all_chunk_indexes(self) -> None:
        """Repair every pair's chunk_index: find them in a worker, say how many, ask once, then
        apply them as one undoable step."""
        if self._writable_pair() is None:
            return
        self.notify("Looking for chunk_index values whose window does not hold the passage...", timeout=3)
        self.run_worker(self._plan_chunk_indexes(), group="chunk_index", exclusive=True)

    async def _plan_chunk_indexes(self) -> None:
        import asyncio

        c = self.controller
        try:
            todo, note = await asyncio.to_thread(c.plan_chunk_index_repairs)
        except CurateError as exc:
            self.notify(f"chunk_index: {exc}", severity="error", timeout=10, markup=False)
            return
        if not todo:
            self.notify(f"Every chunk_index already holds its passage{note}.", timeout=4, markup=False)
            return

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify("chunk_index repair cancelled: nothing changed.", timeout=2)
                return
            self._apply(c.repair_all_chunk_indexes(todo, note))

        self.app.push_screen(ConfirmScreen(
            f"Set chunk_index to the window holding the passage on {len(todo):,} pairs{note}? "
            f"y/enter: yes · esc: no (one u undoes all)"), done)

    def toggle_chunk_index_meaning(self) -> None:
        """Switch what the dataset's chunk_index means: MTCB's window (checked by ``links``) or
        something else (ignored); kept in the workspace."""
        if self._writable_pair() is not None:
            self._apply(self.controller.toggle_chunk_index_meaning())

    # -- bulk actions -------------------------------------------------------------------------------

    def _bulk_ids(self, ids: list[int] | None = None) -> list[int] | None:
        """``ids`` (default: the view's) when a bulk action may run on them, else None (said)."""
        refused = self.controller.writable()
        if refused is not None:
            self._apply(refused)
            return None
        ids = list(self.controller.queue.ids) if ids is None else ids
        if not ids:
            self.notify("No pair in this view.", timeout=3)
            return None
        return ids

    def action_bulk(self) -> None:
        """A bulk action over every pair of the view (menu with counts; asks once; one undo)."""
        ids = self._bulk_ids()
        if ids is None:
            return

        def picked(action: str | None) -> None:
            if action is not None:
                self.run_bulk(action, ids)

        rejects = {action: app_bulk.rejects(self.controller.session, action, ids) for action in app_bulk.ACTIONS}
        self.app.push_screen(BulkScreen(len(ids), self.controller.view_scope(), self.controller.bulk_counts(ids),
                                        rejects), picked)

    def run_bulk(self, action: str, ids: list[int] | None = None) -> None:
        """Bulk ``action`` (``app.bulk.ACTIONS``) over ``ids`` (default: the view): a reject asks
        its reason first; then the count, one confirmation, ONE undo step (the palette's entries)."""
        ids = self._bulk_ids(ids)
        if ids is None:
            return
        if action == app_bulk.REJECT:
            def reason(r: str | None) -> None:
                if r != CANCEL:
                    self._plan_bulk(action, ids, r)
            self.app.push_screen(RejectScreen(None, count=len(ids)), reason)
            return
        self._plan_bulk(action, ids, None)

    def _plan_bulk(self, action: str, ids: list[int], reason: str | None) -> None:
        if app_bulk.ACTIONS[action][1]:
            self.notify(f"Counting what {action} changes over {len(ids):,} pairs ...", timeout=3)
            self._plan_bulk_worker(action, ids, reason)
            return
        self._confirm_bulk(self.controller.plan_bulk(action, ids, reason, self.curate_app.config_path))

    @work(thread=True, exclusive=True, group="bulk_plan", exit_on_error=False)
    def _plan_bulk_worker(self, action: str, ids: list[int], reason: str | None) -> None:
        worker = get_current_worker()
        try:
            p = self.controller.plan_bulk(action, ids, reason, self.curate_app.config_path,
                                          cancelled=lambda: worker.is_cancelled,
                                          chunks=self._chunks_store() if action == app_bulk.FIT else None)
        except Exception as exc:  # noqa: BLE001 - reported, nothing written
            self.app.call_from_thread(self.notify, f"Bulk {action} failed: {exc}", severity="error",
                                      timeout=10, markup=False)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._confirm_bulk, p)

    def _confirm_bulk(self, p) -> None:
        label = app_bulk.ACTIONS[p.action][0]
        n = len(p.touched)
        if not n and not p.skipped:
            self.notify(f"Bulk {label}: no pair of this view to change.", timeout=5, markup=False)
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._apply(self.controller.apply_bulk(p))

        if p.skipped:
            self.app.push_screen(BulkPlanScreen(label, n, len(p.ids), p.skipped), done)
            return

        reason = f" (reason: {p.changes[p.touched[0]][1]})" if p.action == app_bulk.REJECT and p.changes[
            p.touched[0]][1] else ""
        self.app.push_screen(ConfirmScreen(f"{label}{reason}: {n:,} of the {len(p.ids):,} pairs of this view? "
                                           "a/enter yes, esc no"), done)

    # -- near-duplicates ----------------------------------------------------------------------------

    def action_cluster(self) -> None:
        """Open the current pair's near-duplicate cluster side by side."""
        c = self.controller
        pid = c.current
        if pid is None:
            return
        cluster = c.cluster_index.get(pid)
        if cluster is None:
            msg = "not in a near-duplicate cluster" if c.clusters_ready else "still looking for near-duplicates…"
            self.notify(f"#{pid}: {msg}", timeout=3)
            return
        screen = ClusterScreen(c.session, cluster, chosen_id=pid)

        def done(opened: int | None) -> None:
            if screen.changed:  # kept one or "not duplicates": the cluster is settled now,
                c.forget_duplicates(cluster.ids)  # before the set-wide checks run again
            self._dialog_closed(opened)

        self.app.push_screen(screen, done)

    def action_dedup(self) -> None:
        """Every unresolved near-duplicate cluster, largest first."""
        c = self.controller
        screen = DedupScreen(c.session, threshold=c.dedup_threshold)

        def done(pid: int | None) -> None:
            c.dedup_threshold = screen.threshold
            self._dialog_closed(pid)

        self.app.push_screen(screen, done)

    def action_shared_passage(self) -> None:
        """Every shared-passage group (different questions on the same or overlapping passage);
        ``n`` there marks one "distinct questions on shared evidence"."""
        c = self.controller
        self.app.push_screen(SharedPassageScreen(c.session, threshold=c.dedup_threshold), self._dialog_closed)

    def _dialog_closed(self, pid: int | None) -> None:
        """Back from a screen that may have changed statuses or added pairs (clusters, dedup, the
        LLM's): the queue is rebuilt; ``pid`` is shown if given."""
        self._apply(self.controller.dialog_closed(pid))

    # -- the checklist, statistics, the team --------------------------------------------------------

    def action_gate(self) -> None:
        """Run the quality checklist; a pair picked there is shown here."""
        self.app.push_screen(ChecklistScreen(self.controller.session), self.goto)

    def action_stats(self) -> None:
        """The statistics screen over the pairs of the current view: all pairs, or the ``v``
        status and the filter bar's criteria."""
        from mtcb_curate.tui.screens.stats import StatsScreen

        c = self.controller
        ids, scope = c.stats_scope()
        verdicts, session = c.verdicts, c.session

        def results() -> dict:
            return verdicts.cached_many(range(len(session)) if ids is None else ids)

        self.app.push_screen(StatsScreen(session, ids, scope=scope, results=results))

    def action_team(self) -> None:
        """The team screen (a shared workspace): counts, pace, agreement, and the conflicts a
        lead decides; enter on a conflict shows that pair here."""
        from mtcb_curate.app import team
        from mtcb_curate.tui.screens.team import TeamScreen

        c = self.controller
        if not team.is_team(c.session):
            self.notify("One curator here: a team shares a PostgreSQL workspace (--workspace postgresql://...).",
                        timeout=5, markup=False)
            return
        # The queue is built again: the lead's decisions and other curators' change its marks.
        self.app.push_screen(TeamScreen(c.session), lambda pid: self._apply(c.team_closed(pid)))

    # -- LLM: regenerate, generate more, semantic dedup ----------------------------------------------

    def action_regenerate(self) -> None:
        """Ask the LLM for candidates to replace the current pair (r replace, a add, o keep)."""
        pid = self._writable_pair()
        if pid is not None:
            self.app.push_screen(RegenerateScreen(self.controller.session, pid), self._dialog_closed)

    def action_generate_more(self) -> None:
        """Ask the LLM for N new pairs for the current pair's document."""
        pid = self._writable_pair()
        if pid is not None:
            session = self.controller.session
            self.app.push_screen(GenerateMoreScreen(session, session.pairs[pid].doc_key), self._dialog_closed)

    def action_generate_view(self) -> None:
        """Ask the LLM for new pairs for every document of the current view (the palette's
        entry; ``app.generation``, as ``generate --all --docs`` does)."""
        from mtcb_curate.tui.screens.corpus_generate import CorpusGenerateScreen

        refused = self.controller.writable()
        if refused is not None:
            self._apply(refused)
            return
        keys = self.controller.view_doc_keys()
        self.app.push_screen(CorpusGenerateScreen(self.controller.session, keys), self._dialog_closed)

    def action_llm_attempts(self) -> None:
        """List every LLM reply refused this session, with its full reasons and quote."""
        from mtcb_curate.tui.screens.attempts import AttemptsScreen

        self.app.push_screen(AttemptsScreen(self.curate_app.attempt_log.refused()))

    def action_semantic_dedup(self) -> None:
        """Run the LLM's semantic dedup over every pair; its clusters join the near-duplicates."""
        refused = self.controller.writable()
        if refused is not None:
            self._apply(refused)
            return
        self.app.push_screen(SemanticDedupScreen(self.controller.session), lambda _: self._find_clusters())

    # -- publish, export, help ----------------------------------------------------------------------

    def action_publish(self) -> None:
        """Publish to the Hub behind the checklist gate: the changes first, then a confirmation."""
        self.app.push_screen(PublishScreen(self.controller.session))

    def action_export(self) -> None:
        """Write every pair's decision and current texts as JSON Lines to ``export.jsonl`` in
        the workspace folder (as ``mtcb-curate export`` does; the command palette's entry)."""
        from mtcb_curate.app.export import export_jsonl

        session = self.controller.session
        out = session.workspace.path / "export.jsonl"
        try:
            n = export_jsonl(session, out)
        except (CurateError, OSError) as exc:
            self.notify(f"Export failed: {exc}", severity="error", timeout=10, markup=False)
            return
        self.notify(f"Exported {n:,} pairs to {out}", timeout=6, markup=False)

    def action_help(self) -> None:
        """Show every key, as bound now."""
        from mtcb_curate.config import default_config_path

        keymap = self.curate_app.keymap
        rows = []
        for b in BINDINGS:
            keys = keymap.get(b.id, b.key) if b.id else b.key
            rows.append((keys.replace("question_mark", "?").replace("slash", "/"), b.id or "", b.description))
        rows.append(("1-7 / enter", "", "in the reject dialog: reason / no reason"))
        rows.append(("ctrl+p", "", "command palette"))
        rows.append((FAIL_MARK, "", "in the queue: the pair would fail a check if accepted (the QA panel "
                                    "lists each problem with the key that fixes it)"))
        rows.append((UNFINDABLE_MARK, "", "in the queue: no configured chunker holds the passage wholly "
                                          "(F computes the findability; the QA panel's ◇ lines say where)"))
        hint = f"Rebind keys in {default_config_path()} under [keys], e.g.  accept = \"y\""
        self.app.push_screen(HelpScreen(rows, hint, MARK_LEGEND))
