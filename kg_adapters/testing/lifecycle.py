"""The ``with`` form of the test servers (Virtuoso, the fault server, a scripted LLM): entering starts the
server, leaving stops it, whatever the block raised."""

from __future__ import annotations

import abc
from types import TracebackType
from typing import TypeVar

_S = TypeVar("_S", bound="ServerLifecycle")


class ServerLifecycle(abc.ABC):
    """A server with ``start()`` (returns once it answers) and ``stop()``, usable as ``with Server(...) as s:``."""

    @abc.abstractmethod
    def start(self: _S) -> _S:
        """Starts the server; returns it once it answers."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stops the server and releases its port (a server not running is left as it is)."""

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
