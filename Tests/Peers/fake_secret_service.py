#!/usr/bin/env python3
"""A Secret Service provider for tests, with scripted faults.

Implements the Service, Collection, Item, Session (plain and
dh-ietf1024-sha256-aes128-cbc-pkcs7) and Prompt interfaces of the
freedesktop.org Secret Service API well enough for libsecret and
secret-tool, on the session bus of DBUS_SESSION_BUS_ADDRESS, and keeps its
items in a JSON state file (rewritten after every change, like a keyring
daemon's files), so a provider started again after a crash serves what the
crashed one had stored.

    fake_secret_service.py --state FILE [--replace] [--revivable]

Faults come from the JSON of $ODR_FAKE_FAULTS at start, and can be replaced
at any time with `org.odr.Fake.Configure(s json)` on /org/odr/Fake:

    locked            the default collection starts locked
    prompt            what an Unlock prompt does: "complete" (unlocks),
                      "dismiss" (the user dismissed it) or "never" (no answer)
    no_default        no "default" alias
    plain_only        refuse the DH session algorithm (libsecret falls back to plain)
    short_secrets     GetSecrets answers with one item fewer than asked
    strip_attributes  items' Attributes property is empty
    fail              [{"method": M, "at": N, "error": NAME, "message": TEXT}]:
                      the Nth call of method M fails (no "at": every call)
    delay             [{"method": M, "at": N, "seconds": S}]: the Nth call of M
                      is answered after S seconds (no "at": every call)
    crash             {"mutation": N, "when": "before"|"after"} or {"call": N}:
                      the process exits (status 70) at the Nth change (before
                      or after applying it, before replying) or the Nth call.
                      With --revivable it drops its bus connection instead
                      (to the bus and its clients, the same as exiting) and
                      comes back, from its state file, on SIGUSR1: a test
                      can crash it hundreds of times without restarting Python
    restore           a state file to copy over the current state first
    replace           {"call": N}: at the Nth call another provider (same
                      state file, new sessions) takes the bus name, as a
                      restarted daemon would; this one answers, then exits

`org.odr.Fake.Stats()` returns {"calls": N, "mutations": M, "methods": {...}},
counted since the last Configure.
"""

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from dbus_fast import Message, MessageType, NameFlag, RequestNameReply, Variant
from dbus_fast.aio import MessageBus

NAME = "org.freedesktop.secrets"
ROOT = "/org/freedesktop/secrets"
SECRET = "org.freedesktop.Secret"
PROPS = "org.freedesktop.DBus.Properties"
DH = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
# RFC 2409's second Oakley group, generator 2: the group of the DH session.
PRIME = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)
MUTATIONS = {"CreateItem", "Delete", "SetSecret", "Set", "SetAlias"}


class Failure(Exception):
    def __init__(self, name, text):
        super().__init__(text)
        self.name, self.text = name, text


def no_object(path):
    return Failure("org.freedesktop.Secret.Error.NoSuchObject", f"No such object: {path}")


def hkdf_sha256(ikm, length):
    prk = hmac.new(b"\0" * 32, ikm, hashlib.sha256).digest()
    return hmac.new(prk, b"\x01", hashlib.sha256).digest()[:length]


class Session:
    def __init__(self, key):
        self.key = key  # None: plain

    def encode(self, path, value, content_type):
        if self.key is None:
            return [path, b"", value, content_type]
        iv = os.urandom(16)
        padder = padding.PKCS7(128).padder()
        data = padder.update(value) + padder.finalize()
        encryptor = Cipher(algorithms.AES(self.key), modes.CBC(iv)).encryptor()
        return [path, iv, encryptor.update(data) + encryptor.finalize(), content_type]

    def decode(self, secret):
        _, parameters, value, content_type = secret
        if self.key is None:
            return bytes(value), content_type
        decryptor = Cipher(algorithms.AES(self.key), modes.CBC(bytes(parameters))).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        data = decryptor.update(bytes(value)) + decryptor.finalize()
        return unpadder.update(data) + unpadder.finalize(), content_type


