"""Maps of one number to another (an IRI's number to its entity's rank) too large for a memory budget,
kept in a raw int32 file and read at random a window at a time: how a spilled index write
(:mod:`kg_adapters.index.spill`) renumbers its edges, literal rows and name rows within its budget.

A memory map read at random keeps every page it touched resident, so a map of one number per IRI read
through one counts in the process's resident size in full (at 100M triples, most of the index worker's
growth). Here a map that fits its window is read into memory once; a larger one is read window by
window for each block of numbers looked up (only the numbers that fall into a window are answered from
it), so what is held is one window and the block, whatever the map's size. A map is written from
(number, value) pairs in any order (:class:`NumberMapWriter`): in memory when it fits its window,
otherwise the pairs go to a file and the map is written a window at a time from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ITEM = 4
"""Bytes of one value (int32: ranks and entity numbers are below ``layout.MAX_ENTITIES``)."""
_PAIR_BYTES = 12
"""Bytes of one spooled (number, value) pair (int64, int32)."""


def read_block(path: Path, dtype: Any, start: int, count: int) -> Any:
    """``count`` values of ``dtype`` from ``start`` of a raw file, read into memory: a memory map would
    keep every page read resident (and counted in the process's RSS) until it is closed."""
    import numpy as np

    itemsize = np.dtype(dtype).itemsize
    return np.fromfile(path, dtype=dtype, count=count, offset=start * itemsize)


def _pair_dtype() -> Any:
    import numpy as np

    return np.dtype([("number", "<i8"), ("value", "<i4")])


class NumberMapWriter:
    """Writes the map of ``size`` numbers at ``path`` from :meth:`put` pairs, holding at most ``window``
    bytes of it (see the module docstring); a number never put maps to -1."""

    def __init__(self, path: Path, size: int, window: int) -> None:
        import numpy as np

        self.path, self.size = path, size
        self.window = max(window // ITEM, 1)
        """Values held at once."""
        self.windows_written = 0
        """Windows written from the spooled pairs (0: the map was built in memory)."""
        self._whole: Any = np.full(size, -1, dtype=np.int32) if size <= self.window else None
        self._pairs = None if self._whole is not None else open(path.with_suffix(".pairs"), "wb")  # noqa: SIM115

    def put(self, numbers: Any, values: Any) -> None:
        """Maps each of ``numbers`` to the value at the same place of ``values``."""
        import numpy as np

        if self._whole is not None:
            self._whole[np.asarray(numbers, dtype=np.int64)] = values
            return
        assert self._pairs is not None
        pairs = np.empty(len(numbers), dtype=_pair_dtype())
        pairs["number"], pairs["value"] = numbers, values
        pairs.tofile(self._pairs)

    def abandon(self) -> None:
        """Lets go of what was put (nothing is written; a new writer of the same path starts afresh)."""
        self._whole = None
        if self._pairs is not None:
            self._pairs.close()
            Path(self._pairs.name).unlink(missing_ok=True)
            self._pairs = None

    def close(self) -> None:
        """Writes the map's file (a window at a time from the spooled pairs when it did not fit)."""
        import numpy as np

        if self._whole is not None:
            self._whole.tofile(self.path)
            self._whole = None
            return
        assert self._pairs is not None
        self._pairs.close()
        pairs_path = Path(self._pairs.name)
        count = pairs_path.stat().st_size // _PAIR_BYTES
        step = max(self.window * ITEM // _PAIR_BYTES, 4096)  # pairs read at once: the window's bytes
        with open(self.path, "wb") as out:
            for low in range(0, self.size, self.window):
                values = np.full(min(self.window, self.size - low), -1, dtype=np.int32)
                for start in range(0, count, step):
                    block = read_block(pairs_path, _pair_dtype(), start, step)
                    numbers = block["number"]
                    inside = (numbers >= low) & (numbers < low + len(values))
                    values[numbers[inside] - low] = block["value"][inside]
                    del block, numbers, inside
                values.tofile(out)
                self.windows_written += 1
        os.unlink(pairs_path)


class NumberMap:
    """A map written by :class:`NumberMapWriter`, looked up holding at most ``window`` bytes of it."""

    def __init__(self, path: Path, window: int) -> None:
        import numpy as np

        self.path = path
        self.size = path.stat().st_size // ITEM
        self.window = max(window // ITEM, 1)
        self._whole: Any = np.fromfile(path, dtype=np.int32) if self.size <= self.window else None
        self.most_held = self.size if self._whole is not None else 0
        """The most values of the map held at once."""

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, numbers: Any) -> Any:
        """The values of ``numbers`` (an int array), as int64."""
        import numpy as np

        numbers = np.asarray(numbers)
        if self._whole is not None:
            return self._whole[numbers].astype(np.int64)
        found = np.empty(numbers.shape, dtype=np.int64)
        for low in range(0, self.size, self.window):
            values = read_block(self.path, np.int32, low, self.window)
            self.most_held = max(self.most_held, len(values))
            inside = (numbers >= low) & (numbers < low + len(values))
            found[inside] = values[numbers[inside] - low]
            del values, inside
        return found

    def blocks(self, step: int) -> Iterator[tuple[int, Any]]:
        """(first number, its values) of the whole map in order, ``step`` values at a time."""
        import numpy as np

        for start in range(0, self.size, step):
            if self._whole is not None:
                yield start, self._whole[start : start + step]
            else:
                yield start, read_block(self.path, np.int32, start, step)
