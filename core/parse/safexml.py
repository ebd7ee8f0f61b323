"""XML from the web, parsed with a hardened parser (defusedxml): entity declarations (the "billion
laughs" expansion), external entities and DTD references are refused by name, never expanded or
fetched; malformed XML is refused with the parser's line and column."""

from __future__ import annotations

from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree as SafeET


class BadXML(ValueError):
    """XML refused: hostile (entities, external references) or malformed; the message says which.
    `kind` names the refusal ("entities", "external entity", "external reference", "hostile",
    "malformed"), `detail` its particulars (the entity's address; "mismatched tag at line 3, column 5"),
    for callers that word it for their own readers (core/parse/wxr.py)."""

    def __init__(self, message: str, kind: str = "other", detail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail


def parse_xml(data: bytes) -> Element:
    """The document's root element; BadXML naming why it was refused."""
    try:
        return SafeET.fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except defusedxml.EntitiesForbidden as exc:
        if exc.sysid or exc.pubid:
            target = exc.sysid or exc.pubid
            raise BadXML(
                f"hostile XML refused: the entity {exc.name!r} is an external resource ({target}), which "
                "is never fetched",
                "external entity",
                target,
            ) from None
        raise BadXML(
            f"hostile XML refused: it declares the entity {exc.name!r} (entity expansion is not allowed)",
            "entities",
            exc.name,
        ) from None
    except defusedxml.ExternalReferenceForbidden as exc:
        target = exc.sysid or exc.pubid or "?"
        raise BadXML(
            f"hostile XML refused: it refers to an external resource ({target})", "external reference", target
        ) from None
    except defusedxml.DefusedXmlException as exc:  # DTD processing and the like
        raise BadXML(f"hostile XML refused: {exc}", "hostile", str(exc)) from None
    except ParseError as exc:
        line, column = exc.position
        reason = str(exc).split(":", 1)[0]
        raise BadXML(
            f"malformed XML: {exc}", "malformed", f"{reason} at line {line}, column {column + 1}"
        ) from None


def local_name(element: Element) -> str:
    """The tag without its namespace: '{http://www.sitemaps.org/…}url' → 'url'."""
    tag = element.tag if isinstance(element.tag, str) else ""
    return tag.rsplit("}", 1)[-1].lower()


def child_text(element: Element, name: str) -> str:
    """The stripped text of the first child named `name` (any namespace), '' if none."""
    for child in element:
        if local_name(child) == name:
            return (child.text or "").strip()
    return ""
