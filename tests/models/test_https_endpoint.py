"""An https endpoint through the default sender (h11 on its own asyncio connections): a real TLS
server on 127.0.0.1 with a certificate made for the test. The CA named by SSL_CERT_FILE is
trusted, as httpx trusts it; without it the call fails closed, and nothing is answered."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from faultproxy import canned_answer
from loop_faults import cancel_as_it_completes

from convoscope.models import GenerateRequest, ModelError, OpenAIModel
from convoscope.models._http import CoreSender
from convoscope.models._net import Pool, Timeouts


class _Canned(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(canned_answer(self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args):
        pass


@pytest.fixture
def https_server(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1", cert
    finally:
        server.shutdown()
        server.server_close()


async def test_an_https_endpoint_is_trusted_through_ssl_cert_file(https_server, monkeypatch):
    url, cert = https_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    model = OpenAIModel("canned", base_url=url, max_retries=0)
    try:
        assert isinstance(model._sender, CoreSender)
        answers = [await model.generate(GenerateRequest(prompt=f"p{n}")) for n in range(3)]
    finally:
        await model.aclose()
    assert all(answer.text for answer in answers)


async def test_an_https_endpoint_with_an_unknown_ca_fails_closed(https_server, monkeypatch):
    url, _cert = https_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    model = OpenAIModel("canned", base_url=url, max_retries=0)
    try:
        with pytest.raises(ModelError, match="ConnectError"):
            await model.generate(GenerateRequest(prompt="p"))
    finally:
        await model.aclose()


async def test_a_call_cancelled_just_as_its_tls_handshake_ends_is_cancelled(https_server):
    # Before: asyncio.wait_for around the handshake returned the TLS transport and dropped the
    # cancellation (CPython gh-86296 on Python 3.11): the call was sent and answered anyway.
    url, cert = https_server
    client = Pool(ssl.create_default_context(cafile=str(cert)), keepalive_expiry=5.0, max_idle=4)
    loop = asyncio.get_running_loop()
    victims = cancel_as_it_completes(loop, "start_tls")
    headers = [(b"Content-Type", b"application/json")]
    call = asyncio.ensure_future(client.request(b"POST", url + "/chat/completions", headers, b"{}",
                                                Timeouts(5.0, 5.0, 5.0)))
    victims.append(call)
    try:
        with pytest.raises(asyncio.CancelledError):
            await call
    finally:
        del loop.start_tls
        await client.aclose()
    assert call.cancelled()
