"""An empty list with room for ``n`` items: ``__pypy__.newlist_hint`` under PyPy, ``[]`` elsewhere.

A list that grows by ``append`` is copied each time it outgrows its room (PyPy grows it by an
eighth), each larger copy a new block, so a scan of 8 MB of English (1.9 million piece ends)
and the ids of that text each pass about nine times their final size through the allocator.
Reserving room for a quarter of the input's length (English runs 4.2-4.6 bytes per piece and
per token) makes that one block.  The hint only reserves; the list is empty and grows past
it as any list does.  Measured by
``perf/encode_first.py --trees MAIN,. --texts english_medium,russian,chinese`` (cl100k_base,
8 MB calls, CPU seconds, medians of 3, load average 1.4-2): a warm call 0.60 -> 0.55 s
(English; its minor page faults 1,760 -> 9), 0.88 -> 0.83 s (Russian; an earlier run 0.91 ->
0.97) and 1.90 -> 1.65 s (Chinese); the first call level within the noise (0.90 -> 0.93,
1.29 -> 1.39, 2.16 -> 2.05).  Where pieces are longer than 4 bytes the room is partly unused:
8 bytes per 4 input bytes at most, for the life of the list.  The scanners still reserve that
quarter; the ids of a text of 1 MB or more now get one slot per byte
(``encode.tokenizer._ids_room`` says why).  Cost: one block of ``n`` slots, its pages touched
as items are written (the minor page faults of perf/encode_first.py).
"""

try:
    from __pypy__ import newlist_hint as _newlist_hint
except ImportError:  # CPython: its lists grow in place (realloc), and it has no hint
    _newlist_hint = None

__all__ = ["list_with_room"]


def list_with_room(n):
    """An empty list; under PyPy with room for ``n`` items before it is copied.

    >>> ids = list_with_room(1000)
    >>> ids.append(7); ids
    [7]
    """
    if _newlist_hint is None:
        return []
    return _newlist_hint(n)
