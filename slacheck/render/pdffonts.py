"""Which fonts a written PDF embeds, and which characters it draws without a glyph.

A PDF laid out on a machine that has no font for the document's script still "works": Pango
falls back to a font without those glyphs, weasyprint draws each such character as .notdef (an
empty box), and the text layer still extracts correctly, so nothing looks wrong to a program.
This module reads the PDF slacheck has just written — its own bytes, with the standard library
only (no poppler, no PDF library) — and says, for each embedded Type 0 font, which characters
it draws and whether the font program has a glyph for each.

For a character drawn in a Type 0 font: the content stream's code maps to text through the
font's ToUnicode CMap, to a CID through its Encoding (Identity-H, or a CMap stream with
``cidchar``/``cidrange`` entries), and to a glyph through the descendant font's CIDToGIDMap
(Identity or a stream). The glyph is missing when it is 0 (.notdef) or beyond the embedded font
program's glyph count (``maxp``).
"""

from __future__ import annotations

import re
import struct
import unicodedata
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

__all__ = ["EmbeddedFont", "embedded_fonts", "missing_glyphs", "script_of"]

_OBJ = re.compile(rb"(\d+)\s+(\d+)\s+obj\b")
_REF = rb"(\d+)\s+\d+\s+R"
_HEX = re.compile(rb"<([0-9A-Fa-f\s]*)>")
_BFRANGE = re.compile(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])")
_TYPE0 = re.compile(rb"/Subtype\s*/Type0\b")
_FONT = re.compile(rb"/Type\s*/Font\b")


@dataclass(frozen=True, slots=True)
class EmbeddedFont:
    """One Type 0 font of the PDF: its name (subset tag removed) and what it draws."""

    name: str
    embedded: bool
    #: every character the font draws → whether the font program has a glyph for it
    drawn: Mapping[str, bool] = field(default_factory=dict)

    @property
    def missing(self) -> frozenset[str]:
        return frozenset(c for c, ok in self.drawn.items() if not ok)


@dataclass(frozen=True, slots=True)
class _Obj:
    head: bytes  # the dictionary (or the whole object when it has no stream)
    data: bytes | None  # the decoded stream, if any


def _inflate(head: bytes, raw: bytes) -> bytes:
    if b"/FlateDecode" not in head:
        return raw
    try:
        return zlib.decompressobj().decompress(raw)
    except zlib.error:
        return b""


def _objects(pdf: bytes) -> dict[int, _Obj]:
    """Every object of the file, those inside object streams included (last one wins, as an
    incremental update would have it)."""
    found: dict[int, _Obj] = {}
    for m in _OBJ.finditer(pdf):
        end = pdf.find(b"endobj", m.end())
        if end < 0:
            continue
        body = pdf[m.end() : end]
        at = body.find(b"stream")
        if at >= 0 and b"endstream" in body[at:]:
            head = body[:at]
            start = at + len(b"stream")
            if body[start : start + 2] == b"\r\n":
                start += 2
            elif body[start : start + 1] in (b"\n", b"\r"):
                start += 1
            length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", head)
            stop = body.rfind(b"endstream")
            raw = body[start : start + int(length.group(1))] if length else body[start:stop]
            found[int(m.group(1))] = _Obj(head, _inflate(head, raw))
        else:
            found[int(m.group(1))] = _Obj(body, None)
    for obj in list(found.values()):
        if obj.data is not None and re.search(rb"/Type\s*/ObjStm", obj.head):
            found.update(_object_stream(obj))
    return found


def _object_stream(obj: _Obj) -> Iterator[tuple[int, _Obj]]:
    assert obj.data is not None
    n = re.search(rb"/N\s+(\d+)", obj.head)
    first = re.search(rb"/First\s+(\d+)", obj.head)
    if n is None or first is None:
        return
    start = int(first.group(1))
    numbers = [int(x) for x in obj.data[:start].split()]
    pairs = list(zip(numbers[0::2], numbers[1::2], strict=False))[: int(n.group(1))]
    for i, (number, offset) in enumerate(pairs):
        stop = pairs[i + 1][1] if i + 1 < len(pairs) else len(obj.data) - start
        yield number, _Obj(obj.data[start + offset : start + stop], None)


def _ref(head: bytes, key: bytes) -> int | None:
    m = re.search(rb"/" + key + rb"\s+" + _REF, head)
    return int(m.group(1)) if m else None


def _hex_int(text: bytes) -> int:
    return int(re.sub(rb"\s", b"", text) or b"0", 16)


def _hex_text(text: bytes) -> str:
    raw = bytes.fromhex(re.sub(rb"\s", b"", text).decode("ascii"))
    return raw.decode("utf-16-be", "replace")


def _sections(cmap: bytes, name: bytes) -> Iterator[bytes]:
    for m in re.finditer(rb"begin" + name + rb"(.*?)end" + name, cmap, re.S):
        yield m.group(1)


def _to_unicode(cmap: bytes) -> dict[int, str]:
    """A ToUnicode CMap: code → text (``bfchar`` and ``bfrange`` entries)."""
    codes: dict[int, str] = {}
    for body in _sections(cmap, b"bfchar"):
        items = _HEX.findall(body)
        for src, dst in zip(items[0::2], items[1::2], strict=False):
            codes[_hex_int(src)] = _hex_text(dst)
    for body in _sections(cmap, b"bfrange"):
        for m in re.finditer(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])", body
        ):
            lo, hi, dst = _hex_int(m.group(1)), _hex_int(m.group(2)), m.group(3)
            if dst.startswith(b"["):
                for i, item in enumerate(_HEX.findall(dst)):
                    codes[lo + i] = _hex_text(item)
            else:
                base = _hex_text(dst[1:-1])
                for i in range(min(hi - lo + 1, 65536)):
                    codes[lo + i] = base[:-1] + chr(ord(base[-1]) + i) if base else ""
    return codes


