"""Former home of the checklist, kept so old imports keep working: everything is re-exported
from ``mtcb_curate.checks`` (see ``checks.gate`` for the checklist itself)."""

from mtcb_curate.checks import *  # noqa: F401,F403
from mtcb_curate.checks import __all__  # noqa: F401
