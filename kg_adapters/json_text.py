"""JSON read from outside the process (a server's answer, a line of a dataset or a dump): every way such a
document can be bad is a :class:`ValueError`, so a caller's one ``except ValueError`` turns each into its
own typed error. ``json.loads`` alone raises RecursionError for a document nested deeper than Python's
stack, and hands back lone surrogates (``"\\ud800"``, or such bytes in the body) as text that cannot be
written anywhere later."""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE_HINT_BYTES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_SURROGATE_HINT_TEXT = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")


class BadJsonText(ValueError):
    """JSON that parses but cannot be used: nested too deeply, or text that is not valid Unicode."""


def loads(document: str | bytes | bytearray) -> Any:
    """``json.loads(document)``.

    Raises:
        BadJsonText: nesting too deep to read, or a string (a key too) holding a lone surrogate.
        ValueError: not JSON, or bytes that are not UTF-8 (as ``json.loads`` raises them).
    """
    try:
        value = json.loads(document)
    except RecursionError:
        raise BadJsonText("the JSON is nested too deeply to read") from None
    hint = _SURROGATE_HINT_TEXT.search(document) if isinstance(document, str) else None
    if hint is not None or (not isinstance(document, str) and _SURROGATE_HINT_BYTES.search(document)):
        check_unicode(value)
    return value


def check_unicode(value: Any) -> None:
    """Raises BadJsonText if a string anywhere in ``value`` (lists, dicts and their keys) is not valid
    Unicode; walks without recursion, however deep ``value`` is."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise BadJsonText(f"the JSON holds text that is not valid Unicode ({exc.reason})") from None
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