def _encoding(cmap: bytes) -> dict[int, int]:
    """An Encoding CMap: code → CID (``cidchar`` and ``cidrange`` entries)."""
    cids: dict[int, int] = {}
    for body in _sections(cmap, b"cidchar"):
        for m in re.finditer(rb"<([0-9A-Fa-f]+)>\s+(\d+)", body):
            cids[_hex_int(m.group(1))] = int(m.group(2))
    for body in _sections(cmap, b"cidrange"):
        for m in re.finditer(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s+(\d+)", body):
            lo, hi, cid = _hex_int(m.group(1)), _hex_int(m.group(2)), int(m.group(3))
            for i in range(min(hi - lo + 1, 65536)):
                cids[lo + i] = cid + i
    return cids


def _glyph_count(program: bytes) -> int | None:
    """The number of glyphs of an sfnt font program (TrueType or OpenType), from ``maxp``;
    None for another kind of program (bare CFF, Type 1)."""
    if len(program) < 12 or program[:4] not in (b"\x00\x01\x00\x00", b"OTTO", b"true"):
        return None
    (tables,) = struct.unpack(">H", program[4:6])
    for i in range(tables):
        record = program[12 + 16 * i : 28 + 16 * i]
        if len(record) < 16:
            return None
        tag, _checksum, offset, _length = struct.unpack(">4sIII", record)
        if tag == b"maxp":
            (count,) = struct.unpack(">H", program[offset + 4 : offset + 6])
            return int(count)
    return None


def _font(objects: Mapping[int, _Obj], obj: _Obj) -> EmbeddedFont:
    head = obj.head
    base = re.search(rb"/BaseFont\s*/([^\s/<>\[\]()]+)", head)
    name = base.group(1).decode("latin-1") if base else "?"
    name = re.sub(r"^[A-Z]{6}\+", "", name)
    uni_ref = _ref(head, b"ToUnicode")
    uni = objects.get(uni_ref) if uni_ref is not None else None
    codes = _to_unicode(uni.data) if uni is not None and uni.data else {}
    enc_ref = _ref(head, b"Encoding")
    enc = objects.get(enc_ref) if enc_ref is not None else None
    cids = _encoding(enc.data) if enc is not None and enc.data else None
    desc = re.search(rb"/DescendantFonts\s*\[\s*" + _REF, head)
    if desc is None:  # the array itself may be an indirect object
        arr = objects.get(_ref(head, b"DescendantFonts") or -1)
        desc = re.search(rb"\[\s*" + _REF, arr.head) if arr is not None else None
    child = objects.get(int(desc.group(1))) if desc else None
    gid_map: bytes | None = None
    program: bytes | None = None
    if child is not None:
        map_ref = _ref(child.head, b"CIDToGIDMap")
        map_obj = objects.get(map_ref) if map_ref is not None else None
        gid_map = map_obj.data if map_obj is not None else None
        descriptor = objects.get(_ref(child.head, b"FontDescriptor") or -1)
        if descriptor is not None:
            for key in (b"FontFile2", b"FontFile3", b"FontFile"):
                file = objects.get(_ref(descriptor.head, key) or -1)
                if file is not None and file.data is not None:
                    program = file.data
                    break
    count = _glyph_count(program) if program is not None else None
    drawn: dict[str, bool] = {}
    for code, text in codes.items():
        cid = code if cids is None else cids.get(code, 0)
        if gid_map is not None:
            gid = int.from_bytes(gid_map[2 * cid : 2 * cid + 2], "big") if cid >= 0 else 0
        else:
            gid = cid
        ok = program is not None and gid != 0 and (count is None or gid < count)
        for char in text:
            drawn[char] = drawn.get(char, False) or ok
    return EmbeddedFont(name=name, embedded=program is not None, drawn=drawn)


def embedded_fonts(pdf: bytes) -> list[EmbeddedFont]:
    """The Type 0 fonts of ``pdf`` (the kind weasyprint writes for text), in object order."""
    objects = _objects(pdf)
    fonts = []
    for number in sorted(objects):
        obj = objects[number]
        if re.search(rb"/Subtype\s*/Type0\b", obj.head) and re.search(
            rb"/Type\s*/Font\b", obj.head
        ):
            fonts.append(_font(objects, obj))
    return fonts


def missing_glyphs(pdf: bytes) -> str:
    """The characters ``pdf`` draws with no glyph in any font (empty boxes on the page), in
    code point order; spaces and control characters left out."""
    fonts = embedded_fonts(pdf)
    drawn = {c for f in fonts for c in f.drawn}
    covered = {c for f in fonts for c, ok in f.drawn.items() if ok}
    blank = {c for c in drawn if c.isspace() or unicodedata.category(c).startswith(("C", "Z"))}
    return "".join(sorted(drawn - covered - blank))


#: scripts slacheck names a font package for; the rest are named by their Unicode script word
_CJK_WORDS = ("CJK", "IDEOGRAPHIC", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "FULLWIDTH")


def script_of(char: str) -> str:
    """A short name of ``char``'s script: ``cjk``, ``latin``, or the first word of its Unicode
    name in lower case (``thai``, ``arabic``…); ``symbol`` when it has none."""
    name = unicodedata.name(char, "")
    if name.startswith(_CJK_WORDS) or "IDEOGRAPH" in name:
        return "cjk"
    if not name:
        return "symbol"
    word = name.split()[0].lower()
    return "latin" if word == "latin" else word
