"""HTTP API for the frontend (FastAPI under uvicorn: `smuves serve`).

Modules: app (create_app), auth (bearer JWTs), edges (what every request meets first: the
token check before any body is read, the body limit, the metrics listener), context (per-app
state, per-request user sessions), errors (the `{code, message}` shape), schemas (bodies),
params (the parameters several routes take, and the portal check), and one router per
resource: portals, content, history, runs (with the event stream), exports, notifications,
ops (/healthz, /metrics). The OpenAPI document is kept beside them as openapi.json.
"""

from smuves_sync.api.app import create_app, openapi_document

__all__ = ["create_app", "openapi_document"]
