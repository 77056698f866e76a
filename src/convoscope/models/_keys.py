"""Which API key an endpoint gets: only the one given for it, and never in clear to a remote host.

* ``api_key`` or ``api_key_env`` (the name of an environment variable) belong to the endpoint they
  are given for. ``api_key_env`` may also map hosts to variables, ``{"api.example.com": "EX_KEY",
  "*": "OTHER"}``, so one setting serves a panel of several providers.
* ``OPENAI_API_KEY`` is read only for api.openai.com, or for the host ``OPENAI_BASE_URL`` names;
  ``ANTHROPIC_API_KEY`` only for api.anthropic.com; ``GEMINI_API_KEY`` only for Google's
  generativelanguage.googleapis.com.
* A key is refused over plain ``http://`` to a host other than this machine, unless
  ``allow_insecure`` is set; so are credentials written into the URL (``http://user:pw@host``).
* Credentials in a URL are used for the requests and never shown: :func:`redact_url` is what
  model names, verdicts, caches and messages carry.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from convoscope.models._base import ModelError

_OPENAI_HOST = "api.openai.com"
_PROVIDER_KEYS = {"api.anthropic.com": "ANTHROPIC_API_KEY",
                  "generativelanguage.googleapis.com": "GEMINI_API_KEY"}


def is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_SECRET_PARAMETERS = ("key", "token", "secret", "password", "sig", "signature", "auth", "credential")


def redact_url(url: str) -> str:
    """``url`` without what must not be stored or printed: the user and password of its
    authority, and the values of query parameters that look like credentials (``?key=…``)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None and not parts.query:
        return url
    netloc = parts.hostname or ""
    if ":" in netloc:  # an IPv6 address
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc += f":{parts.port}"
    query = urlencode([(name, "REDACTED" if any(word in name.lower() for word in _SECRET_PARAMETERS)
                        else value) for name, value in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def resolve_api_key(base_url: str, *, api_key: str | None = None,
                    api_key_env: str | Mapping[str, str] | None = None,
                    allow_insecure: bool = False) -> str | None:
    """The key to send to ``base_url`` (None: send none). Raises :class:`ModelError` for a key
    variable that is named but empty, and for a key that would cross the network in clear."""
    host = _host(base_url)
    key, source = api_key, "api_key"
    if key is None and api_key_env:
        variable = api_key_env if isinstance(api_key_env, str) else (
            api_key_env.get(host) or api_key_env.get("*"))
        if variable:
            key, source = os.environ.get(variable), variable
            if not key:
                raise ModelError(f"the API key variable {variable} (for {host}) is not set")
    if key is None and _default_openai_host(host):
        key, source = os.environ.get("OPENAI_API_KEY") or None, "OPENAI_API_KEY"
    if key is None and host in _PROVIDER_KEYS:
        source = _PROVIDER_KEYS[host]
        key = os.environ.get(source) or None
    in_url = urlsplit(base_url).password is not None or urlsplit(base_url).username is not None
    if in_url and key is None:
        source = "the URL"
    if (key or in_url) and urlsplit(base_url).scheme == "http" and not is_loopback(host) \
            and not allow_insecure:
        raise ModelError(f"refusing to send the API key from {source} over plain http to {host}: "
                         "use https, or allow it with --allow-insecure-key (option allow_insecure)")
    return key


def _default_openai_host(host: str) -> bool:
    configured = os.environ.get("OPENAI_BASE_URL")
    return host == _OPENAI_HOST or (bool(configured) and host == _host(configured or ""))
