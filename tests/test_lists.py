"""refbpe/_util/lists.py: an empty list with room reserved under PyPy."""

import pytest
from support import IS_PYPY

from refbpe._util.lists import list_with_room


def test_an_empty_new_list_that_grows_as_any_list():
    a, b = list_with_room(4), list_with_room(4)
    assert a == [] and type(a) is list and a is not b
    a.extend(range(10))
    a.append(b"x")
    assert a == list(range(10)) + [b"x"] and b == []
    assert list_with_room(0) == [] and list_with_room(-1) == []


@pytest.mark.skipif(not IS_PYPY, reason="PyPy's newlist_hint; CPython has no hint")
def test_under_pypy_the_room_is_reserved():
    from __pypy__ import list_get_physical_size

    ids = list_with_room(100000)
    ids.append(1)
    assert list_get_physical_size(ids) >= 100000
    plain = []
    plain.append(1)
    assert list_get_physical_size(plain) < 100
