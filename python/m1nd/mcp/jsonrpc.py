"""JSON-RPC 2.0 on the wire for both MCP transports: compact serialisation, responses, and decoding one
line/body into a :class:`Message` or a ready error response (spec mcp.md §1; standard library only).

Strict where JSON is loose: NaN/Infinity constants, non-finite numbers and invalid ids are refused with the
JSON-RPC error codes (-32700 parse error, -32600 invalid request), and an oversized message is answered without
being buffered whole.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


# -- serialisation --------------------------------------------------------------------------------------------------
def dumps(obj: Any) -> str:
    """Compact JSON, UTF-8 friendly; NaN/Infinity are refused (they are not JSON)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def to_wire(text: str) -> bytes:
    # Lone surrogates (undecodable file names) become JSON \udcXX escapes instead of invalid UTF-8.
    return text.encode("utf-8", "backslashreplace")


def error_response(req_id: Any, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return to_wire(dumps({"jsonrpc": "2.0", "id": req_id, "error": err}))


def result_response(req_id: Any, result: Any) -> bytes:
    return to_wire(dumps({"jsonrpc": "2.0", "id": req_id, "result": result}))


# -- decoding -------------------------------------------------------------------------------------------------------
@dataclass
class Message:
    """One decoded JSON-RPC message. ``kind`` is ``request``, ``notification``, ``response`` (a client's answer to
    a server request; m1nd sends none, so those are ignored) or ``ignored`` (a batch needing no answer)."""

    kind: str
    method: str | None = None
    id: Any = None
    params: Any = None
    result: Any = None  # of a response (to a server request such as roots/list)
    error: Any = None

    @property
    def is_request(self) -> bool:
        return self.kind == "request"


class DecodeError(Exception):
    def __init__(self, response: bytes) -> None:
        super().__init__("undecodable message")
        self.response = response


def valid_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def oversized_error() -> bytes:
    return error_response(None, INVALID_REQUEST,
                          f"invalid request: message exceeds {MAX_MESSAGE_BYTES} bytes (4 MiB)")


def _refuse_constant(name: str) -> Any:
    # NaN / Infinity are not JSON (Python's parser accepts them); refusing them here keeps every id and argument
    # serialisable in the answer.
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    x = float(text)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return x


def _parse(raw: bytes | str) -> Any:
    return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)


def _salvage_id(raw: bytes | str) -> Any:
    """The id of a message refused only for a number JSON cannot carry (NaN, 1e999 elsewhere in it), so the error
    still names the request; None when there is no such id."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    got = obj.get("id")
    try:
        dumps(got)
    except (ValueError, TypeError):
        return None
    return got


def _batch_errors(items: list[Any]) -> bytes | None:
    """Answer a batch: one error per request in it, each echoing its id (m1nd does not run batches; MCP dropped
    them in 2025-06-18). A batch of notifications and responses only gets no answer, as JSON-RPC requires."""
    if not items:
        return error_response(None, INVALID_REQUEST, "invalid request: empty batch (batches are not supported)")
    errors = []
    for item in items:
        if isinstance(item, dict) and "id" in item and not ("method" not in item and ("result" in item
                                                                                     or "error" in item)):
            errors.append({"jsonrpc": "2.0", "id": item["id"], "error": {
                "code": INVALID_REQUEST, "message": "invalid request: batches are not supported; send each "
                                                    "message on its own"}})
        elif not (isinstance(item, dict) and (isinstance(item.get("method"), str) or "result" in item
                                              or "error" in item)):
            errors.append({"jsonrpc": "2.0", "id": None, "error": {
                "code": INVALID_REQUEST, "message": "invalid request: batches are not supported; send each "
                                                    "message on its own"}})
    return to_wire(dumps(errors)) if errors else None


def decode(raw: bytes | str) -> Message:
    """Parse one line/body. Raises :class:`DecodeError` carrying the error response to send; a message needing no
    answer at all (a batch of notifications) decodes to kind ``ignored``."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise DecodeError(oversized_error())
    try:
        obj = _parse(raw)
    except json.JSONDecodeError as e:
        raise DecodeError(error_response(None, PARSE_ERROR,
                                         f"parse error: {e.msg} at line {e.lineno} column {e.colno}")) from None
    except (ValueError, RecursionError) as e:  # bad UTF-8, NaN, 1e999, integers over 4300 digits, deep nesting
        raise DecodeError(error_response(_salvage_id(raw), PARSE_ERROR, f"parse error: {e}")) from None
    if isinstance(obj, list):
        batch = _batch_errors(obj)
        if batch is None:
            return Message("ignored")
        raise DecodeError(batch)
    if not isinstance(obj, dict):
        raise DecodeError(error_response(None, INVALID_REQUEST, "invalid request: expected a JSON object"))
    has_id = "id" in obj
    req_id = obj.get("id")
    method = obj.get("method")
    if "method" not in obj and ("result" in obj or "error" in obj):
        return Message("response", id=req_id, result=obj.get("result"), error=obj.get("error"))
    if not has_id and isinstance(method, str):
        return Message("notification", method=method, params=obj.get("params"))  # never answered, even if bad
    if has_id and not valid_id(req_id):
        # The id is echoed as given (JSON-RPC: the response carries the request's id), so the client can match
        # the refusal to what it sent.
        raise DecodeError(error_response(req_id, INVALID_REQUEST,
                                         "invalid request: 'id' must be a string or an integer"))
    if obj.get("jsonrpc") != "2.0":
        raise DecodeError(error_response(req_id, INVALID_REQUEST, "invalid request: 'jsonrpc' must be \"2.0\""))
    if not isinstance(method, str):
        raise DecodeError(error_response(req_id, INVALID_REQUEST, "invalid request: 'method' must be a string"))
    if not has_id:  # pragma: no cover — handled above
        return Message("notification", method=method, params=obj.get("params"))
    return Message("request", method=method, id=req_id, params=obj.get("params"))


# -- sessions and calls ---------------------------------------------------------------------------------------------
