"""Per-session delivery memory (docs/rules/search.md §10).

Keyed by the caller's `iii.session.id`; without one there is no memory (full responses). At most
1024 sessions, evicted first-in first-out by first insertion, no time-based expiry. Each session
remembers the catalog fingerprint, the installed function ids already delivered, which long
guidance blocks were sent. (The pre-generate hint keeps its own once-per-turn ledger, `hook.py`.)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

MAX_SESSIONS = 1024  # spec: docs/rules/search.md §10

PREAMBLE_GUIDANCE = "guidance"
PREAMBLE_INSTALL = "install_workflow"


@dataclass
class SessionState:
    fingerprint: str | None = None
    delivered: set[str] = field(default_factory=set)
    preambles: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Split:
    """A selection split against the session: ids to send and ids suppressed as repeats."""

    new: list[str]
    repeated: list[str]


class SessionMemory:
    def __init__(self, capacity: int = MAX_SESSIONS) -> None:
        self.capacity = capacity
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def _state(self, session_id: str) -> SessionState:
        state = self._sessions.get(session_id)
        if state is None:
            state = SessionState()
            self._sessions[session_id] = state
            while len(self._sessions) > self.capacity:
                self._sessions.popitem(last=False)
        return state

    def _synced(self, session_id: str, fingerprint: str) -> SessionState:
        """The session's state, with delivery cleared when the catalog fingerprint changed."""
        state = self._state(session_id)
        if state.fingerprint != fingerprint:
            state.fingerprint = fingerprint
            state.delivered.clear()
            state.preambles.clear()
        return state

    def split(self, session_id: str | None, fingerprint: str, selected: Sequence[str]) -> Split:
        """Ids already delivered are `repeated`, the rest `new` (and recorded as delivered). When
        everything repeats (non-empty selection) the preambles are cleared and the whole
        selection is returned as new — a full re-send after context compaction."""
        if not session_id:
            return Split(list(selected), [])
        with self._lock:
            state = self._synced(session_id, fingerprint)
            repeated = [i for i in selected if i in state.delivered]
            if selected and len(repeated) == len(selected):
                state.preambles.clear()
                return Split(list(selected), [])
            new = [i for i in selected if i not in state.delivered]
            state.delivered.update(new)
            return Split(new, repeated)

    def first_send(self, session_id: str | None, fingerprint: str, preamble: str) -> bool:
        """True the first time `preamble` is sent in this session (and again after a reset);
        always true without a session."""
        if not session_id:
            return True
        with self._lock:
            state = self._synced(session_id, fingerprint)
            if preamble in state.preambles:
                return False
            state.preambles.add(preamble)
            return True

    def reset_delivery(self) -> None:
        """Forget every session's deliveries (the catalog fingerprint changed)."""
        with self._lock:
            for state in self._sessions.values():
                state.fingerprint = None
                state.delivered.clear()
                state.preambles.clear()
