"""Does the WHATWG URL parser fail? A port of its failure paths as Node 20 implements them (ada 2.9).

``new URL(value)`` throws or not; ada's IDNA code (UTS #46 mapping, punycode, the
validity and bidi rules) is included with the tables Node 20 ships.
"""

from __future__ import annotations

import re
import unicodedata

import idna

from agentls.ai.formats.js_text import HEX_DIGITS, punycode_adapt

_SPECIAL_SCHEMES = frozenset({"ftp", "file", "http", "https", "ws", "wss"})
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN = _FORBIDDEN_HOST | frozenset(chr(cp) for cp in range(0x20)) | frozenset("%\x7f")
_C0_OR_SPACE = "".join(chr(cp) for cp in range(0x21))
_AUTHORITY_END = frozenset({"", "/", "?", "#"})
_SLASHES = frozenset({"/", "\\"})
_DECIMAL_DIGITS = frozenset("0123456789")
_PUNY_DIGITS = {ch: i for i, ch in enumerate("abcdefghijklmnopqrstuvwxyz0123456789")}
_PUNY_DIGITS.update({ch: i for i, ch in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ")})
_INT32_MAX = 0x7FFFFFFF
# ada's IDNA validity tables (virama list and Arabic joining types) as Node 20 ships them.
_ADA_VIRAMAS = frozenset(
    {0x094D, 0x09CD, 0x0A4D, 0x0ACD, 0x0B4D, 0x0BCD, 0x0C4D, 0x0CCD, 0x0D3B, 0x0D3C, 0x0D4D, 0x0DCA}
    | {0x0E3A, 0x0EBA, 0x0F84, 0x1039, 0x103A, 0x1714, 0x1734, 0x17D2, 0x1A60, 0x1B44, 0x1BAA, 0x1BAB}
    | {0x1BF2, 0x1BF3, 0x2D7F, 0xA806, 0xA82C, 0xA8C4, 0xA953, 0xA9C0, 0xAAF6, 0xABED, 0x10A3F, 0x11046}
    | {0x1107F, 0x110B9, 0x11133, 0x11134, 0x111C0, 0x11235, 0x112EA, 0x1134D, 0x11442, 0x114C2, 0x115BF}
    | {0x1163F, 0x116B6, 0x1172B, 0x11839, 0x1193D, 0x1193E, 0x119E0, 0x11A34, 0x11A47, 0x11A99, 0x11C3F}
    | {0x11D44, 0x11D45, 0x11D97}
)


def _code_point_ranges(spec: str) -> frozenset[int]:
    """Expand ``"620 626-628"`` (hexadecimal, inclusive ranges) into a set of code points."""
    out: set[int] = set()
    for item in spec.split():
        low, _, high = item.partition("-")
        out.update(range(int(low, 16), int(high or low, 16) + 1))
    return frozenset(out)


_ADA_JOIN_RIGHT = _code_point_ranges(
    "622-625 627 629 62f-632 648 671-673 675-677 688-699 6c0 6c3-6cb 6cd 6cf 6d2 6d3 6d5 6ee 6ef 710"
    " 715-719 71e 728 72a 72c 72f 74d 759-75b 854 8aa-8ac"
)
_ADA_JOIN_LEFT_OR_DUAL = _code_point_ranges(
    "a872 620 626 628 62a-62e 633-63f 641-647 649 64a 66e 66f 678-687 69a-6bf 6c1 6c2 6cc 6ce 6d0 6d1"
    " 6fa-6fc 6ff 712-714 71a-71d 71f-727 729 72b 72d 72e 74e-758 75c-766 850-853 855 8a0 8a2-8a9 1807"
    " 1820-1877 1887-18a8 18aa a840-a871"
)
_ADA_JOIN_RIGHT_OR_DUAL = _ADA_JOIN_RIGHT | (_ADA_JOIN_LEFT_OR_DUAL - {0xA872})
# ada's mark and bidi tables are Unicode 13's; characters added in Unicode 14 and 15.0 (which its
# UTS #46 table, Unicode 15.0, does know) have no direction there and are not marks.
_UNICODE_14_0 = _code_point_ranges(
    "61d 870-88e 890-891 898-89f 8b5 8c8-8d2 c3c c5d cdd 170d 1715 171f 180f 1ac1-1ace 1b4c 1b7d-1b7e 1dfa"
    " 20c0 2c2f 2c5f 2e53-2e5d 9ffd-9fff a7c0-a7c1 a7d0-a7d1 a7d3 a7d5-a7d9 a7f2-a7f4 fbc2 fd40-fd4f fdcf"
    " fdfe-fdff 10570-1057a 1057c-1058a 1058c-10592 10594-10595 10597-105a1 105a3-105b1 105b3-105b9"
    " 105bb-105bc 10780-10785 10787-107b0 107b2-107ba 10f70-10f89 11070-11075 110c2 116b9 11740-11746"
    " 11ab0-11abf 12f90-12ff2 16a70-16abe 16ac0-16ac9 1aff0-1aff3 1aff5-1affb 1affd-1affe 1b11f-1b122"
    " 1cf00-1cf2d 1cf30-1cf46 1cf50-1cfc3 1d1e9-1d1ea 1df00-1df1e 1e290-1e2ae 1e7e0-1e7e6 1e7e8-1e7eb"
    " 1e7ed-1e7ee 1e7f0-1e7fe 1f6dd-1f6df 1f7f0 1f979 1f9cc 1fa7b-1fa7c 1faa9-1faac 1fab7-1faba 1fac3-1fac5"
    " 1fad7-1fad9 1fae0-1fae7 1faf0-1faf6 2a6de-2a6df 2b735-2b738"
)
_UNICODE_15_0 = _code_point_ranges(
    "cf3 ece 10efd-10eff 1123f-11241 11b00-11b09 11f00-11f10 11f12-11f3a 11f3e-11f59 1342f 13439-13455"
    " 1b132 1b155 1d2c0-1d2d3 1df25-1df2a 1e030-1e06d 1e08f 1e4d0-1e4f9 1f6dc 1f774-1f776 1f77b-1f77f"
    " 1f7d9 1fa75-1fa77 1fa87-1fa88 1faad-1faaf 1fabb-1fabd 1fabf 1face-1facf 1fada-1fadb 1fae8 1faf7-1faf8"
    " 2b739 31350-323af"
)
_ADA_UNKNOWN_DIRECTION = _UNICODE_14_0 | _UNICODE_15_0
_ADA_OLD_DIRECTIONS = {0x1734: "NSM"}  # Unicode 14 made HANUNOO SIGN PAMUDPOD left-to-right
# UTS #46 15.1 started to map or ignore these; ada's table (15.0) still disallows them.
_UTS46_15_0_DISALLOWED = _code_point_ranges(
    "4c0 10a0-10c5 115f-1160 17b4-17b5 1806 180e 2061-2063 206a-206f 2132 2183 3164 ffa0 1d173-1d17a 2f868"
    " 2f874 2f91f 2f95f 2f9bf"
)
_LTR_ALLOWED = frozenset({"L", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_RTL_ALLOWED = frozenset({"R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})


def _ada_direction(cp: int) -> str:
    if cp in _ADA_UNKNOWN_DIRECTION:
        return ""
    return _ADA_OLD_DIRECTIONS.get(cp) or unicodedata.bidirectional(chr(cp))


def _ada_label_valid(label: str) -> bool:
    """ada's ``is_label_valid``: leading mark, CONTEXTJ and bidi checks, quirks included."""
    if ord(label[0]) not in _ADA_UNKNOWN_DIRECTION and unicodedata.category(label[0]).startswith("M"):
        return False
    for index, ch in enumerate(label):
        if ch in "\u200c\u200d":
            if index > 0 and ord(label[index - 1]) in _ADA_VIRAMAS:
                return True  # ada stops checking the label here
            if ch == "\u200d" or index + 1 >= len(label):
                return False
            return any(ord(c) in _ADA_JOIN_LEFT_OR_DUAL for c in label[:index]) and any(
                ord(c) in _ADA_JOIN_RIGHT_OR_DUAL for c in label[index + 1 :]
            )
    directions = [_ada_direction(ord(ch)) for ch in label]
    last = max((i for i, d in enumerate(directions) if d != "NSM"), default=-1)
    if last == -1:
        return False
    if not {"R", "AL", "AN"} & set(directions):
        return True
    if directions[0] == "L":
        return all(d in _LTR_ALLOWED for d in directions[:last])  # ada skips the last character
    if "EN" in directions[: last + 1] and "AN" in directions[: last + 1]:
        return False
    rtl = directions[: last + 1]
    return all(d in _RTL_ALLOWED for d in rtl) and rtl[-1] in ("R", "AL", "AN", "EN")


def _uts46_map(text: str) -> str | None:
    """UTS #46 mapping (non-transitional, no STD3 rules) then NFC; ``None`` for a disallowed character."""
    # ada's table is Unicode 15.0's: unassigned code points then, and a few since remapped, are disallowed.
    for ch in text:
        unassigned = unicodedata.category(ch) == "Cn" and ord(ch) not in _UNICODE_15_0
        if unassigned or ord(ch) in _UTS46_15_0_DISALLOWED:
            return None
    try:
        # idna caps one call's input length; mapping is per character, so map in slices.
        mapped = "".join(
            idna.uts46_remap(text[i : i + 1000], std3_rules=False) for i in range(0, len(text), 1000)
        )
    except idna.IDNAError:
        return None
    return unicodedata.normalize("NFC", mapped)


def _ada_puny_decode(value: str) -> str | None:
    """ada's ``punycode_to_utf32`` with its 32-bit overflow checks; ``None`` on failure."""
    output: list[int] = []
    n, i, bias = 128, 0, 72
    delimiter = value.rfind("-")
    if delimiter != -1:
        if not value[:delimiter].isascii():
            return None
        output.extend(map(ord, value[:delimiter]))
        value = value[delimiter + 1 :]
    position = 0
    while position < len(value):
        old_i, w, k = i, 1, 36
        while True:
            if position >= len(value):
                return None
            digit = _PUNY_DIGITS.get(value[position])
            position += 1
            if digit is None or digit > (_INT32_MAX - i) // w:
                return None
            i += digit * w
            t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
            if digit < t:
                break
            if w > _INT32_MAX // (36 - t):
                return None
            w *= 36 - t
            k += 36
        bias = punycode_adapt(i - old_i, len(output) + 1, old_i == 0)
        if i // (len(output) + 1) > _INT32_MAX - n:
            return None
        n += i // (len(output) + 1)
        i %= len(output) + 1
        output.insert(i, n)
        i += 1
    if any(cp > 0x10FFFF for cp in output):
        return None  # outside ada's mapping table: disallowed
    return "".join(map(chr, output))


def _ada_puny_encodable(label: str) -> bool:
    """Whether ada's ``utf32_to_punycode`` encodes ``label`` without overflowing 32 bits."""
    cps = [ord(ch) for ch in label]
    n, delta, handled = 128, 0, sum(1 for cp in cps if cp < 0x80)
    while handled < len(cps):
        m = min(cp for cp in cps if cp >= n)
        if m - n > (_INT32_MAX - delta) // (handled + 1):
            return False
        delta += (m - n) * (handled + 1)
        n = m
        for cp in cps:
            if cp < n:
                if delta == _INT32_MAX:
                    return False
                delta += 1
            if cp == n:
                delta = 0
                handled += 1
        delta += 1
        n += 1
    return True


def _ada_xn_label_valid(payload: str) -> bool:
    decoded = _ada_puny_decode(payload)
    return bool(decoded) and _uts46_map(decoded) == decoded and _ada_label_valid(decoded)


def _ada_to_ascii(domain: str) -> str:
    """ada's ``idna::to_ascii``; the empty string means failure."""
    if domain.isascii():
        domain = domain.lower()
        labels = domain.split(".")
        return domain if all(_ada_xn_label_valid(x[4:]) for x in labels if x.startswith("xn--")) else ""
    mapped = _uts46_map(domain)
    if mapped is None:
        return ""
    out: list[str] = []
    for label in mapped.split("."):
        if label.startswith("xn--"):
            if not label.isascii() or not _ada_xn_label_valid(label[4:]):
                return ""
        elif not label.isascii():
            if not _ada_label_valid(label) or not _ada_puny_encodable(label):
                return ""
            label = "xn--" + label.encode("punycode").decode("ascii")
        out.append(label)
    return ".".join(out)


def _ipv4_number(part: str) -> int | None:
    if part == "":
        return None
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) >= 2 and part[0] == "0":
        part, radix = part[1:], 8
    if part == "":
        return 0
    allowed = {10: _DECIMAL_DIGITS, 16: HEX_DIGITS, 8: frozenset("01234567")}[radix]
    return int(part, radix) if all(ch in allowed for ch in part) else None


def _ends_in_number(domain: str) -> bool:
    parts = domain.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    return (last != "" and all(ch in _DECIMAL_DIGITS for ch in last)) or _ipv4_number(last) is not None


def _ipv4_host_parses(domain: str) -> bool:
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return False
    values: list[int] = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return False
        values.append(number)
    return all(value <= 255 for value in values[:-1]) and values[-1] < 256 ** (5 - len(values))


def _ipv6_host_parses(text: str) -> bool:
    """The URL standard's IPv6 parser (between the brackets)."""
    piece, compress, p, length = 0, None, 0, len(text)
    if text.startswith(":"):
        if not text.startswith("::"):
            return False
        p, piece, compress = 2, 1, 1
    while p < length:
        if piece == 8:
            return False
        if text[p] == ":":
            if compress is not None:
                return False
            p += 1
            piece += 1
            compress = piece
            continue
        start = p
        while p < length and p - start < 4 and text[p] in HEX_DIGITS:
            p += 1
        if text[p : p + 1] == ".":
            if p == start or piece > 6:
                return False
            p = start
            numbers_seen = 0
            while p < length:
                value = None
                if numbers_seen > 0:
                    if text[p] != "." or numbers_seen >= 4:
                        return False
                    p += 1
                if text[p : p + 1] not in _DECIMAL_DIGITS:
                    return False
                while p < length and text[p] in _DECIMAL_DIGITS:
                    if value == 0:
                        return False
                    value = int(text[p]) if value is None else value * 10 + int(text[p])
                    if value > 255:
                        return False
                    p += 1
                numbers_seen += 1
                if numbers_seen in (2, 4):
                    piece += 1
            return numbers_seen == 4 and (compress is not None or piece == 8)
        if text[p : p + 1] == ":":
            p += 1
            if p >= length:
                return False
        elif p < length:
            return False
        piece += 1
    return compress is not None or piece == 8


def _percent_decode(text: str) -> bytes:
    data = text.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x25 and re.fullmatch(rb"[0-9a-fA-F]{2}", data[i + 1 : i + 3]):
            out.append(int(data[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


def _host_parses(host: str, special: bool) -> bool:
    if host.startswith("["):
        return host.endswith("]") and _ipv6_host_parses(host[1:-1])
    if not special:
        return not any(ch in _FORBIDDEN_HOST for ch in host)
    try:
        domain = _percent_decode(host).decode("utf-8")
    except UnicodeDecodeError:
        return False
    ascii_domain = _ada_to_ascii(domain)
    if not ascii_domain or any(ch in _FORBIDDEN_DOMAIN for ch in ascii_domain):
        return False
    return _ipv4_host_parses(ascii_domain) if _ends_in_number(ascii_domain) else True


def url_parses(value: str, *, http_base: bool) -> bool:
    """Whether ``new URL(value)`` (or ``new URL(value, 'http://example.com')``) succeeds.

    Only the parser states that can fail are followed; path, query and fragment never do.
    """
    # A JS string becomes a USV string: lone surrogates turn into U+FFFD.
    text = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").strip(_C0_OR_SPACE)
    text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    state, buffer, special, p = "scheme start", "", False, 0
    at_sign_seen = inside_brackets = False
    while True:
        c = text[p] if p < len(text) else ""
        if state == "scheme start":
            if c.isascii() and c.isalpha():
                buffer, state = c.lower(), "scheme"
            else:
                state, p = "no scheme", p - 1
        elif state == "scheme":
            if c and c.isascii() and (c.isalnum() or c in "+-."):
                buffer += c.lower()
            elif c == ":":
                scheme, buffer = buffer, ""
                special = scheme in _SPECIAL_SCHEMES
                if scheme == "file":
                    state = "file"
                elif special:
                    state = "special relative" if http_base and scheme == "http" else "special slashes"
                elif text.startswith("/", p + 1):
                    state, p = "path or authority", p + 1
                else:
                    return True  # opaque path
            else:
                buffer, state, p = "", "no scheme", -1
        elif state == "no scheme":
            if not http_base:
                return False
            special, state, p = True, "relative", p - 1
        elif state == "special relative":
            if c == "/" and text.startswith("/", p + 1):
                state, p = "ignore slashes", p + 1
            else:
                state, p = "relative", p - 1
        elif state == "path or authority":
            if c != "/":
                return True
            state = "authority"
        elif state == "relative":
            if c not in _SLASHES:
                return True
            state = "relative slash"
        elif state == "relative slash":
            if c not in _SLASHES:
                return True
            state = "ignore slashes"
        elif state == "special slashes":
            state = "ignore slashes"
            p += 1 if c == "/" and text.startswith("/", p + 1) else -1
        elif state == "ignore slashes":
            if c not in _SLASHES:
                state, p = "authority", p - 1
        elif state == "authority":
            if c == "@":
                at_sign_seen, buffer = True, ""
            elif c in _AUTHORITY_END or (special and c == "\\"):
                if at_sign_seen and buffer == "":
                    return False
                state, p, buffer = "host", p - len(buffer) - 1, ""
            else:
                buffer += c
        elif state == "host":
            if c == ":" and not inside_brackets:
                if buffer == "" or not _host_parses(buffer, special):
                    return False
                state, buffer = "port", ""
            elif c in _AUTHORITY_END or (special and c == "\\"):
                return not (special and buffer == "") and _host_parses(buffer, special)
            else:
                inside_brackets = c == "[" or (inside_brackets and c != "]")
                buffer += c
        elif state == "port":
            if c in _DECIMAL_DIGITS:
                buffer += c
            elif c in _AUTHORITY_END or (special and c == "\\"):
                return buffer == "" or int(buffer) <= 65535
            else:
                return False
        elif state == "file":
            if c not in _SLASHES:
                return True
            state = "file slash"
        elif state == "file slash":
            if c not in _SLASHES:
                return True
            state = "file host"
        else:  # file host
            if c in _AUTHORITY_END or c == "\\":
                drive_letter = (
                    len(buffer) == 2 and buffer[0].isascii() and buffer[0].isalpha() and buffer[1] in ":|"
                )
                return drive_letter or buffer == "" or _host_parses(buffer, True)
            buffer += c
        p += 1
