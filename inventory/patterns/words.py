"""Ordinary dictionary words: path segments that learning never merges (DECISIONS §9, amended turn 3).

Also compound route names (:func:`is_compound_word`): two or three dictionary words written together
(``configmaps``, ``serviceaccounts``, ``virtualMachines``), which APIs use for collections; learning
does not merge them either. Their cost: a username such as ``darkknight`` stays a literal endpoint
until an operator merges it, like ``mark``.

A segment is a *dictionary word* when, lower-cased, it is one run of letters that the English
dictionary accepts as a lowercase word, inflections included: ``details``, ``settings``, ``notes``,
``shipments``, ``cat``, ``tree``, ``is``. Entries the dictionary writes capitalised (proper nouns:
``Alice``, ``Dmitri``, ``Walter``) do not count, so ``alice`` or ``dmitri`` are values; neither do
segments that join several words (``spring-launch``, ``hello_world``: slugs; ``configmaps``:
not an entry) or carry digits (``name1``). A format suffix is not part of the word (``close.json``
is ``close``, as Shopify's REST routes spell them), but a file name is a value (``main.css``).

The dictionary is Hunspell's ``en_US`` (generated from SCOWL, the Spell Checker Oriented Word
Lists), as shipped inside the ``chunspell`` package, which bundles Hunspell itself: a lookup applies
the dictionary's affix rules (plurals, verb forms, ``-ly``…) to its 49,000 stems, and accepts an
all-lowercase spelling only for stems written in lowercase. Nothing is downloaded at run time.
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache

# Suffixes that name an API route's answer format rather than a file.
FORMAT_SUFFIXES = frozenset({"json", "xml"})
_LETTERS = re.compile(r"^[a-z]{1,48}$")
_lock = threading.Lock()
_dictionary = None


def dictionary_load():
    """Load the dictionary now (about 10 MB, 50 ms). The worker's parent calls it before forking, so its
    prefork children share the pages instead of each loading a copy (``config/celery.py``)."""
    return _load()


def _load():
    global _dictionary
    if _dictionary is None:
        from hunspell import Hunspell  # the chunspell package

        _dictionary = Hunspell("en_US")
    return _dictionary


@lru_cache(maxsize=65536)
def is_dictionary_word(segment: str) -> bool:
    """Whether a path segment is an ordinary dictionary word (see the module docstring)."""
    word = segment.lower()
    stem, dot, extension = word.rpartition(".")
    if dot and extension in FORMAT_SUFFIXES:
        word = stem
    if not _LETTERS.match(word):
        return False
    with _lock:  # one Hunspell object per process; its lookups are not documented as thread-safe
        return bool(_load().spell(word))


MIN_PART = 3  # letters of each word of a compound (``configmaps`` = config + maps)
MAX_PARTS = 3


@lru_cache(maxsize=65536)
def is_compound_word(segment: str) -> bool:
    """Whether a segment is two or three dictionary words written together without separators, each of
    at least ``MIN_PART`` letters, in one case or camelCase (``configmaps``, ``serviceaccounts``,
    ``persistentvolumeclaims``, ``virtualMachines``): route names of APIs that spell collections so.
    A slug with separators (``spring-launch``) or digits is not."""
    if not segment.isascii() or not segment.isalpha() or len(segment) < 2 * MIN_PART or len(segment) > 48:
        return False
    word = segment.lower()
    return _splits(word, MAX_PARTS) and not is_dictionary_word(word)


def _splits(word: str, parts: int) -> bool:
    """Whether ``word`` is two to ``parts`` dictionary words of ``MIN_PART`` letters or more, written together."""
    for cut in range(MIN_PART, len(word) - MIN_PART + 1):
        if is_dictionary_word(word[:cut]):
            rest = word[cut:]
            if is_dictionary_word(rest) or (parts > 2 and _splits(rest, parts - 1)):
                return True
    return False
