"""The operators' dashboard in the browser (`smuves dashboard`): not the tenant API.

    auth = DashboardAuth(password=settings.dashboard_password, token=settings.dashboard_token)
    app = create_dashboard_app(settings, pool=login_pool, auth=auth)   # a Starlette app

Modules: app (routes, headers), auth (login link, password, sessions, CSRF), web (what
handlers share), pages (GET), signin (signing in and out), actions (the buttons, with
confirmation and audit), events (server-sent events for the live parts), charts (inline
SVG), views (templates and words).
Its reads and writes are the data layer's noun modules (`smuves_sync.db.jobs`, `runs`,
`portals`, `content`, `schedules`, `notifications`, `stats`, `hubspot_minutes`,
`operator_actions`, `dashboard_confirmations`), its reads inside `Database.custom_plans`;
templates and static files (with the vendored htmx) sit beside the code.
"""

from smuves_sync.dashboard.app import create_dashboard_app
from smuves_sync.dashboard.auth import DashboardAuth

__all__ = ["DashboardAuth", "create_dashboard_app"]
