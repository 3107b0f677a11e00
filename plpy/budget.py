"""A per-session call budget for model endpoints the reader can reach (stdlib only).

Inlined into plpython3u functions (`# exo:include budget`). The store is plpython's
GD, a dict that lives as long as the database session and is shared by every
plpython function in it, so one budget covers `exo.embed_query` and the search's own
model calls alike. A sliding window: at most `limit` calls in any `window_s` seconds.
"""

import time


def allow(store, key, limit, window_s=60.0, now=None):
    """Whether one more call of kind `key` fits the budget; counts it when it does.

    `limit` <= 0 refuses every call (an owner can switch a path off)."""
    now = time.monotonic() if now is None else now
    calls = store.setdefault("exo_budget", {}).setdefault(key, [])
    while calls and calls[0] <= now - window_s:
        calls.pop(0)
    if len(calls) >= limit:
        return False
    calls.append(now)
    return True
