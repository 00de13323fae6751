"""Near-duplicate QA pairs: find them across a whole dataset and group them into clusters.

Two QA pairs are linked when (``threshold`` defaults to :data:`DEFAULT_THRESHOLD`, 85):

==========================================  =================================================
reason                                      rule
==========================================  =================================================
``identical question``                      same document key, same normalized question
``identical question across documents``     different document keys, same normalized
                                            question (always raised, whatever the threshold)
``similar question``                        question similarity >= ``threshold`` and
                                            ``content_compatible`` content words (the same,
                                            or one's within the other's with at most
                                            ``MAX_EXTRA_WORDS`` more), within a
                                            document, or across documents between questions
                                            that do not name their document (none of their
                                            words is found in the questions of exactly one
                                            document, in at least two of them)
``same answer, similar question``           same document key, same normalized non-empty
                                            answer, question similarity >= ``threshold -
                                            ANSWER_MARGIN``
``LLM: semantic duplicate``                 the LLM's semantic dedup said so (``extra_links``)
``same passage``                            same document key, same supporting passage
                                            (whitespace runs collapsed), or the same located
                                            span
``overlapping passage``                     same document key, the passages overlap by at
                                            least ``MIN_OVERLAP_CHARS`` characters and at
                                            least half of the shorter one
==========================================  =================================================

Two questions whose numbers differ ("... in fiscal 2021?" / "... in fiscal 2022?") are never
"similar" (``question_numbers``: the numbers as a sorted list, as the score ignores word order),
nor two that ask different things about one subject: another wh- word ("When did Kublai move
the capital?" / "Where did ..."; "in what year" counts as "when") or opposite words ("before" /
"after", ``OPPOSITES``), compared by ``asked_key``; such pairs may share evidence (a
shared-passage group), never a near-duplicate cluster.
Question similarity is ``question_similarity``: rapidfuzz ``token_sort_ratio`` of the
normalized questions with their interrogative phrases written as one word (``asked``: "what
number of" is "how many"). Clusters are stars around a centre (star clustering, every member linked directly
to its centre) of the links that say two pairs ask the same question (``QUESTION_REASONS``:
the first five), minus the pairs a curator marked "not duplicates". Shared evidence is not a duplicate: several different questions may rest on one
sentence. The passage rules (``PASSAGE_REASONS``) give separate shared-passage groups
(``find_groups``, ``find_shared_passages``: pairs linked only by their passages), which never
glue clusters together; a curator marks a group "distinct questions on shared evidence".

Modules: :mod:`~mtcb_curate.neardup.similarity` (normalization, scoring, thresholds, reasons),
:mod:`~mtcb_curate.neardup.blocking` (the search, :func:`find_clusters`),
:mod:`~mtcb_curate.neardup.clusters` (items, clusters, settling them). The public names are
re-exported here. Why this scorer and these thresholds, and what the search costs:
``docs/neardup.md``.
"""

from mtcb_curate.neardup.blocking import (
    _Prepared,
    LinkSet,
    find_clusters,
    find_groups,
    find_shared_passages,
    screen_cutoff_for,
    search_links,
)
from mtcb_curate.neardup.clusters import (
    Cluster,
    Item,
    LLM_CLUSTERS_KEY,
    Link,
    cluster_index,
    clusters_json,
    duplicate_reason,
    is_resolved,
    items_from_dataset,
    keep_one,
    kept_id_of,
    llm_groups,
    llm_links,
    not_duplicate_pairs,
    passage_spans,
    split_pairs,
    unresolved,
)
from mtcb_curate.neardup.similarity import (
    ANSWER_MARGIN,
    BLOCK_CELLS,
    CLIQUE_MAX,
    DEFAULT_THRESHOLD,
    DUPLICATE_REASON_FORMAT,
    EXACT_MAX_PAIRS,
    MIN_OVERLAP_CHARS,
    PAIRWISE_MAX,
    PASSAGE_REASONS,
    PREFILTER_MARGIN,
    QUESTION_REASONS,
    REASON_IDENTICAL,
    REASON_IDENTICAL_ACROSS,
    REASON_LLM,
    REASON_OVERLAP,
    REASON_SAME_ANSWER,
    REASON_SAME_PASSAGE,
    REASON_SIMILAR,
    REASONS,
    SAME_ASKING,
    SCORED_CHARS,
    FUNCTION_WORDS,
    MAX_EXTRA_WORDS,
    MIN_SHARED_WORDS,
    content_compatible,
    fuzz,
    asked,
    asked_key,
    OPPOSITES,
    normalize,
    question_numbers,
    question_similarity,
    scored_text,
)

__all__ = [
    "ANSWER_MARGIN", "BLOCK_CELLS", "CLIQUE_MAX", "DEFAULT_THRESHOLD", "DUPLICATE_REASON_FORMAT",
    "EXACT_MAX_PAIRS", "FUNCTION_WORDS", "LLM_CLUSTERS_KEY", "MAX_EXTRA_WORDS", "MIN_SHARED_WORDS", "MIN_OVERLAP_CHARS", "PAIRWISE_MAX", "PASSAGE_REASONS",
    "PREFILTER_MARGIN", "QUESTION_REASONS", "REASON_IDENTICAL",
    "REASON_IDENTICAL_ACROSS", "REASON_LLM", "REASON_OVERLAP", "REASON_SAME_ANSWER",
    "REASON_SAME_PASSAGE", "REASON_SIMILAR", "REASONS", "SAME_ASKING", "SCORED_CHARS", "Cluster", "Item", "Link", "LinkSet",
    "asked", "cluster_index", "clusters_json", "content_compatible", "duplicate_reason", "find_clusters", "find_groups",
    "find_shared_passages", "is_resolved", "items_from_dataset", "keep_one", "kept_id_of", "llm_groups",
    "llm_links", "normalize", "not_duplicate_pairs",
    "passage_spans", "split_pairs", "asked_key", "OPPOSITES", "question_numbers", "question_similarity", "screen_cutoff_for", "scored_text", "search_links", "unresolved",
]
