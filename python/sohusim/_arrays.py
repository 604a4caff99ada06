"""as_arrays: the number series of a result as numpy arrays (lists without numpy)."""
import numbers


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _is_table(x):
    return (isinstance(x, dict) and set(x) == {"columns", "rows"} and isinstance(x["columns"], list)
            and isinstance(x["rows"], list) and all(isinstance(r, list) and len(r) == len(x["columns"])
                                                    for r in x["rows"]))


def _convert(x, np):
    if _is_table(x):
        # A table ({"columns": [...], "rows": [[...], ...]}, e.g. serve's "occupancy"): one
        # series per column.
        cols = {}
        for i, name in enumerate(x["columns"]):
            col = [r[i] for r in x["rows"]]
            cols[name] = np.asarray(col) if np is not None and all(_is_number(v) for v in col) else col
        return cols
    if isinstance(x, dict):
        return {k: _convert(v, np) for k, v in x.items()}
    if isinstance(x, list):
        if x and all(_is_number(v) for v in x):
            return np.asarray(x) if np is not None else list(x)
        if x and all(isinstance(v, list) and v and all(_is_number(e) for e in v) for v in x) \
                and len({len(v) for v in x}) == 1:
            return np.asarray(x) if np is not None else [list(v) for v in x]  # e.g. tokens [batch][gen]
        return [_convert(v, np) for v in x]
    return x


def as_arrays(result):
    """A copy of `result` (a dict from run, serve, run_point...) with its number series as
    numpy arrays: every list of numbers (per-layer times), every rectangular list of lists of
    numbers (a functional run's tokens) and every column of a table ({"columns", "rows"}, such
    as serve's "occupancy", which becomes {column: series}). Without numpy the same shape with
    lists. The result itself is left as it is (JSON-like)."""
    return _convert(result, _numpy())
