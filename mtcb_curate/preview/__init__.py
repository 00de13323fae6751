"""Findability: MTCB's own scoring previewed on the curated pairs, before anything is published.

MTCB puts ALL chunks of ALL documents in one index, retrieves the top k chunks per question,
and counts a hit when a retrieved chunk's text contains the pair's passage as a plain
substring (``passage in chunk.text``; ../shared/notes/mtcb.md). This package chunks with
chonkie (``chunkers``), retrieves offline (``retrievers``: bm25s, or wordllama behind the
``dense`` extra), scores with that rule (``scoring``) and caches chunks and indexes in the
workspace (``cache``). Domain code: imports nothing from Textual.
"""
