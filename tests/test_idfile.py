"""Token-id files: .npy equal to numpy's own bytes, .bin, text; dtypes, widening, atomicity."""

import io
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from refbpe.corpus.idfile import (
    DTYPES,
    IdFileError,
    IdWriter,
    check_dtype,
    npy_header,
    read_bin,
    read_ids,
    read_npy,
    read_text_ids,
)

try:
    import numpy
except ImportError:  # PyPy env: the numpy comparisons skip
    numpy = None

needs_numpy = pytest.mark.skipif(numpy is None, reason="numpy is not importable on this interpreter")

RANGES = {
    "uint16": (0, 65535),
    "uint32": (0, 2**32 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def write_batches(path, batches, dtype=None, kind=None):
    with IdWriter(str(path), kind=kind, dtype=dtype) as w:
        for b in batches:
            w.write(b)
    return w.count, w.dtype


batches_of_ids = st.lists(st.lists(st.integers(0, 70000), max_size=20), max_size=6)


@settings(max_examples=examples(60))
@given(batches=batches_of_ids, kind=st.sampled_from(["npy", "bin"]))
def test_auto_dtype_is_uint16_exactly_when_every_id_fits(tmp_path_factory, batches, kind):
    path = tmp_path_factory.mktemp("ids") / ("ids." + kind)
    count, dtype = write_batches(path, batches)
    flat = [i for b in batches for i in b]
    assert count == len(flat)
    assert dtype == ("uint16" if all(i < 65536 for i in flat) else "uint32")
    back = read_ids(str(path), dtype)
    assert list(back) == flat
    assert os.listdir(str(path.parent)) == [path.name]  # no temporary left behind


@needs_numpy
@settings(max_examples=examples(40))
@given(
    ids=st.lists(st.integers(0, 2**31 - 1), max_size=50),
    dtype=st.sampled_from([None, "uint32", "int32", "int64"]),
)
def test_npy_is_byte_identical_to_numpy_save(tmp_path_factory, ids, dtype):
    d = tmp_path_factory.mktemp("npy")
    _, used = write_batches(d / "mine.npy", [ids[:7], ids[7:]], dtype)
    buf = io.BytesIO()
    numpy.save(buf, numpy.array(ids, dtype=used))
    assert (d / "mine.npy").read_bytes() == buf.getvalue()
    assert numpy.load(str(d / "mine.npy")).tolist() == ids


@needs_numpy
def test_bin_is_numpy_tofile(tmp_path):
    ids = [0, 1, 65535, 7]
    write_batches(tmp_path / "a.bin", [ids], "uint16")
    assert numpy.fromfile(str(tmp_path / "a.bin"), dtype=numpy.uint16).tolist() == ids
    write_batches(tmp_path / "b.bin", [ids + [2**20]])
    assert numpy.fromfile(str(tmp_path / "b.bin"), dtype=numpy.uint32).tolist() == ids + [2**20]


@needs_numpy
@pytest.mark.parametrize("descr", ["<u2", ">u2", "<i8", ">i4", "|u1", "<u4"])
def test_reads_numpy_files_of_any_integer_dtype_and_order(tmp_path, descr):
    ids = [0, 1, 2, 200, 100]
    numpy.save(str(tmp_path / "x.npy"), numpy.array(ids, dtype=numpy.dtype(descr)))
    assert list(read_npy(str(tmp_path / "x.npy"))) == ids


@pytest.mark.parametrize("dtype", DTYPES)
def test_forced_dtype_names_the_first_id_that_does_not_fit(tmp_path, dtype):
    low, high = RANGES[dtype]
    ids = [5, high, high + 1, low - 1] if low else [5, high, high + 1]
    with pytest.raises(IdFileError) as e:
        write_batches(tmp_path / "x.npy", [ids[:1], ids[1:]], dtype)
    assert "id %d (token 2 of the output) does not fit %s" % (high + 1, dtype) in str(e.value)
    assert os.listdir(str(tmp_path)) == []


def test_failure_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "ids.npy"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with IdWriter(str(target)) as w:
            w.write([1, 2, 3])
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old"
    assert os.listdir(str(tmp_path)) == ["ids.npy"]


def test_output_path_that_is_a_directory(tmp_path):
    with pytest.raises(IdFileError, match="is a directory"):
        IdWriter(str(tmp_path))


def test_unknown_dtype():
    with pytest.raises(IdFileError, match="unknown dtype 'uint8'"):
        check_dtype("uint8")


def test_bin_needs_a_dividing_dtype(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"\x01\x00\x02\x00\x03\x00")
    assert list(read_bin(str(path), "uint16")) == [1, 2, 3]
    with pytest.raises(IdFileError, match="not a multiple of 4, the size of uint32"):
        read_bin(str(path), "uint32")
    with pytest.raises(IdFileError, match="does not say its dtype"):
        read_bin(str(path), None)


def test_truncated_and_malformed_npy(tmp_path):
    path = tmp_path / "x.npy"
    path.write_bytes(npy_header("uint16", 4) + b"\x00\x00")
    with pytest.raises(IdFileError, match="truncated"):
        read_npy(str(path))
    path.write_bytes(b"not numpy at all")
    with pytest.raises(IdFileError, match="not a .npy file"):
        read_npy(str(path))


def test_text_and_json_writers(tmp_path):
    write_batches(tmp_path / "a.txt", [[1, 2], [], [3]])
    assert (tmp_path / "a.txt").read_bytes() == b"1\n2\n3\n"
    write_batches(tmp_path / "a.json", [[1, 2], [], [3]], kind="json")
    assert (tmp_path / "a.json").read_bytes() == b"[1, 2, 3]\n"
    assert read_text_ids(str(tmp_path / "a.json")) == [1, 2, 3]
    assert read_ids(str(tmp_path / "a.txt")) == [1, 2, 3]


def test_text_to_a_stream():
    out = io.BytesIO()
    w = IdWriter("-", kind="text", stream=out)
    w.write([7, 8])
    assert w.close() == (2, None)
    assert out.getvalue() == b"7\n8\n"
