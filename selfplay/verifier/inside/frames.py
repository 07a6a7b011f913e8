"""pandas Series, DataFrames and their indexes as data across the call channel.

Data-science tests compare what a program returns with `pd.testing.assert_frame_equal`,
which checks the exact class: a handle (a proxy of the program's object) fails every such
test, however right the frame. So a Series or DataFrame whose every part is plain data
crosses as data and is rebuilt in the receiving process by pandas' constructors from those
parts alone: the values (a numpy array of numbers, booleans or dates, or a list of atoms for
an object column), the index, the name, the dtype and the column labels. No program code runs
to build it, and nothing the program wrote other than those parts reaches the tests. Anything
else (categorical or nullable extension dtypes, a MultiIndex, objects in an object column,
duplicate column labels, attributes in `attrs`) stays a handle.

| node | value |
|---|---|
| `("pS", values, index, name, dtype)` | a Series (values: an `nd` node, or a list of atoms for `object`) |
| `("pF", [labels], [column nodes], index)` | a DataFrame: its columns as Series nodes without index |
| `("pI", values, name, dtype)`, `("pR", start, stop, step, name)` | an Index, a RangeIndex |
"""

from __future__ import annotations

ATOMS = (type(None), bool, int, float, str)
TYPES = frozenset(("Series", "DataFrame", "Index", "RangeIndex"))
TAGS = frozenset(("pS", "pF", "pI", "pR"))
_PLAIN_KINDS = "biufcmM"
# pandas' string dtypes (pandas 3 stores text as `str` by default), by their names.
_STRING_DTYPES = ("str", "string")


def encode(v, t, part):
    """The node of a pandas value that is plain data, else None (it stays a handle)."""
    name = t.__name__
    if name == "Series":
        return _series(v, part, with_index=True)
    if name == "DataFrame":
        labels = list(v.columns)
        if len(set(map(repr, labels))) != len(labels) or not all(type(c) in ATOMS for c in labels):
            return None
        if getattr(v, "attrs", None):
            return None
        index = _index(v.index, part)
        columns = [_series(v.iloc[:, i], part, with_index=False) for i in range(len(labels))]
        if index is None or any(c is None for c in columns):
            return None
        return ("pF", [part(c) for c in labels], columns, index)
    if name in ("Index", "RangeIndex"):
        return _index(v, part)
    return None


def _dtype_text(dtype) -> str | None:
    """How a dtype travels: numpy's `str` of a plain one, `|O`, or a string dtype's name."""
    if type(dtype).__module__.split(".")[0] == "numpy":
        return dtype.str if dtype.kind in _PLAIN_KINDS + "O" else None
    text = str(dtype)
    return text if type(dtype).__name__ == "StringDtype" and text in _STRING_DTYPES else None


def _values(values, text: str, part):
    """An `nd` node for a plain numpy dtype, a list of atoms for `object` or text."""
    import numpy

    if text != "|O" and text not in _STRING_DTYPES:
        return part(numpy.asarray(values))
    items = list(values)
    if all(type(x) in ATOMS for x in items):
        return [part(x) for x in items]
    return None


def _series(s, part, with_index: bool):
    if type(s.name) not in ATOMS or getattr(s, "attrs", None):
        return None
    text = _dtype_text(s.dtype)
    if text is None:
        return None  # another extension dtype (category, Int64, ...)
    values = _values(s.to_numpy(dtype=object) if text in _STRING_DTYPES else s.to_numpy(),
                     text, part)  # fmt: skip
    index = _index(s.index, part) if with_index else None
    if values is None or (with_index and index is None):
        return None
    return ("pS", values, index, part(s.name), text)


def _index(ix, part):
    t = type(ix).__name__
    if type(ix.name) not in ATOMS:
        return None
    if t == "RangeIndex":
        return ("pR", ix.start, ix.stop, ix.step, part(ix.name))
    text = _dtype_text(ix.dtype)
    if t != "Index" or text is None:
        return None
    raw = ix.to_numpy(dtype=object) if text in _STRING_DTYPES else ix.to_numpy()
    values = _values(raw, text, part)
    return None if values is None else ("pI", values, part(ix.name), text)


def rebuild(n: tuple, part, error: type[Exception]):
    """The pandas value of a node; `error` for one that is not valid. Every part is checked
    (the sender is untrusted): values are a numpy array or a list of atoms, names atoms."""
    import pandas

    tag = n[0]
    if tag == "pR" and len(n) == 5 and all(type(x) is int for x in n[1:4]) and n[3] != 0:
        return pandas.RangeIndex(n[1], n[2], n[3], name=_atom(part(n[4]), error))
    if tag == "pI" and len(n) == 4:
        return pandas.Index(_data(n[1], n[3], part, error), name=_atom(part(n[2]), error),
                            dtype=_dtype(n[3], error))  # fmt: skip
    if tag == "pS" and len(n) == 5:
        index = _sub_index(n[2], part, error) if n[2] is not None else None
        return pandas.Series(_data(n[1], n[4], part, error), index=index,
                             name=_atom(part(n[3]), error), dtype=_dtype(n[4], error))  # fmt: skip
    if tag == "pF" and len(n) == 4 and type(n[1]) is list and type(n[2]) is list:
        labels = [_atom(part(x), error) for x in n[1]]
        if len(labels) != len(n[2]) or len(set(map(repr, labels))) != len(labels):
            raise error("malformed data frame")
        index = _sub_index(n[3], part, error)
        columns = {}
        for label, col in zip(labels, n[2], strict=True):
            if type(col) is not tuple or col[:1] != ("pS",) or col[2] is not None:
                raise error("malformed data frame column")
            series = rebuild(col, part, error)
            if len(series) != len(index):
                raise error("a data frame column of the wrong length")
            columns[label] = series.set_axis(index)
        frame = pandas.DataFrame(columns, index=index)
        if not columns:
            frame = pandas.DataFrame(index=index)
        if list(frame.columns) != labels:
            raise error("malformed data frame")
        return frame
    raise error(f"unknown node {tag!r}")


def _sub_index(node, part, error):
    if type(node) is not tuple or node[:1] not in (("pI",), ("pR",)):
        raise error("malformed index")
    return rebuild(node, part, error)


def _atom(value, error):
    if type(value) not in ATOMS:
        raise error("a pandas name or label that is not an atom")
    return value


def _dtype(text, error):
    import numpy

    if text == "|O":
        return object
    if text in _STRING_DTYPES:
        return text
    if type(text) is not str or len(text) > 16:
        raise error("malformed dtype")
    dt = numpy.dtype(text)
    if dt.kind not in _PLAIN_KINDS + "?":
        raise error("malformed dtype")
    return dt


def _data(values, dtype, part, error):
    """A numpy array of a plain dtype, or a list of atoms for an object column."""
    import numpy

    if type(values) is list:
        items = [part(x) for x in values]
        if (dtype != "|O" and dtype not in _STRING_DTYPES) or not all(
            type(x) in ATOMS for x in items
        ):
            raise error("malformed object column")
        out = numpy.empty(len(items), dtype=object)
        out[:] = items
        return out
    array = part(values)
    if type(array) is not numpy.ndarray or array.ndim != 1:
        raise error("malformed pandas values")
    return array
