"""The statistics as plain-text tables (the ``stats`` command) and Markdown (``--markdown``,
and the dataset card's compact section, :func:`card_markdown`).

Every label from the data (document keys, rejection reasons) is made one printable line
(``plaintext.one_line``) and, in Markdown, escaped (``plaintext.escape_md``).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from mtcb_curate.plaintext import one_line
from mtcb_curate.stats.compute import Stats

#: Documents listed by name in a table (the rest are summed in one row).
MAX_DOCUMENT_ROWS = 40


def _pct(n: int, total: int) -> str:
    return f"{n / total:.0%}" if total else "-"


def _num(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def bin_label(edges: list, i: int) -> str:
    """``"a-b"`` for bin ``i`` of ``edges`` (``"a+"`` for the open last one)."""
    lo, hi = edges[i], edges[i + 1]
    return f"{lo:,}+" if hi is None else f"{lo:,}-{hi - 1:,}"


def counts_rows(counts: dict[str, int], total: int | None = None) -> list[tuple[str, int, str]]:
    """``(name, count, share)`` rows (names as given, one printable line each)."""
    total = sum(counts.values()) if total is None else total
    return [(one_line(str(k), 40), int(n), _pct(int(n), total)) for k, n in counts.items()]


#: Windows shown per document in the per-window strip (then ``…``).
MAX_STRIP_WINDOWS = 48


def window_strip(per_window: list[int], limit: int = MAX_STRIP_WINDOWS) -> str:
    """One character per window, in document order: ``·`` no pair, ``1``-``9`` that many,
    ``+`` ten or more; at most ``limit`` windows, then ``…``."""
    strip = "".join("·" if c <= 0 else str(c) if c < 10 else "+" for c in per_window[:limit])
    return strip + ("…" if len(per_window) > limit else "")


def document_rows(stats: Stats, limit: int = MAX_DOCUMENT_ROWS) -> list[tuple[str, int, str, str]]:
    """``(document, pairs, windows with pairs / windows, per-window strip)`` rows (the strip:
    :func:`window_strip`), documents with the fewest pairs first; at most ``limit`` (then one
    ``(N more)`` row)."""
    docs = sorted(stats.coverage["per_document"], key=lambda d: (d["pairs"], d["doc"]))
    rows = []
    for d in docs[:limit]:
        pw = d["per_window"]
        cov = "-" if pw is None else f"{sum(1 for c in pw if c)}/{len(pw)}"
        rows.append((one_line(str(d["doc"]), 30), d["pairs"], cov, "-" if pw is None else window_strip(pw)))
    if len(docs) > limit:
        rest = docs[limit:]
        rows.append((f"({len(rest)} more)", sum(d["pairs"] for d in rest), "", ""))
    return rows


#: What the statistics say when no findability preview has saved scores for the workspace.
NO_PREVIEW = "no preview run yet (`mtcb-curate preview NAME`, or F in the app, saves its scores in the workspace)"


def findability_rows(stats: Stats) -> tuple[tuple[str, ...], list[tuple]] | None:
    """The findability preview's scores as ``(header, rows)``: per chunker, the pairs scored of
    the pairs, recall@k for each k, MRR at the largest k and the ceiling; None when no preview
    saved scores (say :data:`NO_PREVIEW`)."""
    f = stats.findability
    if not f.get("run"):
        return None
    ks = f["k"]
    header = ("chunker", "scored", *(f"R@{k}" for k in ks), f"MRR@{ks[-1]}", "ceiling")
    rows = []
    for c in f["chunkers"]:
        scored = f"{c['scored']:,}/{c['pairs']:,}"
        if not c["scored"]:
            rows.append((one_line(c["chunker"], 24), scored, *("-" for _ in ks), "-", "-"))
            continue
        rows.append((one_line(c["chunker"], 24), scored, *(f"{c['recall'][f'@{k}']:.1%}" for k in ks),
                     f"{c['mrr'][f'@{ks[-1]}']:.3f}", f"{c['ceiling']:.1%}"))
    return header, rows


def findability_note(stats: Stats) -> str:
    """One line under the findability table: the retriever and what the figures cover."""
    f = stats.findability
    if not f.get("run"):
        return NO_PREVIEW
    return (f"retriever {f['retriever']}; scores saved by the last preview, over the pairs it scored with "
            f"their current question and passage (edited or added since: not scored)")


def evidence_lines(stats: Stats) -> list[str]:
    """The evidence density (HiCBench's Table 1 figures, the evidence-sparse share, the share
    of each configured chunk size) as plain lines (``stats.density.density_lines``)."""
    from mtcb_curate.stats.density import density_lines

    return density_lines(stats.evidence) if stats.evidence else ["not computed"]


def separation_lines(stats: Stats) -> list[str]:
    """Whether the pairs tell the configured chunkers apart (from the preview's saved results):
    a table per two chunkers at the headline k, the plain-language lines and the pairs every /
    no chunker finds; :data:`NO_PREVIEW` when no preview saved results."""
    sep = stats.separation
    if not sep.get("run"):
        return [NO_PREVIEW]
    ks = sep["k"]
    k = 5 if 5 in ks else max(ks)
    out = [f"{sep['scored']:,} of {sep['of']:,} pairs scored by every configured chunker; retriever "
           f"{sep['retriever']}; paired bootstrap {sep['bootstrap']['resamples']:,} resamples, seed "
           f"{sep['bootstrap']['seed']}; exact McNemar"]
    if sep.get("missing"):
        out.append("no saved results for " + ", ".join(one_line(m, 24) for m in sep["missing"])
                   + " (run the preview with it)")
    rows = [(one_line(c["a"], 16), one_line(c["b"], 16), f"{100 * c['difference']:+.1f}",
             f"{100 * c['ci'][0]:.1f} to {100 * c['ci'][1]:.1f}", f"{c['a_only']:,}/{c['b_only']:,}",
             f"{c['mcnemar_p']:.2g}", "-" if c["pairs_needed"] is None else f"{c['pairs_needed']:,}")
            for c in sep["comparisons"] if c["k"] == k]
    if rows:
        need = sep["pairs_needed"]
        out += _table(("chunker a", "chunker b", "diff", "95 % CI", "a/b", "p", "need"), rows, {2, 3, 4, 5, 6})
        out.append(f"diff, CI: points of recall@{k}; a/b: pairs only a / only b finds; p: McNemar exact; need: "
                   f"pairs to detect {need['detect_points']:g} points at {need['power']:.0%} power")
    out += list(sep.get("lines") or [])
    return out


#: What the statistics say when the LLM has tagged no question of the set.
NO_LLM_TAGS = "not run (`mtcb-curate stats NAME --llm-tags` asks the LLM, one call per pair)"


def llm_tag_rows(stats: Stats) -> list[tuple[str, int, int]] | None:
    """``(name, by the rules, by the LLM)`` rows over the pairs the LLM tagged (forms, then a
    blank row, then types; the rules' counts are of the whole set); None when none was."""
    t = stats.llm_tags
    if not t.get("tagged"):
        return None
    rows = [(f"form: {k}", stats.forms.get(k, 0), n) for k, n in t["forms"].items()]
    rows += [(f"type: {k}", stats.types.get(k, 0), n) for k, n in t["types"].items()]
    return rows


def llm_tag_note(stats: Stats) -> str:
    """One line: how many pairs the LLM tagged and how often it agrees with the rules."""
    t = stats.llm_tags
    if not t.get("tagged"):
        return NO_LLM_TAGS
    usable = t["tagged"] - t["unusable"]
    return (f"{t['tagged']:,} of {t['pairs']:,} pairs tagged by the LLM ({t['unusable']:,} replies without a known "
            f"form or type); same form as the rules {_pct(t['agree']['form'], usable)}, same type "
            f"{_pct(t['agree']['type'], usable)}")


def _table(header: tuple[str, ...], rows: list[tuple], right: set[int] = frozenset()) -> list[str]:
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for r in cells:
        out.append("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return out


def _when(ts: float | None) -> str:
    return "-" if ts is None else _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def text_report(stats: Stats) -> str:
    """Every statistic as plain-text tables (what ``mtcb-curate stats`` prints)."""
    s = stats
    total = s.scope["pairs"]
    cov = s.coverage
    lines = [f"statistics of {one_line(s.scope['dataset'], 40)}: {total:,} pairs"
             + (" (a subset)" if s.scope["subset"] else ""), ""]
    lines.append(f"coverage: {cov['documents']:,} documents, {len(cov['documents_without_pairs']):,} without pairs; "
                 f"{cov['windows']:,} windows of {cov['window_tokens']:,} tokens, "
                 f"{cov['windows_without_pairs']:,} without pairs; {cov['unplaced_pairs']:,} pairs not placed "
                 f"(passage not located or windows unknown); {cov['unlinked_pairs']:,} pairs on no document")
    lines += _table(("document", "pairs", "windows", "pairs per window (· none, + 10 or more)"), document_rows(s), {1})
    if cov["documents_without_pairs"]:
        keys = [one_line(str(k), 30) for k in cov["documents_without_pairs"][:20]]
        more = len(cov["documents_without_pairs"]) - len(keys)
        lines.append("without pairs: " + ", ".join(keys) + (f" and {more} more" if more > 0 else ""))
    for unit in ("chars", "tokens"):
        h = s.length[unit]
        if h is None:  # left uncounted (compute_stats(count_tokens=False))
            lines += ["", f"passage length in tokens: not counted ({s.pending['tokens']:,} passages)"]
            continue
        p = h["percentiles"]
        lines += ["", f"passage length in {'characters' if unit == 'chars' else 'tokens'}: "
                  + ", ".join(f"{k} {_num(p[k])}" for k in ("min", "p5", "p25", "p50", "p75", "p95", "max", "mean"))]
        marks: dict[int, list[str]] = {}
        for m in h["marks"]:
            marks.setdefault(m["bin"], []).append(m["label"])
        rows = []
        edges = h["edges"]
        for i, n in enumerate(h["counts"]):
            rows.append((bin_label(edges, i), n, _pct(n, total), "#" * round(30 * n / max(1, max(h["counts"]))),
                         ", ".join(marks.get(i, ()))))
        lines += _table(("length", "pairs", "share", "", "marks"), rows, {1, 2})
        lines.append("longer than a chunk of " + ", ".join(f"{k:,}: {v:,}" for k, v in h["longer_than"].items()))
    for title, counts in (("question forms", s.forms), ("question types", s.types), ("verdicts", s.verdicts),
                          ("statuses", s.statuses), ("rejection reasons", s.rejection_reasons),
                          ("edits by kind (history, undone ones excluded)", s.edits)):
        lines += ["", title + ":"]
        lines += _table(("", "pairs", "share"), counts_rows(counts, None), {1, 2}) if counts else ["  none"]
    lines += ["", "question forms and types by the LLM:"]
    rows = llm_tag_rows(s)
    if rows is not None:
        lines += _table(("", "rules", "LLM"), rows, {1, 2})
    lines.append(("  " if rows is None else "") + llm_tag_note(s))
    lines += ["", "findability preview:"]
    table = findability_rows(s)
    if table is not None:
        lines += _table(table[0], table[1], set(range(1, len(table[0]))))
    lines.append(("  " if table is None else "") + findability_note(s))
    lines += ["", "evidence density (HiCBench):"] + ["  " + x for x in evidence_lines(s)]
    lines += ["", "does this set separate the chunkers? (preview's saved results):"]
    lines += ["  " + x for x in separation_lines(s)]
    lines += ["", "checklist:"]
    if s.checklist is None:
        lines.append("  not run")
    else:
        lines += _table(("check", "status", "pairs"), [(c["id"], c["status"], c["pairs"]) for c in s.checklist], {2})
    pace = s.pace
    rate = pace["rate_per_hour"]
    lines += ["", f"review pace: {pace['decisions']:,} decisions, first {_when(pace['first'])}, last "
                  f"{_when(pace['last'])}; {'-' if rate is None else f'{rate:,.0f}'} pairs per hour lately"]
    if pace["per_day"]:
        lines += _table(("day (UTC)", "decisions"), [(d["day"], d["decisions"]) for d in pace["per_day"][-14:]], {1})
    llm = s.llm
    lines += ["", "LLM: not recorded (no LLM cache in the workspace)" if not llm["recorded"] else
              f"LLM: {llm['calls']:,} calls, {llm['prompt_tokens']:,} prompt tokens, "
              f"{llm['completion_tokens']:,} completion tokens, cost "
              + ("unknown (no price set)" if llm["cost_usd"] is None else f"${llm['cost_usd']:,.4f}")]
    lines += ["", "balance: " + ("within the targets" if not s.balance else "; ".join(s.balance))]
    return "\n".join(lines) + "\n"


def _md_table(header: tuple[str, ...], rows: list[tuple]) -> list[str]:
    from mtcb_curate.plaintext import escape_md

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(escape_md(str(c)) for c in r) + " |" for r in rows]
    return out


def card_markdown(stats: Stats, heading: str = "###") -> str:
    """The card's compact section: counts per document, length percentiles, question forms."""
    s = stats
    lines = [f"{heading} Statistics", "",
             f"{s.scope['pairs']:,} pairs on {s.coverage['documents']:,} documents; "
             f"{len(s.coverage['documents_without_pairs']):,} documents without a pair.", ""]
    docs = sorted(s.coverage["per_document"], key=lambda d: (-d["pairs"], d["doc"]))
    rows = [(one_line(str(d["doc"]), 40), d["pairs"]) for d in docs[:MAX_DOCUMENT_ROWS]]
    if len(docs) > MAX_DOCUMENT_ROWS:
        rest = docs[MAX_DOCUMENT_ROWS:]
        rows.append((f"({len(rest)} more documents)", sum(d["pairs"] for d in rest)))
    lines += ["<details><summary>Pairs per document</summary>", ""] + _md_table(("document", "pairs"), rows)
    lines += ["", "</details>", ""]
    prow = []
    for unit, name in (("chars", "characters"), ("tokens", "tokens (cl100k_base)")):
        if s.length[unit] is None:
            continue
        p = s.length[unit]["percentiles"]
        prow.append((name, *(_num(p[k]) for k in ("min", "p25", "p50", "p75", "p95", "max"))))
    lines += ["Passage length:", ""] + _md_table(("unit", "min", "p25", "median", "p75", "p95", "max"), prow)
    total = sum(s.forms.values())
    lines += ["", "Question forms (by our rules):", ""]
    lines += _md_table(("form", "pairs", "share"), [r for r in counts_rows(s.forms, total) if r[1]])
    return "\n".join(lines) + "\n"


def markdown_report(stats: Stats) -> str:
    """Every statistic as Markdown: the card's section, then the other tables."""
    s = stats
    lines = [f"# Statistics of {one_line(s.scope['dataset'], 60)}", "", card_markdown(s, "##").rstrip(), ""]
    for title, counts in (("Question types", s.types), ("Verdicts", s.verdicts), ("Statuses", s.statuses),
                          ("Rejection reasons", s.rejection_reasons), ("Edits by kind", s.edits)):
        lines += [f"## {title}", ""] + (_md_table(("", "pairs", "share"), counts_rows(counts)) if counts else ["none"])
        lines.append("")
    rows = llm_tag_rows(s)
    lines += ["## Question forms and types by the LLM", ""] + ([] if rows is None else
                                                             _md_table(("", "rules", "LLM"), rows) + [""])
    lines += [llm_tag_note(s).replace("`", "") if rows is None else llm_tag_note(s), ""]
    table = findability_rows(s)
    lines += ["## Findability preview", ""] + ([] if table is None else _md_table(*table) + [""])
    lines += [findability_note(s).replace("`", "") if table is None else findability_note(s), ""]
    if s.checklist is not None:
        lines += ["## Checklist", ""] + _md_table(("check", "status", "pairs"),
                                                 [(c["id"], c["status"], c["pairs"]) for c in s.checklist]) + [""]
    lines += ["## Balance", "", "within the targets" if not s.balance else "\n".join(f"- {b}" for b in s.balance), ""]
    return "\n".join(lines)
