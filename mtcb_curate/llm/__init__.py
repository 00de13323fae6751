"""LLM generation and semantic dedup against any OpenAI-compatible chat completions API.

The LLM proposes; the curator decides. Nothing in this package changes a dataset or a
workspace: it returns plain data (candidate QA pairs, near-duplicate clusters, reports) that the
app shows as proposals. One idea per module:

- ``errors``: the exceptions a person can act on (no message ever contains the API key);
- ``config``: ``LLMConfig`` from options, ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` and ``[llm]``;
- ``cache``: every request and response, in ``<workspace>/llm.sqlite``;
- ``client``: chat completions with our own retry loop, backoff, cancel and the cache;
- ``parsing``: a JSON object out of a model's reply (fences, leading prose);
- ``prompts``: our own prompts, written to MTCB's rules;
- ``generate``: candidate QA pairs for a window, kept only when the passage is verbatim;
- ``dedup``: semantic dedup in batches of 50 and a final pass, as near-duplicate clusters;
- ``estimate``: calls, tokens and cost before a run.

Importing this package imports neither ``openai`` nor ``tiktoken``; the modules that need them
import them when used.
"""
