"""Whether watching for a reply pays on one connection, found out while the queries go.

Watching (a non-blocking look at the connection, again and again, instead of sleeping until
the reply wakes the thread) saves the kernel's wake-up where that wake-up is slow, and costs
where it is not: on some virtual machines the looks themselves delay the reply, so a query
that watches takes longer than one that sleeps. Which one holds depends on the machine, its
load and the instrument, so a :class:`WatchTrial` measures it: every ``SETTLED`` queries it
runs a trial in which blocks of ``BLOCK`` queries take turns, watched and not; it keeps
watching only if the watched queries' median time is at least ``MARGIN`` below the others'.
A draw goes to sleeping, which costs no CPU.

The transport asks :meth:`WatchTrial.watch` before each query and reports the query's time
(command sent to reply read) with :meth:`WatchTrial.took`.
"""

from __future__ import annotations

import statistics

#: queries in a row that watch (or sleep) during a trial
BLOCK = 16
#: blocks of each kind in one trial
BLOCKS = 6
#: queries between two trials, the decision of the last one applied
SETTLED = 4000
#: the share of a query's time watching must save to be kept
MARGIN = 0.03


class WatchTrial:
    """The watch decision of one connection (not thread-safe: the transport's lock guards it)."""

    __slots__ = ("watching", "trials", "_left", "_index", "_watched", "_slept")

    def __init__(self) -> None:
        self.watching = True  # the decision in force between trials
        self.trials = 0  # trials finished
        self._left = 0  # queries until the next trial (0: in a trial)
        self._index = 0  # query number within the running trial
        self._watched: list[float] = []
        self._slept: list[float] = []

    def watch(self) -> bool:
        """Whether the next query watches for its reply."""
        if self._left:
            return self.watching
        return self._in_watched_block()

    def _in_watched_block(self) -> bool:
        """During a trial: the next query is in a block that watches (blocks take turns)."""
        return (self._index // BLOCK) % 2 == 0

    def took(self, seconds: float) -> None:
        """The query just asked (as :meth:`watch` said) took ``seconds`` from send to reply."""
        if self._left:
            self._left -= 1
            return
        (self._watched if self._in_watched_block() else self._slept).append(seconds)
        self._index += 1
        if self._index >= 2 * BLOCK * BLOCKS:
            self._decide()

    def _decide(self) -> None:
        watched, slept = statistics.median(self._watched), statistics.median(self._slept)
        self.watching = watched <= slept * (1.0 - MARGIN)
        self.trials += 1
        self._left, self._index = SETTLED, 0
        self._watched, self._slept = [], []

    def reset(self) -> None:
        """Start over with a trial (a new connection: the instrument or its path changed)."""
        self._left = self._index = 0
        self._watched, self._slept = [], []
