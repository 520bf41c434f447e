#!/usr/bin/env python3
"""A test-side age v1 peer for hybrid post-quantum (mlkem768x25519) files,
written for odr's tests on pyca/cryptography's HPKE (MLKEM768_X25519, that
is X-Wing), independently of odr's Swift code and of swift-crypto.

  age_pq.py keygen                  prints an AGE-SECRET-KEY-PQ-1… identity, then its age1pq1… recipient
  age_pq.py encrypt IN OUT RECIPIENT...   plaintext IN → age file OUT
  age_pq.py decrypt IN OUT IDENTITY       age file IN → plaintext OUT
"""
import base64, hashlib, hmac, os, sys
from cryptography.hazmat.primitives import hashes, hpke
from cryptography.hazmat.primitives.asymmetric import mlkem, x25519
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
SUITE = hpke.Suite(hpke.KEM.MLKEM768_X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)
INFO = b"age-encryption.org/mlkem768x25519"
CHUNK = 64 * 1024


def polymod(values):
    generator = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for value in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i in range(5):
            chk ^= generator[i] if (top >> i) & 1 else 0
    return chk


def expand(hrp):
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def regroup(data, frm, to, pad):
    acc, bits, out = 0, 0, []
    for value in data:
        acc, bits = (acc << frm) | value, bits + frm
        while bits >= to:
            bits -= to
            out.append((acc >> bits) & ((1 << to) - 1))
    if pad and bits:
        out.append((acc << (to - bits)) & ((1 << to) - 1))
    elif not pad and (bits >= frm or (acc << (to - bits)) & ((1 << to) - 1)):
        raise ValueError("non-canonical padding")
    return out


def bech32_encode(hrp, data):
    words = regroup(data, 8, 5, True)
    mod = polymod(expand(hrp) + words + [0] * 6) ^ 1
    return hrp + "1" + "".join(CHARSET[w] for w in words + [(mod >> 5 * (5 - i)) & 31 for i in range(6)])


def bech32_decode(text):
    text = text.lower()
    hrp, _, rest = text.rpartition("1")
    words = [CHARSET.index(c) for c in rest]
    if polymod(expand(hrp) + words) != 1:
        raise ValueError("bad checksum")
    return hrp, bytes(regroup(words[:-6], 5, 8, False))


def keys(seed):
    expanded = hashlib.shake_256(seed).digest(96)  # X-Wing's key expansion
    kem, dh = mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64]), x25519.X25519PrivateKey.from_private_bytes(expanded[64:])
    public = kem.public_key().public_bytes_raw() + dh.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return hpke.MLKEM768X25519PrivateKey(kem, dh), public


def public_key(raw):
    return hpke.MLKEM768X25519PublicKey(mlkem.MLKEM768PublicKey.from_public_bytes(raw[:1184]), x25519.X25519PublicKey.from_public_bytes(raw[1184:]))


def hkdf(ikm, salt, info):
    return HKDF(hashes.SHA256(), 32, salt, info).derive(ikm)


def b64(data):
    return base64.b64encode(data).decode().rstrip("=")


def unb64(text):
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def nonce(counter, last):
    return counter.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def encrypt(recipients, plaintext):
    file_key = os.urandom(16)
    header = "age-encryption.org/v1\n"
    for text in recipients:
        hrp, raw = bech32_decode(text)
        assert hrp == "age1pq" and len(raw) == 1216, "not an age1pq1 recipient"
        sealed = SUITE.encrypt(file_key, public_key(raw), INFO)
        enc, body = sealed[:1120], b64(sealed[1120:])
        header += "-> mlkem768x25519 " + b64(enc) + "\n"
        header += "".join(body[i:i + 64] + "\n" for i in range(0, len(body) - len(body) % 64, 64)) + body[len(body) - len(body) % 64:] + "\n"
    header += "---"
    mac = hmac.new(hkdf(file_key, b"", b"header"), header.encode(), hashlib.sha256).digest()
    stream_nonce = os.urandom(16)
    key = ChaCha20Poly1305(hkdf(file_key, stream_nonce, b"payload"))
    chunks = [plaintext[i:i + CHUNK] for i in range(0, len(plaintext), CHUNK)] or [b""]
    payload = b"".join(key.encrypt(nonce(i, i == len(chunks) - 1), chunk, None) for i, chunk in enumerate(chunks))
    return (header + " " + b64(mac) + "\n").encode() + stream_nonce + payload


def decrypt(identity, data):
    hrp, seed = bech32_decode(identity)
    assert hrp == "age-secret-key-pq-" and len(seed) == 32, "not an AGE-SECRET-KEY-PQ-1 identity"
    private, _ = keys(seed)
    lines, position = [], 0
    while True:
        end = data.index(b"\n", position)
        lines.append(data[position:end].decode())
        position = end + 1
        if lines[-1].startswith("--- "):
            break
    assert lines[0] == "age-encryption.org/v1"
    file_key, index = None, 1
    while not lines[index].startswith("---"):
        arguments = lines[index][3:].split(" ")
        body, index = "", index + 1
        while True:
            body += lines[index]
            index += 1
            if len(lines[index - 1]) < 64:
                break
        if arguments[0] == "mlkem768x25519" and file_key is None:
            try:
                file_key = SUITE.decrypt(unb64(arguments[1]) + unb64(body), private, INFO)
            except Exception:
                pass
    assert file_key is not None, "no identity matched"
    mac_input = data[:data.index(b"\n--- ") + 4]
    assert hmac.compare_digest(hmac.new(hkdf(file_key, b"", b"header"), mac_input, hashlib.sha256).digest(), unb64(lines[-1][4:])), "bad header MAC"
    key = ChaCha20Poly1305(hkdf(file_key, data[position:position + 16], b"payload"))
    payload, out, counter = data[position + 16:], b"", 0
    for start in range(0, len(payload), CHUNK + 16):
        out += key.decrypt(nonce(counter, start + CHUNK + 16 >= len(payload)), payload[start:start + CHUNK + 16], None)
        counter += 1
    return out


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "keygen":
        seed = os.urandom(32)
        print(bech32_encode("age-secret-key-pq-", seed).upper())
        print(bech32_encode("age1pq", keys(seed)[1]))
    elif command in ("encrypt", "decrypt"):
        data = open(sys.argv[2], "rb").read()
        result = encrypt(sys.argv[4:], data) if command == "encrypt" else decrypt(sys.argv[4], data)
        open(sys.argv[3], "wb").write(result)
