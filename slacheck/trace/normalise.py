"""One normaliser for endpoint values: a URL (or a bare host) written by a producer → its host."""

from __future__ import annotations

import re

import ibis
import ibis.expr.types as ir

#: ``scheme://`` at the start of a URL (RFC 3986: a letter, then letters, digits, + . -)
_SCHEME = r"^[A-Za-z][A-Za-z0-9+.\-]*://"
#: ``user:password@`` before the host
_USERINFO = r"^[^/?#@]*@"
#: the authority ends at the first path, query or fragment character
_AUTHORITY = r"^([^/?#]*)"
#: a bracketed IPv6 literal, with or without a port
_IPV6 = r"^\[([^\]]*)\]"
#: ``:port`` after a host name or IPv4 address
_PORT = r":[0-9]*$"


def host_of(url: str | None) -> str | None:
    """The host of ``url``, lower case: ``http://Proxy.local:4000/v1/`` → ``proxy.local``;
    ``api.openai.com`` (no scheme) stays itself; ``[::1]:8080`` → ``::1``; None for an empty
    value. The reference the engine expression ``host_expr`` is held to."""
    if url is None:
        return None
    text = url.strip()
    text = re.sub(_SCHEME, "", text)
    authority = re.match(_AUTHORITY, text)
    text = authority.group(1) if authority else ""
    text = re.sub(_USERINFO, "", text)
    if text.startswith("["):
        ipv6 = re.match(_IPV6, text)
        text = ipv6.group(1) if ipv6 else ""
    else:
        text = re.sub(_PORT, "", text)
    text = text.rstrip(".").lower()
    return text or None


def host_expr(url: ir.StringValue) -> ir.StringValue:
    """``host_of`` as an engine expression over a column of URLs (no per-row Python)."""
    text = url.strip().re_replace(_SCHEME, "")
    text = text.re_extract(_AUTHORITY, 1)
    text = text.re_replace(_USERINFO, "")
    ipv6 = text.re_extract(_IPV6, 1)
    text = ibis.ifelse(text.startswith("["), ipv6, text.re_replace(_PORT, ""))
    text = text.re_replace(r"\.+$", "").lower()
    return ibis.ifelse(text == "", ibis.null("string"), text)
