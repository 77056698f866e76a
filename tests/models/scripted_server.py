"""A real HTTP server on 127.0.0.1 that answers from a script, for retry and fallback tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    """Each POST pops the next (status, body, headers) reply; every request body is recorded."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", 0))
                owner.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length)),
                                       "auth": self.headers.get("authorization")})
                status, body, headers = owner.replies.pop(0) if owner.replies else (500, "script empty", {})
                if status == "hang":
                    threading.Event().wait(body)
                    status, body, headers = 200, chat_reply("late"), {}
                payload = body if isinstance(body, str) else json.dumps(body)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload.encode())))
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def chat_reply(content, *, prompt_tokens=10, completion_tokens=5, logprobs=None):
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"choices": [choice], "usage": {"prompt_tokens": prompt_tokens,
                                           "completion_tokens": completion_tokens}}
