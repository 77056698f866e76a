"""The campaign web app: annotator pages and the researcher dashboard (Starlette, served by uvicorn)."""

from convoscope.web._app import csrf_value, make_app
from convoscope.web._http import SecurityHeaders
from convoscope.web._i18n import translations
from convoscope.web._markdown import markdown_html
from convoscope.web._server import (
    Server,
    build_server,
    dashboard_secret,
    join_secret,
    server_secret,
    start_background,
)

__all__ = ["SecurityHeaders", "Server", "build_server", "csrf_value", "dashboard_secret", "join_secret",
           "make_app", "markdown_html", "server_secret", "start_background", "translations"]
