#!/usr/bin/env python3
"""A test-side peer for odr's hybrid post-quantum signatures (Ed25519 +
ML-DSA-65, docs/trust.md), written on pyca/cryptography independently of
odr's Swift code and of swift-crypto.

A key's text is `ed25519-mldsa65:` + base64(Ed25519 public key, 32 bytes ‖
ML-DSA-65 public key, 1,952 bytes); a signature is base64(Ed25519
signature, 64 bytes ‖ ML-DSA-65 signature, 3,309 bytes), both over the same
message (ML-DSA-65 pure, empty context).

  hybrid_sig.py sign MESSAGE_FILE           a new key signs the file's bytes: prints `KEY SIGNATURE`
  hybrid_sig.py verify MESSAGE_FILE KEY SIGNATURE   exit 0 when both halves verify, else 1
"""
import base64, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed25519, mldsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

PREFIX = "ed25519-mldsa65:"


def sign(message):
    classic, quantum = ed25519.Ed25519PrivateKey.generate(), mldsa.MLDSA65PrivateKey.generate()
    public = classic.public_key().public_bytes_raw() + quantum.public_key().public_bytes_raw()
    signature = classic.sign(message) + quantum.sign(message)
    print(PREFIX + base64.b64encode(public).decode(), base64.b64encode(signature).decode())


def verify(message, key, signature):
    if not key.startswith(PREFIX):
        return False
    public, raw = base64.b64decode(key[len(PREFIX):], validate=True), base64.b64decode(signature, validate=True)
    if len(public) != 32 + 1952 or len(raw) != 64 + 3309:
        return False
    try:
        ed25519.Ed25519PublicKey.from_public_bytes(public[:32]).verify(raw[:64], message)
        mldsa.MLDSA65PublicKey.from_public_bytes(public[32:]).verify(raw[64:], message)
    except InvalidSignature:
        return False
    return True


if __name__ == "__main__":
    with open(sys.argv[2], "rb") as file:
        message = file.read()
    if sys.argv[1] == "sign":
        sign(message)
    else:
        sys.exit(0 if verify(message, sys.argv[3], sys.argv[4]) else 1)
