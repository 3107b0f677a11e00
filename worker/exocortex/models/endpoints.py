"""Which endpoint answers for each model role: `exo models use` and `exo models list`.

Three roles, each a setting in exo_private.settings holding a JSON object
({"url", "model", "timeout_s", ...}) that plpy/model_client.py reads:

    chat         models.chat         extraction, capsules, listwise reranking
    embeddings   models.embeddings   chunk and query vectors (its "dimensions" too)
    rerank       models.rerank       the cross-encoder (/v1/rerank)

`use` probes the endpoint the way its role calls it, then writes the setting through
exo_private.set_setting, keeping the setting's other keys. The database's triggers do
the rest: a new embedding model or dimension queues every chunk again into that model's
own HNSW indexes (sql/110_embeddings.sql); a new chat model starts a new graph
generation built from it (sql/300_graph.sql). An API key is never stored: the setting
names the environment variable that holds it (api_key_env).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from exocortex.config import Config
from exocortex.db import admin_url, connect, transaction
from exocortex.models.services import ServiceProblem, model_settings
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint, ModelError

ROLES = ("chat", "embeddings", "rerank")
SETTINGS = {role: f"models.{role}" for role in ROLES}
#: How long `list` waits for each endpoint's model list.
LIST_TIMEOUT_S = 5.0
PROBE_TEXT = "exocortex probe"


class EndpointProblem(Exception):
    """The endpoint cannot be used, or the setting cannot be read or written; one line."""


@dataclass(frozen=True)
class Used:
    """What `exo models use` saved and what followed."""

    role: str
    setting: str
    value: dict[str, Any]
    previous: dict[str, Any]
    probed: str | None
    """What the probe saw (None with --no-probe)."""
    queued_chunks: int = 0
    """Embeddings: chunks queued to be embedded with the new model."""
    queued_windows: int = 0
    """Chat: extraction windows queued for the new model's graph generation."""


@dataclass(frozen=True)
class Listed:
    role: str
    setting: str
    url: str | None
    model: str | None
    api_key_env: str | None
    timeout_s: Any
    dimensions: Any
    answers: bool | None
    """None: no url (off)."""
    problem: str | None

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _connect(cfg: Config) -> psycopg.Connection:
    try:
        return connect(admin_url(cfg), "exo-models", autocommit=True)
    except psycopg.OperationalError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise EndpointProblem(f"cannot reach the database ({first}): run `exo db up`") from None


def _read(conn: psycopg.Connection) -> dict[str, dict[str, Any]]:
    try:
        return model_settings(conn, SETTINGS.values())
    except ServiceProblem as exc:
        raise EndpointProblem(str(exc)) from None


def _endpoint(value: dict[str, Any]) -> Endpoint:
    try:
        return Endpoint.from_setting(value)
    except ValueError as exc:
        raise EndpointProblem(str(exc)) from None


def _probe(role: str, endpoint: Endpoint) -> tuple[str, int | None]:
    """Call the endpoint as its role does; what it answered, and an embedding's dimension."""
    try:
        if role == "embeddings":
            (vector,) = client.embed(endpoint, [PROBE_TEXT])
            return f"an embedding of {len(vector)} dimensions", len(vector)
        if role == "rerank":
            client.rerank(endpoint, PROBE_TEXT, [PROBE_TEXT, "something else"])
            return "two relevance scores", None
        reply = client.chat(endpoint, [{"role": "user", "content": "Say OK."}], max_tokens=1)
        return f"a completion ({reply.finish_reason})", None
    except ModelError as exc:
        raise EndpointProblem(f"the {role} probe failed: {exc}") from None


def _pick_model(url: str, current: str | None, endpoint_for: Callable[[str], Endpoint]) -> str:
    """No --model: the one model the endpoint serves, or the current one when it is served."""
    try:
        served = client.served_models(endpoint_for(current or "-"), timeout_s=LIST_TIMEOUT_S)
    except ModelError as exc:
        raise EndpointProblem(f"cannot list the models of {url} ({exc}): name one with --model") from None
    if len(served) == 1:
        return served[0]
    if current in served:
        return current  # type: ignore[return-value]
    names = ", ".join(served[:8]) + (", ..." if len(served) > 8 else "") if served else "none"
    raise EndpointProblem(f"{url} serves {len(served)} models ({names}): name one with --model")


