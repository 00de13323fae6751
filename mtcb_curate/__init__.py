"""mtcb-curate: review MTCB QA pairs beside their source documents, then publish."""

__version__ = "0.1.0"
