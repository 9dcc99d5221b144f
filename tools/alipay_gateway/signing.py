"""RSA2 as the open platform does it: SHA256withRSA, PKCS#1 v1.5, base64 without line breaks,
over a "content" string made of the parameters sorted by name and joined `k=v&k=v`, raw
(not URL-encoded).

Which parameters make the content depends on the direction:

- a request the merchant sends: every parameter but `sign`, `sign_type` included
  (python-alipay-sdk's `sign_data`), leaving out empty values as Alipay does;
- what Alipay sends the merchant (the async notify, the sync return to return_url): every
  parameter but `sign` and `sign_type` (the SDK's `verify` pops `sign_type` before checking);
- an API answer: the exact JSON text of the `<method>_response` object as it stands in the body.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping

from Cryptodome.Hash import SHA256
from Cryptodome.PublicKey import RSA
from Cryptodome.Signature import pkcs1_15


def content(params: Mapping[str, str], leave_out: Iterable[str]) -> str:
    """The string that is signed: `params` but `leave_out` and empty values, sorted by name."""
    skipped = set(leave_out)
    return "&".join(f"{name}={value}" for name, value in sorted(params.items()) if name not in skipped and value)


def request_content(params: Mapping[str, str]) -> str:
    return content(params, leave_out={"sign"})


def callback_content(params: Mapping[str, str]) -> str:
    """What a notify or a sync return is signed over."""
    return content(params, leave_out={"sign", "sign_type"})


def sign(text: str, key: RSA.RsaKey) -> str:
    return base64.b64encode(pkcs1_15.new(key).sign(SHA256.new(text.encode("utf-8")))).decode("ascii")


def verify(text: str, signature: str, key: RSA.RsaKey) -> bool:
    """Whether `signature` is `key`'s over `text`; False for anything that is not base64 too."""
    try:
        raw = base64.b64decode(signature, validate=True)
        pkcs1_15.new(key).verify(SHA256.new(text.encode("utf-8")), raw)
    except (ValueError, TypeError, binascii.Error):
        return False
    return True


def signed_callback(params: Mapping[str, str], key: RSA.RsaKey) -> dict[str, str]:
    """`params` with `sign_type` and `sign` added, as Alipay sends a notify or a sync return."""
    sent = {name: value for name, value in params.items() if value}
    sent["sign_type"] = "RSA2"
    sent["sign"] = sign(callback_content(sent), key)
    return sent


def response_body(method: str, answer: Mapping[str, object], key: RSA.RsaKey) -> bytes:
    """An API answer: `{"<method>_response": answer, "sign": ...}`. The SDK cuts the answer's text
    out of the body by counting braces and verifies those very characters, so the answer is
    serialized once and the same text is both signed and sent."""
    text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    name = method.replace(".", "_") + "_response"
    return f'{{"{name}":{text},"sign":"{sign(text, key)}"}}'.encode()


def error_body(code: str, msg: str, sub_code: str, sub_msg: str) -> bytes:
    """A protocol-level refusal (bad signature, app_id, method...): unsigned, as `error_response`,
    which the SDK turns into an AliPayException."""
    error = {"code": code, "msg": msg, "sub_code": sub_code, "sub_msg": sub_msg}
    return json.dumps({"error_response": error}, ensure_ascii=False, separators=(",", ":")).encode()