def use(
    cfg: Config,
    role: str,
    url: str,
    *,
    model: str | None = None,
    api_key_env: str | None = None,
    timeout_s: float | None = None,
    probe: bool = True,
) -> Used:
    """Point a role at an OpenAI-compatible endpoint, after a probe; the setting's other keys stay.
    timeout_s: how long each request of the role may take (the probe's too); None keeps the setting's."""
    if role not in ROLES:
        raise EndpointProblem(f"the role must be one of {', '.join(ROLES)}, got {role!r}")
    if not url.startswith(("http://", "https://")):
        raise EndpointProblem(f"the url must be http(s), such as http://127.0.0.1:8080/v1, got {url!r}")
    if timeout_s is not None and not (math.isfinite(timeout_s) and timeout_s > 0):
        raise EndpointProblem(f"the timeout must be a positive number of seconds, got {timeout_s!r}")
    key = SETTINGS[role]
    with _connect(cfg) as conn:
        previous = _read(conn)[key]
    if not isinstance(previous, dict):
        previous = {}
    value = dict(previous)
    value["url"] = url.rstrip("/")
    if timeout_s is not None:
        value["timeout_s"] = int(timeout_s) if float(timeout_s).is_integer() else timeout_s
    if api_key_env:
        value["api_key_env"] = api_key_env
    elif previous.get("url") != value["url"]:
        value.pop("api_key_env", None)  # the old server's key is not this one's
    if value.get("api_key_env") and probe and _endpoint({**value, "model": "-"}).api_key is None:
        raise EndpointProblem(
            f"{value['api_key_env']} (the api key for {url}) is not set in this environment: "
            "export it here and where the worker runs"
        )

    def endpoint_for(name: str) -> Endpoint:
        return _endpoint({**value, "model": name})

    if model:
        value["model"] = model
    elif probe:
        value["model"] = _pick_model(url, previous.get("model"), endpoint_for)
    elif not previous.get("model"):
        raise EndpointProblem(f"{key} has no model yet: name one with --model")
    probed = None
    if probe:
        probe_value = {k: v for k, v in value.items() if k != "dimensions"}
        probed, dimensions = _probe(role, _endpoint(probe_value))
        if dimensions is not None:
            value["dimensions"] = dimensions
    elif role == "embeddings" and previous.get("model") != value["model"] and "dimensions" in value:
        raise EndpointProblem(
            "without a probe the new embedding model's dimension is unknown: run without --no-probe"
        )
    with _connect(cfg) as conn, transaction(conn):
        conn.execute("select exo_private.set_setting(%s, %s)", (key, Jsonb(value)))
        chunks = windows = 0
        if role == "embeddings" and (
            previous.get("model"),
            previous.get("dimensions"),
        ) != (value["model"], value.get("dimensions")):
            chunks = _chunks_without_vectors(conn, value["model"], int(value["dimensions"]))
        if role == "chat" and previous.get("model") != value["model"]:
            (windows,) = conn.execute(
                "select count(*)::int from exo_private.extraction_windows w where w.workspace in "
                "(select g.workspace from exo_private.extraction_generations g)"
            ).fetchone()
    return Used(role, key, value, previous, probed, chunks, windows)


def _chunks_without_vectors(conn: psycopg.Connection, model: str, dimensions: int) -> int:
    """The chunks the embedding_model_changed trigger queued: those without this model's vector
    (what exo_private.set_embedding_model counts)."""
    (count,) = conn.execute(
        """
        select count(*)::int
        from exo_private.chunks c
        where not exists (select 1 from exo_private.chunk_embeddings e
                          join exo_private.embedding_models m on m.id = e.model_id
                          where e.workspace = c.workspace and e.chunk_id = c.id
                            and m.name = %s and m.dimensions = %s)
        """,
        (model, dimensions),
    ).fetchone()
    return count


def listing(cfg: Config, *, check: bool = True) -> list[Listed]:
    """Each role's endpoint as the settings name it, and whether its model list answers now."""
    with _connect(cfg) as conn:
        rows = _read(conn)
    result = []
    for role in ROLES:
        value = rows[SETTINGS[role]]
        value = value if isinstance(value, dict) else {}
        answers, problem = None, None
        if value.get("url") and check:
            try:
                client.served_models(
                    _endpoint({**value, "model": value.get("model") or "-"}), timeout_s=LIST_TIMEOUT_S
                )
                answers = True
            except (ModelError, EndpointProblem) as exc:
                answers, problem = False, str(exc)
        result.append(
            Listed(
                role=role,
                setting=SETTINGS[role],
                url=value.get("url"),
                model=value.get("model"),
                api_key_env=value.get("api_key_env"),
                timeout_s=value.get("timeout_s"),
                dimensions=value.get("dimensions"),
                answers=answers,
                problem=problem,
            )
        )
    return result
