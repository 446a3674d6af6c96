"""The theorem-like blocks of a preprint's PDF: what the paper reader extracts from instead of the abstract.

This is the optional `pdf` extra (pypdf). `theorem_excerpt` fetches the arXiv PDF through the
same polite, retried HTTP layer as the search tools, keeps each "Theorem 2.1." / "Lemma 3." /
"Proposition" / "Corollary" / "Definition" block up to the next such heading, a proof, a remark
or a section heading, and caps the whole excerpt. Anything that goes wrong answers None: the
reader then works from the abstract, as it would without the extra.
"""

from __future__ import annotations

import io
import logging
import re

from lemmata.artifacts import PaperRecord
from lemmata.settings import Settings
from lemmata.tools.http_fetch import PROCESS_RATE_LIMITER, RateLimiter, RequestPolicy, ServiceError, fetch
from lemmata.tools.preprint_search import ARXIV

MAX_EXCERPT_CHARS = 6000
MAX_BLOCK_CHARS = 1500
#: The statements sit in the body; long appendices and reference lists add time, not theorems.
MAX_PAGES = 40
MAX_PDF_BYTES = 40_000_000

_KINDS = r"Theorem|Lemma|Proposition|Corollary|Definition"
_NUMBER = r"(?:[A-Z]?\d+|[A-Z])(?:\.\d+)*"  # 2, 2.1, A, A.1, S3
# At a line start: the kind, an optional number, an optional "(name)", then "." or ":".
_BLOCK_HEADING = re.compile(
    rf"^[ \t]*(?:{_KINDS})(?:[ \t]+{_NUMBER})?(?:[ \t]*\([^()\n]{{1,120}}\))?[ \t]*[.:]", re.MULTILINE
)
# Where a statement is over: a proof, a remark or example, or a numbered section title line.
_BLOCK_END = re.compile(
    r"^[ \t]*(?:(?:Proof|Remark|Example|Note)\b[^\n]{0,40}?[.:]|\d+(?:\.\d+)*\.?[ \t]+[A-Z][^\n.]{2,80}$|References$)",
    re.MULTILINE,
)

log = logging.getLogger(__name__)


def theorem_excerpt(record: PaperRecord, settings: Settings, limiter: RateLimiter = PROCESS_RATE_LIMITER) -> str | None:
    """The theorem-like blocks of the record's arXiv PDF (at most MAX_EXCERPT_CHARS), or None."""
    if not record.id.startswith("arXiv:"):
        return None
    url = f"{settings.PDF_BASE_URL.rstrip('/')}/{record.id.removeprefix('arXiv:')}"
    try:
        fetched = fetch(ARXIV, url, RequestPolicy.from_settings(settings), limiter=limiter, max_bytes=MAX_PDF_BYTES)
    except ServiceError as exc:
        log.info("no PDF excerpt for %s: %s", record.id, exc)
        return None
    text = pdf_text(fetched.body)
    return extract_theorem_blocks(text) if text else None


def pdf_text(pdf: bytes, max_pages: int = MAX_PAGES) -> str | None:
    """The text of the first pages of a PDF, or None when pypdf is missing or cannot read it."""
    try:
        from pypdf import PdfReader  # the optional `pdf` extra
    except ImportError:
        return None
    try:
        reader = PdfReader(io.BytesIO(pdf))
        return "\n".join(page.extract_text() or "" for page in reader.pages[:max_pages])
    except Exception as exc:  # noqa: BLE001 - any byte string can arrive; pypdf raises many kinds on bad ones
        log.info("unreadable PDF: %s: %s", type(exc).__name__, exc)
        return None


def extract_theorem_blocks(
    text: str, max_chars: int = MAX_EXCERPT_CHARS, max_block: int = MAX_BLOCK_CHARS
) -> str | None:
    """Each theorem-like block of `text`, whitespace collapsed, joined until `max_chars`; None if none."""
    headings = [match.start() for match in _BLOCK_HEADING.finditer(text)]
    blocks = []
    for index, start in enumerate(headings):
        next_heading = headings[index + 1] if index + 1 < len(headings) else len(text)
        end_mark = _BLOCK_END.search(text, start + 1, next_heading)
        end = min(next_heading, end_mark.start() if end_mark else next_heading, start + max_block)
        blocks.append(" ".join(text[start:end].split()))
    excerpt = ""
    for block in blocks:
        joined = f"{excerpt}\n\n{block}" if excerpt else block
        if len(joined) > max_chars:
            # Whole blocks only, unless even the first one is too long.
            return excerpt or joined[:max_chars]
        excerpt = joined
    return excerpt or None
