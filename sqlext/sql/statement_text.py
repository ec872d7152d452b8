"""The text of a statement as a user would name it in an error message.

dbt (and other tools) put a query comment in front of every statement
(``/* {"app": "dbt", ...} */``); an error that quotes "the statement" must quote what follows it.
"""

from __future__ import annotations

import re

# any run of whitespace, /* block */ and -- line comments at the start of a statement
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|/\*.*?\*/|--[^\n]*(?:\n|\Z))*", re.DOTALL)
_SPACES = re.compile(r"\s+")


def strip_leading_comments(text: str) -> str:
    """``text`` without the comments and whitespace in front of its first word."""
    return _LEADING_COMMENTS.sub("", text, count=1)


def statement_head(text: str, limit: int = 80) -> str:
    """The start of the statement (leading comments dropped, whitespace collapsed), cut to
    about ``limit`` characters with ``...`` when longer."""
    flat = _SPACES.sub(" ", strip_leading_comments(text)).strip().rstrip(";").strip()
    return flat if len(flat) <= limit else flat[:limit].rstrip() + " ..."


def statement_keyword(text: str) -> str:
    """The statement's first word in upper case (``ALTER``, ``MSCK``, ...)."""
    head = strip_leading_comments(text).split(None, 1)
    return head[0].upper() if head else ""