class Provider:
    def __init__(self, bus, state_path, faults, on_crash):
        self.bus, self.state_path, self.faults, self.on_crash = bus, state_path, faults, on_crash
        self.dead = False
        self.sessions, self.prompts = {}, {}
        self.calls, self.mutations, self.methods = 0, 0, {}
        self.serial = 0
        if os.path.exists(state_path):
            with open(state_path) as f:
                self.state = json.load(f)
        else:
            now = int(time.time())
            self.state = {"collections": {"login": {"label": "Login", "locked": bool(faults.get("locked")),
                                                    "created": now, "items": {}}},
                          "aliases": {} if faults.get("no_default") else {"default": "login"}, "next": 1}
            self.save()

    # MARK: state

    def save(self):
        temporary = self.state_path + ".tmp"
        with open(temporary, "w") as f:
            json.dump(self.state, f)
        os.replace(temporary, self.state_path)

    def collection_id(self, path):
        if path.startswith(ROOT + "/collection/"):
            cid = path[len(ROOT + "/collection/"):]
        elif path.startswith(ROOT + "/aliases/"):
            cid = self.state["aliases"].get(path[len(ROOT + "/aliases/"):])
        else:
            return None
        return cid if cid in self.state["collections"] else None

    def item(self, path):
        parent, _, iid = path.rpartition("/")
        cid = self.collection_id(parent)
        if cid is None or iid not in self.state["collections"][cid]["items"]:
            raise no_object(path)
        collection = self.state["collections"][cid]
        return collection, collection["items"][iid]

    def item_paths(self, cid):
        return [f"{ROOT}/collection/{cid}/{iid}" for iid in self.state["collections"][cid]["items"]]

    def search(self, attributes, cids=None):
        unlocked, locked = [], []
        for cid, collection in self.state["collections"].items():
            if cids is not None and cid not in cids:
                continue
            for iid, item in collection["items"].items():
                if all(item["attributes"].get(k) == v for k, v in attributes.items()):
                    (locked if collection["locked"] else unlocked).append(f"{ROOT}/collection/{cid}/{iid}")
        return unlocked, locked

    def session(self, path):
        if path not in self.sessions:
            raise Failure("org.freedesktop.Secret.Error.NoSession", f"No session {path}")
        return self.sessions[path]

    def new_path(self, kind):
        self.serial += 1
        return f"{ROOT}/{kind}/p{self.serial}"

    # MARK: dispatch

    def handle(self, msg):
        if msg.message_type != MessageType.METHOD_CALL:
            return None
        if msg.interface == "org.odr.Fake":
            return self.control(msg)
        if msg.interface == "org.freedesktop.DBus.Introspectable":
            return Message.new_method_return(msg, "s", ["<node/>"])
        if msg.interface == "org.freedesktop.DBus.Peer":
            return Message.new_method_return(msg)
        asyncio.get_running_loop().create_task(self.answer(msg))
        return True

    def crash(self):
        self.dead = True
        self.on_crash()

    async def answer(self, msg):
        if self.dead:
            return
        self.calls += 1
        self.methods[msg.member] = self.methods.get(msg.member, 0) + 1
        nth = self.methods[msg.member]
        mutation = msg.member in MUTATIONS
        if mutation:
            self.mutations += 1
        crash = self.faults.get("crash") or {}
        if crash.get("call") == self.calls or (mutation and crash.get("mutation") == self.mutations
                                              and crash.get("when", "before") == "before"):
            return self.crash()
        replace = self.faults.get("replace") or {}
        if replace.get("call") == self.calls:
            await self.be_replaced()
            os._exit(0)
        for delay in self.faults.get("delay", []):
            if delay["method"] == msg.member and delay.get("at", nth) == nth:
                await asyncio.sleep(delay["seconds"])
        reply = None
        for fail in self.faults.get("fail", []):
            if fail["method"] == msg.member and fail.get("at", nth) == nth:
                reply = Message.new_error(msg, fail.get("error", "org.freedesktop.DBus.Error.Failed"),
                                          fail.get("message", "Injected failure"))
        if reply is None:
            try:
                reply = self.dispatch(msg)
            except Failure as failure:
                reply = Message.new_error(msg, failure.name, failure.text)
        if mutation and crash.get("mutation") == self.mutations and crash.get("when") == "after":
            return self.crash()
        if not self.dead:
            self.bus.send(reply)

    def dispatch(self, msg):
        member, path, body = msg.member, msg.path, msg.body
        if msg.interface == PROPS:
            return self.properties(msg)
        if msg.interface == SECRET + ".Service" and path == ROOT:
            return getattr(self, "service_" + member)(msg, *body)
        if msg.interface == SECRET + ".Collection" and self.collection_id(path) is not None:
            return getattr(self, "collection_" + member)(msg, self.collection_id(path), *body)
        if msg.interface == SECRET + ".Item":
            collection, item = self.item(path)
            return getattr(self, "item_" + member)(msg, path, collection, item, *body)
        if msg.interface == SECRET + ".Session" and member == "Close":
            self.sessions.pop(path, None)
            return Message.new_method_return(msg)
        if msg.interface == SECRET + ".Prompt" and path in self.prompts:
            return self.prompt(msg, path, member == "Dismiss")
        raise Failure("org.freedesktop.DBus.Error.UnknownMethod", f"No such interface '{msg.interface}' on object at path {path}")

    # MARK: Service

    def service_OpenSession(self, msg, algorithm, argument):
        path = self.new_path("session")
        if algorithm == "plain":
            self.sessions[path] = Session(None)
            return Message.new_method_return(msg, "vo", [Variant("s", ""), path])
        if algorithm == DH and not self.faults.get("plain_only"):
            private = int.from_bytes(os.urandom(128), "big") % (PRIME - 3) + 2
            shared = pow(int.from_bytes(bytes(argument.value), "big"), private, PRIME)
            self.sessions[path] = Session(hkdf_sha256(shared.to_bytes(128, "big"), 16))
            return Message.new_method_return(msg, "vo", [Variant("ay", pow(2, private, PRIME).to_bytes(128, "big")), path])
        raise Failure("org.freedesktop.DBus.Error.NotSupported", f"Algorithm {algorithm} is not supported")

    def service_SearchItems(self, msg, attributes):
        return Message.new_method_return(msg, "aoao", list(self.search(attributes)))

    def service_GetSecrets(self, msg, items, session_path):
        session = self.session(session_path)
        result = {}
        for path in items:
            try:
                collection, item = self.item(path)
            except Failure:
                continue
            if not collection["locked"]:
                result[path] = session.encode(session_path, base64.b64decode(item["secret"]), item["type"])
        if self.faults.get("short_secrets") and result:
            result.pop(sorted(result)[-1])
        return Message.new_method_return(msg, "a{o(oayays)}", [result])

    def service_ReadAlias(self, msg, name):
        cid = self.state["aliases"].get(name)
        return Message.new_method_return(msg, "o", [f"{ROOT}/collection/{cid}" if cid else "/"])

    def service_SetAlias(self, msg, name, path):
        cid = self.collection_id(path)
        if cid is None and path != "/":
            raise no_object(path)
        if cid is None:
            self.state["aliases"].pop(name, None)
        else:
            self.state["aliases"][name] = cid
        self.save()
        return Message.new_method_return(msg)

    def service_Unlock(self, msg, objects):
        return self.lock_or_unlock(msg, objects, unlock=True)

    def service_Lock(self, msg, objects):
        return self.lock_or_unlock(msg, objects, unlock=False)

    def service_CreateCollection(self, msg, properties, alias):
        raise Failure("org.freedesktop.DBus.Error.NotSupported", "This provider does not create collections")

    def lock_or_unlock(self, msg, objects, unlock):
        cids = set()
        for path in objects:
            cid = self.collection_id(path) or self.collection_id(path.rpartition("/")[0])
            if cid is not None:
                cids.add(cid)
        pending = [cid for cid in cids if self.state["collections"][cid]["locked"] == unlock]
        if unlock and pending:
            prompt = self.new_path("prompt")
            self.prompts[prompt] = (pending, list(objects))
            return Message.new_method_return(msg, "aoo", [[], prompt])
        for cid in pending:
            self.state["collections"][cid]["locked"] = True
        self.save()
        return Message.new_method_return(msg, "aoo", [list(objects), "/"])

    def prompt(self, msg, path, dismissed):
        cids, objects = self.prompts[path]
        mode = "dismiss" if dismissed else self.faults.get("prompt", "complete")
        if mode == "complete":
            for cid in cids:
                self.state["collections"][cid]["locked"] = False
            self.save()
            result = Variant("ao", objects)
        else:
            result = Variant("ao", [])
        if mode != "never":
            del self.prompts[path]
            self.bus.send(Message.new_signal(path, SECRET + ".Prompt", "Completed", "bv", [mode != "complete", result]))
        return Message.new_method_return(msg)

    # MARK: Collection

    def collection_SearchItems(self, msg, cid, attributes):
        unlocked, locked = self.search(attributes, {cid})
        return Message.new_method_return(msg, "ao", [unlocked + locked])

    def collection_CreateItem(self, msg, cid, properties, secret, replace):
        collection = self.state["collections"][cid]
        if collection["locked"]:
            raise Failure("org.freedesktop.Secret.Error.IsLocked", "The collection is locked")
        value, content_type = self.session(secret[0]).decode(secret)
        attributes = properties.get(SECRET + ".Item.Attributes", Variant("a{ss}", {})).value
        label = properties.get(SECRET + ".Item.Label", Variant("s", "")).value
        iid = next((iid for iid, item in collection["items"].items() if replace and item["attributes"] == attributes), None)
        if iid is None:
            iid = str(self.state["next"])
            self.state["next"] += 1
        now = int(time.time())
        collection["items"][iid] = {"label": label, "attributes": attributes, "type": content_type,
                                    "secret": base64.b64encode(value).decode(), "created": now, "modified": now}
        self.save()
        return Message.new_method_return(msg, "oo", [f"{ROOT}/collection/{cid}/{iid}", "/"])

    def collection_Delete(self, msg, cid):
        del self.state["collections"][cid]
        self.save()
        return Message.new_method_return(msg, "o", ["/"])

    # MARK: Item

    def item_GetSecret(self, msg, path, collection, item, session_path):
        if collection["locked"]:
            raise Failure("org.freedesktop.Secret.Error.IsLocked", "The item is locked")
        secret = self.session(session_path).encode(session_path, base64.b64decode(item["secret"]), item["type"])
        return Message.new_method_return(msg, "(oayays)", [secret])

    def item_SetSecret(self, msg, path, collection, item, secret):
        if collection["locked"]:
            raise Failure("org.freedesktop.Secret.Error.IsLocked", "The item is locked")
        value, item["type"] = self.session(secret[0]).decode(secret)
        item["secret"] = base64.b64encode(value).decode()
        self.save()
        return Message.new_method_return(msg)

    def item_Delete(self, msg, path, collection, item):
        if collection["locked"]:
            raise Failure("org.freedesktop.Secret.Error.IsLocked", "The item is locked")
        del collection["items"][path.rpartition("/")[2]]
        self.save()
        return Message.new_method_return(msg, "o", ["/"])

    # MARK: Properties

    def values(self, path, interface):
        if interface == SECRET + ".Service" and path == ROOT:
            return {"Collections": Variant("ao", [f"{ROOT}/collection/{cid}" for cid in self.state["collections"]])}
        cid = self.collection_id(path)
        if interface == SECRET + ".Collection" and cid is not None:
            collection = self.state["collections"][cid]
            return {"Items": Variant("ao", self.item_paths(cid)), "Label": Variant("s", collection["label"]),
                    "Locked": Variant("b", collection["locked"]), "Created": Variant("t", collection["created"]),
                    "Modified": Variant("t", collection["created"])}
        if interface == SECRET + ".Item":
            collection, item = self.item(path)
            attributes = {} if self.faults.get("strip_attributes") else item["attributes"]
            return {"Locked": Variant("b", collection["locked"]), "Attributes": Variant("a{ss}", attributes),
                    "Label": Variant("s", item["label"]), "Created": Variant("t", item["created"]),
                    "Modified": Variant("t", item["modified"])}
        raise Failure("org.freedesktop.DBus.Error.UnknownObject", f"No such interface '{interface}' on object at path {path}")

    def properties(self, msg):
        interface = msg.body[0]
        values = self.values(msg.path, interface)
        if msg.member == "GetAll":
            return Message.new_method_return(msg, "a{sv}", [values])
        name = msg.body[1]
        if name not in values:
            raise Failure("org.freedesktop.DBus.Error.InvalidArgs", f"No such property {name}")
        if msg.member == "Get":
            return Message.new_method_return(msg, "v", [values[name]])
        value = msg.body[2].value
        if interface == SECRET + ".Item":
            _, item = self.item(msg.path)
            item[name.lower()] = value
        elif interface == SECRET + ".Collection" and name == "Label":
            self.state["collections"][self.collection_id(msg.path)]["label"] = value
        self.save()
        return Message.new_method_return(msg)

    # MARK: control

    def control(self, msg):
        if msg.member == "Configure":
            self.faults = json.loads(msg.body[0])
            self.calls, self.mutations, self.methods = 0, 0, {}
            if "restore" in self.faults:
                with open(self.faults["restore"]) as f:
                    self.state = json.load(f)
                self.save()
            return Message.new_method_return(msg)
        if msg.member == "Stats":
            stats = {"calls": self.calls, "mutations": self.mutations, "methods": self.methods}
            return Message.new_method_return(msg, "s", [json.dumps(stats)])
        return Message.new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", msg.member)

    async def be_replaced(self):
        """Starts another provider that takes the bus name and waits until it has."""
        subprocess.Popen([sys.executable, __file__, "--replace", "--state", self.state_path],
                         stdin=subprocess.DEVNULL, env={k: v for k, v in os.environ.items() if k != "ODR_FAKE_FAULTS"})
        me = self.bus.unique_name
        for _ in range(400):
            reply = await self.bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                                interface="org.freedesktop.DBus", member="GetNameOwner",
                                                signature="s", body=[NAME]))
            if reply.message_type == MessageType.METHOD_RETURN and reply.body[0] != me:
                break
            await asyncio.sleep(0.01)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", required=True)
    parser.add_argument("--replace", action="store_true")
    parser.add_argument("--revivable", action="store_true")
    options = parser.parse_args()
    faults = json.loads(os.environ.get("ODR_FAKE_FAULTS") or "{}")
    loop = asyncio.get_running_loop()
    # A parent may have started us with signals blocked (Foundation's Process does).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGTERM})
    revive = asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, revive.set)
    while True:
        bus = await MessageBus().connect()
        crashed = asyncio.Event()
        on_crash = crashed.set if options.revivable else (lambda: os._exit(70))
        provider = Provider(bus, options.state, faults, on_crash)
        bus.add_message_handler(provider.handle)
        flags = NameFlag.REPLACE_EXISTING if options.replace else NameFlag.ALLOW_REPLACEMENT
        reply = await bus.request_name(NAME, flags)
        if reply != RequestNameReply.PRIMARY_OWNER:
            sys.exit(f"fake_secret_service: could not own {NAME} ({reply})")
        disconnected = asyncio.ensure_future(bus.wait_for_disconnect())
        await asyncio.wait([disconnected, asyncio.ensure_future(crashed.wait())], return_when=asyncio.FIRST_COMPLETED)
        if not crashed.is_set():
            return
        bus.disconnect()
        revive.clear()
        await revive.wait()
        faults = {}


if __name__ == "__main__":
    asyncio.run(main())
