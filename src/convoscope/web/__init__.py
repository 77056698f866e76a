"""The campaign web app: annotator pages and the researcher dashboard, server-rendered (stdlib WSGI)."""

from convoscope.web._app import csrf_value, make_app
from convoscope.web._server import build_server, dashboard_secret, server_secret, start_background

__all__ = ["build_server", "csrf_value", "dashboard_secret", "make_app", "server_secret", "start_background"]
