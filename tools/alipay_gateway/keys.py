"""The two RSA-2048 key pairs of the stand-in: Alipay's, which signs what the gateway answers and
sends, and the merchant app's, whose public half the gateway checks requests with.

They live as PEM files in the state directory, where the shop reads its half:

    alipay_private.pem  alipay_public.pem   the gateway's ("Alipay's") pair
    app_private.pem     app_public.pem      the merchant app's pair

Private keys are PKCS#1 ("BEGIN RSA PRIVATE KEY", what Alipay's key tool gives non-Java
merchants), public keys SubjectPublicKeyInfo ("BEGIN PUBLIC KEY", what the open platform shows
as "支付宝公钥"); `Cryptodome.PublicKey.RSA.importKey`, which python-alipay-sdk uses, reads both.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from Cryptodome.PublicKey import RSA

KEY_BITS = 2048


@dataclass(frozen=True)
class Keys:
    """Both pairs, loaded, and the PEM texts the SDK is constructed with."""

    alipay_private: RSA.RsaKey
    alipay_public: RSA.RsaKey
    app_private: RSA.RsaKey
    app_public: RSA.RsaKey
    app_private_pem: str
    """`AliPay(app_private_key_string=...)`: the merchant signs its requests with it."""
    alipay_public_pem: str
    """`AliPay(alipay_public_key_string=...)`: the merchant verifies answers and notifies with it."""


def ensure(state_dir: Path) -> Keys:
    """The key pairs in `state_dir`, made first where missing (the directory too).

    Idempotent, and safe when several processes call it at once (the gateway and the shop's
    start-up, say): a private key is published with a hard link, which fails if another process
    published one first, so every caller ends up with the same private key; a public key is then
    derived from the private key on disk, and is the same text whoever writes it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    alipay_private, alipay_public = _pair(state_dir, "alipay")
    app_private, app_public = _pair(state_dir, "app")
    return Keys(
        alipay_private=alipay_private,
        alipay_public=alipay_public,
        app_private=app_private,
        app_public=app_public,
        app_private_pem=(state_dir / "app_private.pem").read_text(),
        alipay_public_pem=(state_dir / "alipay_public.pem").read_text(),
    )


def _pair(state_dir: Path, owner: str) -> tuple[RSA.RsaKey, RSA.RsaKey]:
    private_path, public_path = state_dir / f"{owner}_private.pem", state_dir / f"{owner}_public.pem"
    if not private_path.exists():
        key = RSA.generate(KEY_BITS)
        _publish_once(private_path, key.export_key(format="PEM", pkcs=1))
    private = RSA.import_key(private_path.read_bytes())
    public_pem = private.public_key().export_key(format="PEM")
    if not public_path.exists() or public_path.read_bytes() != public_pem:
        _replace(public_path, public_pem)
    return private, private.public_key()


def _publish_once(path: Path, content: bytes) -> None:
    """Write `path` whole unless it exists: readers never see half a key, and the first writer wins."""
    # A private key is a secret even here: it stays 0600, as the temporary file is made.
    temporary = _temporary(path, content)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)


def _replace(path: Path, content: bytes) -> None:
    temporary = _temporary(path, content)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def _temporary(path: Path, content: bytes) -> str:
    """A new file (mode 0600) beside `path` holding `content`."""
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(descriptor, "wb") as file:
        file.write(content)
    return name
