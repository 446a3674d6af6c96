"""Who may call the server: the API token (or none, on loopback only) and the Host names it
answers to. Built once by `lemmata serve` from its bind address and options; enforced by
lemmata.server.guard."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from lemmata.errors import UserError

TOKEN_VARIABLE = "LEMMATA_API_TOKEN"
#: The names a browser on this machine uses for the loopback interface, as a Host header has them.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: Bind addresses meaning "every interface": no Host header names them.
WILDCARD_BINDS = ("0.0.0.0", "::", "")


def new_token() -> str:
    """A token for one run of the server: 256 random bits, URL-safe (it travels in the page URL)."""
    return secrets.token_urlsafe(32)


def is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(address: str) -> str:
    """An address as it appears in a Host header or URL: IPv6 in brackets, lower case."""
    address = address.strip().lower()
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


@dataclass(frozen=True)
class ServerAccess:
    """`token`: what every /api call must carry as `Authorization: Bearer`; None only on loopback
    (`--no-token`). `hosts`: the Host header values this server answers, `name:port`; any other
    is a request for another name that resolves here (DNS rebinding) and is refused.
    `page_url`: where a researcher opens the page."""

    token: str | None
    hosts: frozenset[str]
    page_url: str

    @classmethod
    def for_bind(cls, bind: str, port: int, token: str | None, allow_hosts: Iterable[str] = ()) -> ServerAccess:
        """The access of a server bound to `bind`:`port`. Loopback names always reach it (a
        rebinding page cannot make a browser send them); the bound address too, unless it is a
        wildcard; and each `allow_hosts` name (how others reach a server on 0.0.0.0)."""
        if token is None and not is_loopback(bind):
            raise UserError(
                f"--no-token is for loopback only: --host {bind} listens beyond this machine, where "
                f"anyone who reaches the port could drive runs; drop --no-token (a token is made and "
                f"printed) or set {TOKEN_VARIABLE}"
            )
        names = {*LOOPBACK_NAMES, *(host_name(h) for h in allow_hosts if h.strip())}
        if bind not in WILDCARD_BINDS:
            names.add(host_name(bind))
        hosts = {f"{name}:{port}" for name in names}
        if port == 80:  # a browser leaves the default port out of the Host header
            hosts |= names
        shown = "127.0.0.1" if bind in WILDCARD_BINDS else host_name(bind)
        return cls(token=token, hosts=frozenset(hosts), page_url=f"http://{shown}:{port}/")

    def described_hosts(self) -> str:
        return ", ".join(sorted(self.hosts))
