"""A loopback Meilisearch for tests: the endpoints merchant calls, with Meilisearch's documented shapes.

Implements GET/POST /indexes, GET /indexes/{uid}, PATCH /indexes/{uid}/settings, POST and DELETE
/indexes/{uid}/documents, DELETE /indexes/{uid}/documents/{id}, POST /indexes/{uid}/search and
GET /tasks/{uid}. Writes are tasks (202 + taskUid) that "succeed" at once. Search follows the
default `matchingStrategy: last` (drop words from the end until something matches) with
Meilisearch's Japanese normalisation approximated by NFKC + lower case + katakana->hiragana, and
applies `filter` expressions of the form `attr = value AND attr > number`.

`mode` switches failures: "ok", "error" (500 on every call), "slow" (sleep `delay` seconds first),
"garbage" (200 with a body that is not Meilisearch's). Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
import unicodedata
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jaconv


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _fold(text: str) -> str:
    return jaconv.kata2hira(unicodedata.normalize("NFKC", text).lower())


class FakeMeilisearch:
    def __init__(self, master_key: str | None = "test-master-key"):
        self.master_key = master_key
        self.mode = "ok"
        self.delay = 1.0
        self.indexes: dict[str, dict] = {}
        self.tasks: dict[int, dict] = {}
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw and raw not in (b"null", b"") else None
                url = urlsplit(self.path)
                record = {
                    "method": self.command,
                    "path": url.path,
                    "query": parse_qs(url.query),
                    "body": body,
                    "authorization": self.headers.get("Authorization"),
                }
                with fake._lock:
                    fake.requests.append(record)
                status, answer = fake.answer(self.command, url.path, parse_qs(url.query), body, record["authorization"])
                data = answer if isinstance(answer, bytes) else json.dumps(answer, ensure_ascii=False).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> FakeMeilisearch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- behaviour ---

    def _error(self, status: int, code: str, message: str, type_: str = "invalid_request"):
        return status, {
            "message": message,
            "code": code,
            "type": type_,
            "link": f"https://docs.meilisearch.com/errors#{code}",
        }

    def _task(self, index_uid: str | None, type_: str, details: dict | None = None):
        with self._lock:
            uid = len(self.tasks)
            now = _now()
            self.tasks[uid] = {
                "uid": uid,
                "indexUid": index_uid,
                "status": "succeeded",
                "type": type_,
                "details": details or {},
                "error": None,
                "duration": "PT0.001S",
                "enqueuedAt": now,
                "startedAt": now,
                "finishedAt": now,
            }
        return 202, {"taskUid": uid, "indexUid": index_uid, "status": "enqueued", "type": type_, "enqueuedAt": now}

    def _index(self, uid: str, primary_key: str | None = None) -> dict:
        if uid not in self.indexes:
            now = _now()
            self.indexes[uid] = {
                "uid": uid,
                "primaryKey": primary_key,
                "createdAt": now,
                "updatedAt": now,
                "settings": {},
                "documents": {},
            }
        return self.indexes[uid]

    def answer(self, method, path, query, body, authorization):
        if self.mode == "slow":
            time.sleep(self.delay)
        if self.mode == "error":
            return self._error(500, "internal", "Internal server error", "internal")
        if self.mode == "garbage":
            return 200, b"<html>gateway</html>"
        # Meilisearch started without a master key takes every request; with one, only that key.
        if self.master_key is not None and authorization != f"Bearer {self.master_key}":
            return self._error(403, "invalid_api_key", "The provided API key is invalid.", "auth")
        parts = [p for p in path.split("/") if p]
        if parts == ["indexes"] and method == "POST":
            self._index(body["uid"], body.get("primaryKey"))
            return self._task(body["uid"], "indexCreation")
        if parts[:1] == ["tasks"] and len(parts) == 2 and method == "GET":
            task = self.tasks.get(int(parts[1]))
            return (200, task) if task else self._error(404, "task_not_found", "Task not found.")
        if parts[:1] != ["indexes"] or len(parts) < 2:
            return self._error(404, "not_found", "Not found.")
        uid, rest = parts[1], parts[2:]
        if rest == [] and method == "GET":
            if uid not in self.indexes:
                return self._error(404, "index_not_found", f"Index `{uid}` not found.")
            info = self.indexes[uid]
            return 200, {k: info[k] for k in ("uid", "primaryKey", "createdAt", "updatedAt")}
        if rest == ["settings"] and method == "PATCH":
            self._index(uid)["settings"].update(body)
            return self._task(uid, "settingsUpdate")
        if rest == ["documents"] and method == "POST":
            index = self._index(uid, (query.get("primaryKey") or [None])[0])
            key = index["primaryKey"] or "id"
            for doc in body:
                index["documents"][doc[key]] = doc
            return self._task(uid, "documentAdditionOrUpdate", {"receivedDocuments": len(body)})
        if rest == ["documents"] and method == "DELETE":
            self._index(uid)["documents"].clear()
            return self._task(uid, "documentDeletion")
        if len(rest) == 2 and rest[0] == "documents" and method == "DELETE":
            self._index(uid)["documents"].pop(int(rest[1]), None)
            return self._task(uid, "documentDeletion")
        if rest == ["search"] and method == "POST":
            if uid not in self.indexes:
                return self._error(404, "index_not_found", f"Index `{uid}` not found.")
            return self._search(self.indexes[uid], body)
        return self._error(404, "not_found", "Not found.")

    def _matches_filter(self, doc: dict, expression: str | None, filterable: list[str]) -> bool:
        if not expression:
            return True
        for clause in expression.split(" AND "):
            m = re.fullmatch(r"\s*(\w+)\s*(=|>|>=|<|<=)\s*(\S+)\s*", clause)
            if not m:
                raise ValueError(clause)
            attr, op, raw = m.groups()
            if attr not in filterable:
                raise KeyError(attr)
            value = doc.get(attr)
            target = {"true": True, "false": False}.get(raw, raw)
            if op == "=":
                if value != target and str(value) != str(target):
                    return False
            elif not eval(f"{float(value)} {op} {float(target)}"):  # noqa: S307 - numbers only
                return False
        return True

    def _search(self, index: dict, body: dict):
        started = time.perf_counter()
        q = body.get("q") or ""
        limit = body.get("limit", 20)
        searchable = index["settings"].get("searchableAttributes") or ["*"]
        filterable = index["settings"].get("filterableAttributes") or []
        try:
            docs = [d for d in index["documents"].values() if self._matches_filter(d, body.get("filter"), filterable)]
        except KeyError as exc:
            return self._error(400, "invalid_search_filter", f"Attribute `{exc.args[0]}` is not filterable.")
        except ValueError:
            return self._error(400, "invalid_search_filter", "Was expecting an operation.")

        def text(doc):
            fields = doc.keys() if searchable == ["*"] else searchable
            values = []
            for f in fields:
                v = doc.get(f)
                values.extend(v if isinstance(v, list) else [v])
            return _fold(" ".join(str(v) for v in values if v is not None))

        words = _fold(q).split()
        hits = docs
        if words:
            hits = []
            for n in range(len(words), 0, -1):  # matchingStrategy "last"
                hits = [d for d in docs if all(w in text(d) for w in words[:n])]
                if hits:
                    break
        attrs = body.get("attributesToRetrieve")
        out = [{k: v for k, v in d.items() if attrs is None or k in attrs or attrs == ["*"]} for d in hits[:limit]]
        return 200, {
            "hits": out,
            "query": q,
            "processingTimeMs": int((time.perf_counter() - started) * 1000),
            "limit": limit,
            "offset": body.get("offset", 0),
            "estimatedTotalHits": len(hits),
        }
