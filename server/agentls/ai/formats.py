"""TypeBox 1.3.7's ``format`` checks and JavaScript regular expressions, for tool-argument validation.

Pi validates tool arguments with TypeBox, whose verdicts this package must reproduce with
``jsonschema``. Two things ``jsonschema`` does differently:

* TypeBox enforces ``format`` with its own checks (``typebox/build/format/*.mjs``); formats it does
  not register pass. ``FORMATS`` maps each registered name to a port of its check, regexes and
  quirks included. ``iri`` and ``iri-reference`` ask whether ``new URL(value)`` throws, so they
  carry a port of the WHATWG URL parser's failure paths as Node 20 implements them (ada 2.9,
  including its IDNA code).
* ``pattern`` and ``patternProperties`` are compiled with ``new RegExp(pattern, 'u')``.
  ``js_regex`` parses a pattern with ECMAScript's grammar (unicode mode) and translates it to the
  ``regex`` package's syntax, so ``\\p{L}``, ``\\u{1F600}``, ASCII ``\\d``/``\\w``/``\\b``, JS
  whitespace for ``\\s`` and ``$`` as the true end of input behave as in Node.

Every verdict in ``tests/ai/test_formats.py`` was recorded from TypeBox 1.3.7 running on Node 20.
Known gaps: character data follows the ``regex`` package's Unicode version (Node 20 has Unicode 17),
so characters assigned after that can differ; a JS quantifier resets the captures inside its group
on each iteration and ``regex`` does not, which shows only through backreferences such as
``(?:(a)|b)+\\1``; a pattern whose minimum repetition counts multiply past 100 000 is refused with
``ValueError`` because ``regex`` would unroll it in memory.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import NoReturn

import idna
import regex


def _join_surrogate_pairs(value: str) -> str:
    """Read ``value`` as JavaScript does: a lead surrogate followed by a trail one is one character."""
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _utf16_len(value: str) -> int:
    """JavaScript's ``value.length``: code units, so astral characters count twice."""
    return len(value) + sum(1 for ch in value if ord(ch) > 0xFFFF)


# ---------------------------------------------------------------------------------------------
# Dates, times and durations (ajv-formats' checks as TypeBox ships them)
# ---------------------------------------------------------------------------------------------

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(?:[zZ]|([+-])([0-9]{2}):([0-9]{2}))?")
_DURATION = re.compile(
    r"P(?:(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)"
    r"(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?"
    r"|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)"
)


def is_date(value: str) -> bool:
    """``date``: ``YYYY-MM-DD`` with the month's real length (29 February in leap years)."""
    match = _DATE.fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(group) for group in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def is_time(value: str) -> bool:
    """``time``: ``HH:MM:SS[.frac]`` with a required zone; a leap second only at 23:59 UTC."""
    match = _TIME.fullmatch(value)
    if match is None:
        return False
    hour, minute, second = int(match[1]), int(match[2]), float(match[3])
    tz_sign = -1 if match[4] == "-" else 1
    tz_hour, tz_minute = int(match[5] or 0), int(match[6] or 0)
    if tz_hour > 23 or tz_minute > 59:
        return False
    if not match[4] and "z" not in value.lower():
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    utc_minute = minute - tz_minute * tz_sign
    utc_hour = hour - tz_hour * tz_sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def is_date_time(value: str) -> bool:
    """``date-time``: a ``date`` and a ``time`` joined by ``T`` or ``t``."""
    parts = re.split("[Tt]", value)
    return len(parts) == 2 and is_date(parts[0]) and is_time(parts[1])


def is_duration(value: str) -> bool:
    """``duration``: an ISO 8601 duration such as ``P1Y2M`` or ``PT30S``."""
    return _DURATION.fullmatch(value) is not None


# ---------------------------------------------------------------------------------------------
# Simple regex formats. JS ``.`` stops at line terminators; ``/i`` without ``/u`` folds ASCII only.
# ---------------------------------------------------------------------------------------------

_JS_DOT = r"[^\n\r\u2028\u2029]"
_JS_SPACE = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_EMAIL_ATOM = r"[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+"
_EMAIL_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_EMAIL = re.compile(
    rf"(?!{_JS_DOT}*\.\.){_EMAIL_ATOM}(?:\.{_EMAIL_ATOM})*@{_EMAIL_LABEL}(?:\.{_EMAIL_LABEL})*"
)
# ``/iu`` folds with Unicode simple case folding, which adds U+0345 (it folds to a Greek letter).
_IDN_ALNUM = r"\p{L}\p{N}\u0345"
_IDN_EMAIL = regex.compile(
    rf"(?!{_JS_DOT}*\.\.)[{_IDN_ALNUM}!#$%&'*+/=?^_`{{|}}~-]+(?:\.[{_IDN_ALNUM}!#$%&'*+/=?^_`{{|}}~-]+)*"
    rf"@[{_IDN_ALNUM}](?:[{_IDN_ALNUM}-]{{0,61}}[{_IDN_ALNUM}])?"
    rf"(?:\.[{_IDN_ALNUM}](?:[{_IDN_ALNUM}-]{{0,61}}[{_IDN_ALNUM}])?)*"
)
_JSON_POINTER = re.compile(r"(?:/(?:[^~/]|~0|~1)*)*")
_JSON_POINTER_URI_FRAGMENT = re.compile(r"#(?:/(?:[a-zA-Z0-9_\-.!$&'()*+,;:=@]|%[0-9a-fA-F]{2}|~0|~1)*)*")
_RELATIVE_JSON_POINTER = re.compile(r"(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)")
_URI_REF_CHARS = rf"[^{_JS_SPACE}\[\]{{}}<>^`|]"
_URI_REFERENCE = re.compile(
    rf"(?!{_JS_DOT}*[^\x00-\x7f])(?!{_JS_DOT}*\\)"
    rf"(?:(?:[a-zA-Z][a-zA-Z0-9+\-.]*:)?(?://{_URI_REF_CHARS}*)?|{_URI_REF_CHARS}*)"
    rf"(?:\?{_URI_REF_CHARS}*)?(?:#{_URI_REF_CHARS}*)?"
)
_URI_TEMPLATE_VAR = r"(?:[a-zA-Z0-9_]|%[0-9a-fA-F]{2})+(?::[1-9][0-9]{0,3}|\*)?"
_URI_TEMPLATE = re.compile(
    rf"(?:(?:[^\x00-\x20\"'<>%\\^`{{|}}]|%[0-9a-fA-F]{{2}})"
    rf"|\{{[+#./;?&=,!@|]?{_URI_TEMPLATE_VAR}(?:,{_URI_TEMPLATE_VAR})*\}})*"
)
# ``/iu``: Unicode simple case folding lets U+017F (long s) match ``s``; the host classes already
# hold every character that folds into them.
_URL_HOST = r"[a-zA-Z0-9\u00a1-\uffff]"
_URL_NOT_SPACE = rf"[^{_JS_SPACE}]"
_URL = re.compile(
    rf"(?:[hH][tT][tT][pP][sS\u017f]?|[fF][tT][pP])://(?:{_URL_NOT_SPACE}+(?::{_URL_NOT_SPACE}*)?@)?"
    r"(?:(?!(?:10|127)(?:\.[0-9]{1,3}){3})(?!(?:169\.254|192\.168)(?:\.[0-9]{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2[0-9]|3[0-1])(?:\.[0-9]{1,3}){2})"
    r"(?:[1-9][0-9]?|1[0-9][0-9]|2[01][0-9]|22[0-3])(?:\.(?:1?[0-9]{1,2}|2[0-4][0-9]|25[0-5])){2}"
    r"(?:\.(?:[1-9][0-9]?|1[0-9][0-9]|2[0-4][0-9]|25[0-4]))"
    rf"|(?:(?:{_URL_HOST}+-)*{_URL_HOST}+)(?:\.(?:{_URL_HOST}+-)*{_URL_HOST}+)*"
    r"(?:\.(?:[a-zA-Z\u00a1-\uffff]{2,})))"
    rf"(?::[0-9]{{2,5}})?(?:/{_URL_NOT_SPACE}*)?"
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def is_email(value: str) -> bool:
    """``email``: ASCII local part and dotted host, no ``..`` anywhere."""
    return _EMAIL.fullmatch(value) is not None


def is_idn_email(value: str) -> bool:
    """``idn-email``: ``email`` with any Unicode letter or digit allowed."""
    return _IDN_EMAIL.fullmatch(value) is not None


def is_json_pointer(value: str) -> bool:
    """``json-pointer``: RFC 6901, ``~`` only as ``~0`` or ``~1``."""
    return _JSON_POINTER.fullmatch(value) is not None


def is_json_pointer_uri_fragment(value: str) -> bool:
    """``json-pointer-uri-fragment``: ``#`` and a percent-encoded JSON pointer."""
    return _JSON_POINTER_URI_FRAGMENT.fullmatch(value) is not None


def is_relative_json_pointer(value: str) -> bool:
    """``relative-json-pointer``: a level count then ``#`` or a JSON pointer."""
    return _RELATIVE_JSON_POINTER.fullmatch(value) is not None


def is_uri_reference(value: str) -> bool:
    """``uri-reference``: ASCII, no backslash, no whitespace or ``[]{}<>^`|`` outside the scheme."""
    return _URI_REFERENCE.fullmatch(value) is not None


def is_uri_template(value: str) -> bool:
    """``uri-template``: RFC 6570 literals and ``{...}`` expressions."""
    return _URI_TEMPLATE.fullmatch(value) is not None


def is_url(value: str) -> bool:
    """``url``: an http(s) or ftp URL with a public IPv4 address or a dotted host name."""
    return _URL.fullmatch(value) is not None


def is_uuid(value: str) -> bool:
    """``uuid``: 8-4-4-4-12 hexadecimal digits, any case, any version."""
    return _UUID.fullmatch(value) is not None


# ---------------------------------------------------------------------------------------------
# IP addresses and RFC 3986 URIs (TypeBox's hand-written scanners)
# ---------------------------------------------------------------------------------------------

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _ipv4_in(value: str, start: int, end: int) -> bool:
    dots = num = digits = 0
    leading = ""
    for ch in value[start:end]:
        if ch == ".":
            if digits == 0 or num > 255 or (leading == "0" and digits > 1):
                return False
            dots += 1
            num = digits = 0
            leading = ""
        elif "0" <= ch <= "9":
            if digits == 0:
                leading = ch
            num = num * 10 + int(ch)
            digits += 1
        else:
            return False
    return dots == 3 and digits > 0 and num <= 255 and not (leading == "0" and digits > 1)


def is_ipv4(value: str) -> bool:
    """``ipv4``: dotted quad, no leading zeros."""
    return _ipv4_in(value, 0, len(value))


def is_ipv6(value: str) -> bool:
    """``ipv6``: eight groups, one ``::`` compression, optional trailing dotted quad."""
    if not value.isascii():
        return False  # any other character fails TypeBox's scanner somewhere
    length = len(value)
    if length == 0:
        return False
    groups = 0
    compressed = False
    i = 0
    if value.startswith("::"):
        if length == 2:
            return True
        compressed = True
        i = 2
    while i < length:
        start = i
        while i < length and value[i] in _HEX_DIGITS:
            i += 1
        digits = i - start
        if digits == 0:
            return False
        following = value[i] if i < length else ""
        if following == ".":
            if not _ipv4_in(value, start, length):
                return False
            groups += 2
            break
        if digits > 4:
            return False
        groups += 1
        if i == length:
            break
        if following != ":":
            return False
        i += 1
        if value[i : i + 1] == ":":
            if compressed or value[i + 1 : i + 2] == ":":
                return False
            compressed = True
            i += 1
            if i == length:
                break
    return groups <= 7 if compressed else groups == 8


_URI_UNRESERVED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
_URI_SUB_DELIMS = frozenset("!$&'()*+,;=")
_URI_PCHAR = _URI_UNRESERVED | _URI_SUB_DELIMS | frozenset(":@")
_URI_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")


def _is_percent_escape(value: str, i: int, end: int) -> bool:
    return i + 2 < end and value[i + 1] in _HEX_DIGITS and value[i + 2] in _HEX_DIGITS


def is_uri(value: str) -> bool:
    """``uri``: RFC 3986 absolute URI; only a registered host name may hold non-ASCII characters."""
    length = len(value)
    if length == 0 or not (value[0].isascii() and value[0].isalpha()):
        return False
    i = 1
    while i < length and value[i] != ":":
        if value[i] not in _URI_SCHEME_CHARS:
            return False
        i += 1
    if i == length:
        return False
    i += 1
    if value[i : i + 2] == "//":
        i += 2
        at = -1
        for j in range(i, length):
            if value[j] == "@":
                at = j
                break
            if value[j] in "/?#":
                break
        if at != -1:
            j = i
            while j < at:
                ch = value[j]
                if ch in "[]":
                    return False
                if ch == "%":
                    if not _is_percent_escape(value, j, at):
                        return False
                    j += 2
                elif ch not in _URI_UNRESERVED and ch not in _URI_SUB_DELIMS and ch != ":":
                    return False
                j += 1
            i = at + 1
        if value[i : i + 1] == "[":
            closing = value.find("]", i + 1)
            if closing == -1:
                return False
            i = closing + 1
        else:
            while i < length and value[i] not in "/?#:":
                ch = value[i]
                if ch < "\x80" and ch not in _URI_UNRESERVED and ch not in _URI_SUB_DELIMS:
                    return False
                i += 1
        if value[i : i + 1] == ":":
            i += 1
            while i < length and value[i] not in "/?#":
                if not "0" <= value[i] <= "9":
                    return False
                i += 1
    while i < length:
        ch = value[i]
        if ch == "%":
            if not _is_percent_escape(value, i, length):
                return False
            i += 2
        elif ch not in _URI_PCHAR and ch not in "/?#":
            return False
        i += 1
    return True


# ---------------------------------------------------------------------------------------------
# Host names: TypeBox's own RFC 5891/5892 label rules and punycode decoder
# ---------------------------------------------------------------------------------------------

_RFC5892_DISALLOWED = frozenset(
    {0x0640, 0x07FA, 0x302E, 0x302F, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303B}
)
_TYPEBOX_VIRAMAS = frozenset(
    {0x094D, 0x09CD, 0x0A4D, 0x0ACD, 0x0B4D, 0x0BCD, 0x0C4D, 0x0CCD, 0x0D3B, 0x0D3C, 0x0D4D, 0x0DCA}
    | {0x1B44, 0x1BAA, 0x1BAB, 0xA9C0, 0x11046, 0x1107F, 0x110B9, 0x11133, 0x11134, 0x111C0, 0x11235}
    | {0x1134D, 0x11442, 0x114C2, 0x115BF, 0x1163F, 0x116B6, 0x11C3F, 0x11D44, 0x11D45}
)
_MARK = regex.compile(r"[\p{Mn}\p{Mc}\p{Me}]")
_GREEK = regex.compile(r"\p{Script=Greek}")
_HEBREW = regex.compile(r"\p{Script=Hebrew}")
_JAPANESE = regex.compile(r"[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]")
_IDN_DOTS = re.compile("[\u002e\u3002\uff0e\uff61]")


def _adapt(delta: int, num_points: int, first_time: bool) -> int:
    """RFC 3492's bias adaptation (shared by TypeBox's and ada's punycode)."""
    delta = delta // 700 if first_time else delta // 2
    delta += delta // num_points
    k = 0
    while delta > 455:
        delta //= 35
        k += 36
    return k + (36 * delta) // (delta + 38)


def _typebox_puny_decode(value: str) -> str | None:
    """TypeBox's ``Puny.Decode``; ``None`` where it throws."""
    output: list[int] = []
    n, i, bias = 128, 0, 72
    delimiter = value.rfind("-")
    if delimiter > 0:
        for ch in value[:delimiter]:
            if ord(ch) >= 128:
                return None
            output.append(ord(ch))
    position = delimiter + 1
    while position < len(value):
        old_i, w, k = i, 1, 36
        while True:
            if position >= len(value):
                return None
            ch = value[position]
            position += 1
            if "a" <= ch <= "z":
                digit = ord(ch) - 0x61
            elif "0" <= ch <= "9":
                digit = ord(ch) - 0x30 + 26
            else:
                return None
            i += digit * w
            t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
            if digit < t:
                break
            w *= 36 - t
            k += 36
        bias = _adapt(i - old_i, len(output) + 1, old_i == 0)
        n += i // (len(output) + 1)
        i %= len(output) + 1
        output.insert(i, n)
        i += 1
    if any(cp > 0x10FFFF for cp in output):
        return None  # String.fromCodePoint throws a RangeError
    return _join_surrogate_pairs("".join(map(chr, output)))


def _is_unicode_label(value: str) -> bool:
    cps = [ord(ch) for ch in value]
    if cps[0] == 0x2D or cps[-1] == 0x2D:
        return False
    if len(cps) >= 4 and cps[2] == 0x2D and cps[3] == 0x2D:
        return False
    if _MARK.match(value[0]):
        return False
    has_japanese = has_arabic_indic = has_extended_arabic_indic = False
    for index, cp in enumerate(cps):
        if cp in _RFC5892_DISALLOWED:
            return False
        if _JAPANESE.match(value[index]):
            has_japanese = True
        if 0x0660 <= cp <= 0x0669:
            has_arabic_indic = True
        if 0x06F0 <= cp <= 0x06F9:
            has_extended_arabic_indic = True
        prev = cps[index - 1] if index > 0 else None
        nxt = cps[index + 1] if index + 1 < len(cps) else None
        if cp == 0x00B7 and (prev != 0x6C or nxt != 0x6C):
            return False
        if cp == 0x0375 and (nxt is None or not _GREEK.match(chr(nxt))):
            return False
        if cp in (0x05F3, 0x05F4) and (prev is None or not _HEBREW.match(chr(prev))):
            return False
        if cp == 0x200C and (prev is None or (prev < 0x80 and prev not in _TYPEBOX_VIRAMAS)):
            return False
        if cp == 0x200D and (prev is None or prev not in _TYPEBOX_VIRAMAS):
            return False
    if "\u30fb" in value and not has_japanese:
        return False
    return not (has_arabic_indic and has_extended_arabic_indic)


def _is_puny_label(value: str) -> bool:
    payload = value[4:].lower()
    if payload.rfind("-") == 0:
        return False
    decoded = _typebox_puny_decode(payload)
    return bool(decoded) and _is_unicode_label(decoded)


def _is_ascii_label(value: str) -> bool:
    if value[0] == "-" or value[-1] == "-":
        return False
    if len(value) >= 4 and value[2:4] == "--":
        return False
    return all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in value)


def is_hostname(value: str) -> bool:
    """``hostname``: dotted ASCII labels of at most 63 characters, valid ``xn--`` labels allowed."""
    if len(value) == 0 or _utf16_len(value) > 253 or value.endswith("."):
        return False
    for label in value.split("."):
        if len(label) == 0 or _utf16_len(label) > 63:
            return False
        is_puny = label.lower().startswith("xn--")
        if not (_is_puny_label(label) if is_puny else _is_ascii_label(label)):
            return False
    return True


def is_idn_hostname(value: str) -> bool:
    """``idn-hostname``: NFC-normalised Unicode labels under RFC 5891/5892's context rules."""
    if len(value) == 0 or " " in value:
        return False
    canonical = _IDN_DOTS.sub(".", unicodedata.normalize("NFC", value))
    if _utf16_len(canonical) > 253:
        return False
    for label in canonical.split("."):
        if len(label) == 0 or _utf16_len(label) > 63:
            return False
        is_puny = label.lower().startswith("xn--")
        if not (_is_puny_label(label) if is_puny else _is_unicode_label(label)):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# iri / iri-reference: does the WHATWG URL parser (ada 2.9, as bundled with Node 20) fail?
# ---------------------------------------------------------------------------------------------

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
        bias = _adapt(i - old_i, len(output) + 1, old_i == 0)
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
    allowed = {10: _DECIMAL_DIGITS, 16: _HEX_DIGITS, 8: frozenset("01234567")}[radix]
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
        while p < length and p - start < 4 and text[p] in _HEX_DIGITS:
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


def _url_parses(value: str, *, http_base: bool) -> bool:
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


def is_iri(value: str) -> bool:
    """``iri``: ``new URL(value)`` does not throw."""
    return _url_parses(value, http_base=False)


_IRI_FORBIDDEN = re.compile(r"[ \\\x00-\x1f\x7f]|%(?![0-9a-fA-F]{2})")
_SCHEME_PREFIX = re.compile(r"[a-zA-Z][a-zA-Z0-9+\-.]*")


def is_iri_reference(value: str) -> bool:
    """``iri-reference``: TypeBox's character checks, then ``new URL(value, 'http://example.com')``."""
    if _IRI_FORBIDDEN.search(value):
        return False  # unencoded space, backslash or control character, or a bad percent escape
    if value == "":
        return True
    colon = value.find(":")
    if colon == -1 and (prefix := _SCHEME_PREFIX.match(value)) and value.startswith("//", prefix.end()):
        return False  # looks like a scheme and authority with the colon missing
    return _url_parses(value, http_base=True)


# ---------------------------------------------------------------------------------------------
# ECMAScript regular expressions
# ---------------------------------------------------------------------------------------------

_SYNTAX_CHARACTERS = frozenset(map(ord, "^$\\.*+?()[]{}|"))
_V8_INFINITY = 2**31 - 1  # V8 clamps quantifier bounds here and treats the value as unbounded
# The ``regex`` package unrolls a repeated item's minimum count in memory; past this many
# unrolled items a pattern is refused instead of exhausting memory.
_MAX_UNROLLED = 100_000
_WORD = "0-9A-Z_a-z"
_SPACE_ITEMS = "\\t\\n\\x0b\\x0c\\r\\x20\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_CLASS_ESCAPES = {
    ord("d"): "[0-9]",
    ord("D"): "[^0-9]",
    ord("w"): f"[{_WORD}]",
    ord("W"): f"[^{_WORD}]",
    ord("s"): f"[{_SPACE_ITEMS}]",
    ord("S"): f"[^{_SPACE_ITEMS}]",
}
_WORD_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_WORD_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
_ANY_ITEMS = "\\x00-\\U0010ffff"
_ANY = f"[{_ANY_ITEMS}]"
_NOTHING = f"[^{_ANY_ITEMS}]"
_CONTROL_ESCAPES = {ord("f"): 0x0C, ord("n"): 0x0A, ord("r"): 0x0D, ord("t"): 0x09, ord("v"): 0x0B}


def _words(text: str) -> list[str]:
    return text.split()


# Property names and values V8 accepts in ``\p{...}`` (recorded from Node 20).
_GENERAL_CATEGORIES = frozenset(
    _words(
        """C Other Cc Control Cf Format Cn Unassigned Co Private_Use Cs Surrogate L Letter LC Cased_Letter Ll
    Lowercase_Letter Lm Modifier_Letter Lo Other_Letter Lt Titlecase_Letter Lu Uppercase_Letter M Mark
    Combining_Mark Mc Spacing_Mark Me Enclosing_Mark Mn Nonspacing_Mark N Number Nd Decimal_Number Nl
    Letter_Number No Other_Number P Punctuation Pc Connector_Punctuation Pd Dash_Punctuation Pe
    Close_Punctuation Pf Final_Punctuation Pi Initial_Punctuation Po Other_Punctuation Ps
    Open_Punctuation S Symbol Sc Currency_Symbol Sk Modifier_Symbol Sm Math_Symbol So Other_Symbol Z
    Separator Zl Line_Separator Zp Paragraph_Separator Zs Space_Separator"""
    )
)
_SCRIPTS = frozenset(
    _words(
        """Adlam Adlm Aghb Ahom Anatolian_Hieroglyphs Arab Arabic Armenian Armi Armn Avestan Avst Bali
    Balinese Bamu Bamum Bass Bassa_Vah Batak Batk Beng Bengali Berf Beria_Erfe Bhaiksuki Bhks Bopo
    Bopomofo Brah Brahmi Brai Braille Bugi Buginese Buhd Buhid Cakm Canadian_Aboriginal Cans Cari
    Carian Caucasian_Albanian Chakma Cham Cher Cherokee Chorasmian Chrs Common Copt Coptic Cpmn Cprt
    Cuneiform Cypriot Cypro_Minoan Cyrillic Cyrl Deseret Deva Devanagari Diak Dives_Akuru Dogr Dogra
    Dsrt Dupl Duployan Egyp Egyptian_Hieroglyphs Elba Elbasan Elym Elymaic Ethi Ethiopic Gara Garay
    Geor Georgian Glag Glagolitic Gong Gonm Goth Gothic Gran Grantha Greek Grek Gujarati Gujr Gukh
    Gunjala_Gondi Gurmukhi Guru Gurung_Khema Han Hang Hangul Hani Hanifi_Rohingya Hano Hanunoo Hatr
    Hatran Hebr Hebrew Hira Hiragana Hluw Hmng Hmnp Hung Imperial_Aramaic Inherited
    Inscriptional_Pahlavi Inscriptional_Parthian Ital Java Javanese Kaithi Kali Kana Kannada Katakana
    Kawi Kayah_Li Khar Kharoshthi Khitan_Small_Script Khmer Khmr Khoj Khojki Khudawadi Kirat_Rai Kits
    Knda Krai Kthi Lana Lao Laoo Latin Latn Lepc Lepcha Limb Limbu Lina Linb Linear_A Linear_B Lisu
    Lyci Lycian Lydi Lydian Mahajani Mahj Maka Makasar Malayalam Mand Mandaic Mani Manichaean Marc
    Marchen Masaram_Gondi Medefaidrin Medf Meetei_Mayek Mend Mende_Kikakui Merc Mero Meroitic_Cursive
    Meroitic_Hieroglyphs Miao Mlym Modi Mong Mongolian Mro Mroo Mtei Mult Multani Myanmar Mymr
    Nabataean Nag_Mundari Nagm Nand Nandinagari Narb Nbat New_Tai_Lue Newa Nko Nkoo Nshu Nushu
    Nyiakeng_Puachue_Hmong Ogam Ogham Ol_Chiki Ol_Onal Olck Old_Hungarian Old_Italic
    Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Onao
    Oriya Orkh Orya Osage Osge Osma Osmanya Ougr Pahawh_Hmong Palm Palmyrene Pau_Cin_Hau Pauc Perm
    Phag Phags_Pa Phli Phlp Phnx Phoenician Plrd Prti Psalter_Pahlavi Qaac Qaai Rejang Rjng Rohg Runic
    Runr Samaritan Samr Sarb Saur Saurashtra Sgnw Sharada Shavian Shaw Shrd Sidd Siddham Sidetic Sidt
    SignWriting Sind Sinh Sinhala Sogd Sogdian Sogo Sora Sora_Sompeng Soyo Soyombo Sund Sundanese Sunu
    Sunuwar Sylo Syloti_Nagri Syrc Syriac Tagalog Tagb Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo Takr
    Takri Tale Talu Tamil Taml Tang Tangsa Tangut Tavt Tayo Telu Telugu Tfng Tglg Thaa Thaana Thai
    Tibetan Tibt Tifinagh Tirh Tirhuta Tnsa Todhri Todr Tolong_Siki Tols Toto Tulu_Tigalari Tutg Ugar
    Ugaritic Unknown Vai Vaii Vith Vithkuqi Wancho Wara Warang_Citi Wcho Xpeo Xsux Yezi Yezidi Yi Yiii
    Zanabazar_Square Zanb Zinh Zyyy Zzzz"""
    )
)
_BINARY_PROPERTY_NAMES = """ASCII_Hex_Digit/AHex Alphabetic/Alpha Bidi_Control/Bidi_C Bidi_Mirrored/Bidi_M
    Case_Ignorable/CI Cased Changes_When_Casefolded/CWCF Changes_When_Casemapped/CWCM
    Changes_When_Lowercased/CWL Changes_When_Titlecased/CWT Changes_When_Uppercased/CWU Dash
    Default_Ignorable_Code_Point/DI Deprecated/Dep Diacritic/Dia Emoji Emoji_Component/EComp
    Emoji_Modifier/EMod Emoji_Modifier_Base/EBase Emoji_Presentation/EPres Extended_Pictographic/ExtPict
    Extender/Ext Grapheme_Base/Gr_Base Grapheme_Extend/Gr_Ext Hex_Digit/Hex IDS_Binary_Operator/IDSB
    IDS_Trinary_Operator/IDST ID_Continue/IDC ID_Start/IDS Ideographic/Ideo Join_Control/Join_C
    Logical_Order_Exception/LOE Lowercase/Lower Math Noncharacter_Code_Point/NChar Pattern_Syntax/Pat_Syn
    Pattern_White_Space/Pat_WS Quotation_Mark/QMark Radical Regional_Indicator/RI Sentence_Terminal/STerm
    Soft_Dotted/SD Terminal_Punctuation/Term Unified_Ideograph/UIdeo Uppercase/Upper
    Variation_Selector/VS White_Space/space XID_Continue/XIDC XID_Start/XIDS"""
# Each binary property's members as ``regex`` set items; aliases resolve to the long name.
_BINARY_PROPERTIES = {
    name: f"\\p{{{names.split('/')[0]}}}"
    for names in _words(_BINARY_PROPERTY_NAMES)
    for name in names.split("/")
}
_BINARY_PROPERTIES |= {"ASCII": "\\x00-\\x7f", "Any": _ANY_ITEMS, "Assigned": "\\P{Cn}"}
_CWKCF = "\\p{Changes_When_Casefolded}\\p{Default_Ignorable_Code_Point}\\p{NFKC_Quick_Check=N}"
_BINARY_PROPERTIES |= {"Changes_When_NFKC_Casefolded": _CWKCF, "CWKCF": _CWKCF}
_ID_START = regex.compile(r"[\p{ID_Start}$_]")
_ID_CONTINUE = regex.compile(r"[\p{ID_Continue}$\u200c\u200d]")


def _escape(cp: int) -> str:
    """One code point as ``regex`` syntax that means itself, in and out of sets."""
    if 0x30 <= cp <= 0x39 or 0x41 <= cp <= 0x5A or 0x61 <= cp <= 0x7A:
        return chr(cp)
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def _hex_value(c: int) -> int | None:
    if ord("0") <= c <= ord("9"):
        return c - ord("0")
    if ord("a") <= c | 0x20 <= ord("f"):
        return (c | 0x20) - ord("a") + 10
    return None


def _is_ascii_letter(c: int) -> bool:
    return ord("a") <= c | 0x20 <= ord("z")


class _Pattern:
    """Recursive-descent parser of a JS ``RegExp`` pattern (V8's grammar, Annex B without ``u``).

    Without ``u`` the source is read as UTF-16 code units and only checked. With ``u`` it is read as
    code points and translated to ``regex`` VERSION1 syntax: every literal is escaped, classes become
    sets (nested for ``\\D`` or ``\\P{..}``), groups keep JS's numbering (named ones become plain
    groups), and a backreference to a group that has not matched matches the empty string, as in JS.
    """

    def __init__(self, pattern: str, unicode: bool) -> None:
        self.pattern = pattern
        self.unicode = unicode
        if unicode:
            self.src = [ord(ch) for ch in _join_surrogate_pairs(pattern)]
        else:
            units = pattern.encode("utf-16-le", "surrogatepass")
            self.src = [int.from_bytes(units[i : i + 2], "little") for i in range(0, len(units), 2)]
        self.pos = 0
        self.capture_count, has_named_groups = self._scan_captures()
        self.named_references = unicode or has_named_groups
        self.groups_opened = 0
        self.group_names: dict[str, int] = {}
        self.named_backreferences: list[str] = []

    def fail(self, message: str) -> NoReturn:
        flags = "u" if self.unicode else ""
        raise ValueError(f"Invalid regular expression: /{self.pattern}/{flags}: {message}")

    def peek(self, offset: int = 0) -> int:
        index = self.pos + offset
        return self.src[index] if index < len(self.src) else -1

    def eat(self, char: str) -> bool:
        if self.peek() == ord(char):
            self.pos += 1
            return True
        return False

    def _scan_captures(self) -> tuple[int, bool]:
        """V8's ``ScanForCaptures``: count the capturing groups and spot named ones before parsing."""
        src, count, named, i = self.src, 0, False, 0
        while i < len(src):
            c = src[i]
            i += 1
            if c == ord("\\"):
                i += 1
            elif c == ord("["):
                while i < len(src):
                    c = src[i]
                    i += 1
                    if c == ord("\\"):
                        i += 1
                    elif c == ord("]"):
                        break
            elif c == ord("("):
                if i < len(src) and src[i] == ord("?"):
                    if i + 1 >= len(src) or src[i + 1] != ord("<"):
                        continue
                    if i + 2 < len(src) and src[i + 2] in (ord("="), ord("!")):
                        continue
                    named = True
                count += 1
        return count, named

    # -- terms -------------------------------------------------------------------------------------

    def parse(self) -> str:
        out, _ = self.disjunction()
        if self.pos < len(self.src):
            self.fail("Unmatched ')'")
        for index, name in enumerate(self.named_backreferences):
            if name not in self.group_names:
                self.fail("Invalid named capture referenced")
            out = out.replace(f"\x00{index}\x00", self.backreference(self.group_names[name]))
        return out

    def disjunction(self) -> tuple[str, int]:
        """Alternatives up to an unmatched ``)``; returns the translation and its unrolled size."""
        alternatives: list[str] = []
        weight = 0
        while True:
            parts: list[str] = []
            while self.pos < len(self.src) and self.peek() not in (ord("|"), ord(")")):
                text, term_weight = self.term()
                parts.append(text)
                weight += term_weight
            alternatives.append("".join(parts))
            if not self.eat("|"):
                return "|".join(alternatives), weight

    def term(self) -> tuple[str, int]:
        c = self.peek()
        quantifiable, weight = True, 1
        if c in (ord("^"), ord("$")):
            self.pos += 1
            atom, quantifiable = "\\A" if c == ord("^") else "\\Z", False
        elif c == ord("\\") and self.peek(1) in (ord("b"), ord("B")):
            atom = _WORD_BOUNDARY if self.peek(1) == ord("b") else _NOT_WORD_BOUNDARY
            self.pos += 2
            quantifiable = False
        elif c == ord("("):
            atom, quantifiable, weight = self.group()
        elif c == ord("."):
            self.pos += 1
            atom = "[^\\n\\r\\u2028\\u2029]"
        elif c == ord("["):
            atom = self.character_class()
        elif c in (ord("*"), ord("+"), ord("?")):
            self.fail("Nothing to repeat")
        elif c in (ord("{"), ord("}"), ord("]")):
            if self.unicode:
                self.fail("Lone quantifier brackets")
            if c == ord("{") and self.braced_quantifier(consume=False) is not None:
                self.fail("Nothing to repeat")
            self.pos += 1
            atom = _escape(c)
        elif c == ord("\\"):
            atom = self.atom_escape()
        else:
            self.pos += 1
            atom = _escape(c)
        return self.quantified(atom, quantifiable, weight)

    def quantified(self, atom: str, quantifiable: bool, weight: int) -> tuple[str, int]:
        """Apply a following quantifier, if any, to ``atom``."""
        c = self.peek()
        high: int | None
        if c in (ord("*"), ord("+"), ord("?")):
            self.pos += 1
            low, high = (0, None) if c == ord("*") else (1, None) if c == ord("+") else (0, 1)
        elif c == ord("{"):
            bounds = self.braced_quantifier(consume=True)
            if bounds is None:
                if self.unicode:
                    self.fail("Incomplete quantifier")
                return atom, weight
            low, high = bounds
        else:
            return atom, weight
        if not quantifiable:
            self.fail("Nothing to repeat")
        lazy = "?" if self.eat("?") else ""
        weight *= max(low, 1)
        if self.unicode and low > 1 and weight > _MAX_UNROLLED:
            self.fail(f"repetition minimums multiply past {_MAX_UNROLLED}, more than this port supports")
        upper = "" if high is None else str(high)
        return f"(?:{atom}){{{low},{upper}}}{lazy}", weight

    def braced_quantifier(self, consume: bool) -> tuple[int, int | None] | None:
        """``{n}``, ``{n,}`` or ``{n,m}`` at the cursor, else ``None`` (and the cursor stays)."""
        start = self.pos
        self.pos += 1
        low = self.decimal()
        high = low
        if low is not None and self.eat(","):
            high = self.decimal()
        if low is None or not self.eat("}"):
            self.pos = start
            return None
        if not consume:
            self.pos = start
        if high is not None and low > high:
            self.fail("numbers out of order in {} quantifier")
        return low, None if high == _V8_INFINITY else high

    def decimal(self) -> int | None:
        start, value = self.pos, 0
        while ord("0") <= self.peek() <= ord("9"):
            value = min(value * 10 + self.peek() - ord("0"), _V8_INFINITY)
            self.pos += 1
        return value if self.pos > start else None

    def group(self) -> tuple[str, bool, int]:
        self.pos += 1
        quantifiable = True
        if not self.eat("?"):
            self.groups_opened += 1
            prefix = "("
        elif self.eat(":"):
            prefix = "(?:"
        elif self.peek() in (ord("="), ord("!")):
            prefix, quantifiable = "(?" + chr(self.peek()), not self.unicode
            self.pos += 1
        elif self.peek() == ord("<") and self.peek(1) in (ord("="), ord("!")):
            prefix, quantifiable = "(?<" + chr(self.peek(1)), False
            self.pos += 2
        elif self.eat("<"):
            name = self.group_name()
            if name in self.group_names:
                self.fail("Duplicate capture group name")
            self.groups_opened += 1
            self.group_names[name] = self.groups_opened
            prefix = "("
        else:
            self.fail("Invalid group")
        body, weight = self.disjunction()
        if not self.eat(")"):
            self.fail("Unterminated group")
        return f"{prefix}{body})", quantifiable, weight

    def group_name(self) -> str:
        """A ``RegExpIdentifierName`` and its closing ``>``."""
        name: list[int] = []
        while not self.eat(">"):
            cp = self.identifier_char()
            if cp is None or not (_ID_CONTINUE if name else _ID_START).match(chr(cp)):
                self.fail("Invalid capture group name")
            name.append(cp)
        if not name:
            self.fail("Invalid capture group name")
        return "".join(map(chr, name))

    def identifier_char(self) -> int | None:
        c = self.peek()
        if c == -1:
            return None
        self.pos += 1
        if c == ord("\\"):
            return self.unicode_escape(unicode_mode=True) if self.eat("u") else None
        if 0xD800 <= c <= 0xDBFF and 0xDC00 <= self.peek() <= 0xDFFF:
            self.pos += 1
            return 0x10000 + ((c - 0xD800) << 10) + (self.src[self.pos - 1] - 0xDC00)
        return c

    def backreference(self, number: int) -> str:
        return f"(?({number})\\{number})"

    # -- escapes -----------------------------------------------------------------------------------

    def atom_escape(self) -> str:
        self.pos += 1
        c = self.peek()
        if c == -1:
            self.fail("\\ at end of pattern")
        if c in _CLASS_ESCAPES:
            self.pos += 1
            return _CLASS_ESCAPES[c]
        if c in (ord("p"), ord("P")) and self.unicode:
            self.pos += 1
            return self.property_escape(negated=c == ord("P"))
        if ord("1") <= c <= ord("9"):
            start = self.pos
            number = self.decimal()
            if number is not None and number <= self.capture_count:
                return self.backreference(number)
            if self.unicode:
                self.fail("Invalid escape")
            self.pos = start
            if c >= ord("8"):
                self.pos += 1
                return _escape(c)
            return _escape(self.legacy_octal())
        if c == ord("0"):
            if not self.unicode:
                return _escape(self.legacy_octal())
            self.pos += 1
            if ord("0") <= self.peek() <= ord("9"):
                self.fail("Invalid decimal escape")
            return _escape(0)
        if c == ord("k") and self.named_references:
            self.pos += 1
            if not self.eat("<"):
                self.fail("Invalid named reference")
            self.named_backreferences.append(self.group_name())
            return f"\x00{len(self.named_backreferences) - 1}\x00"
        if c == ord("c"):
            if _is_ascii_letter(self.peek(1)):
                self.pos += 2
                return _escape(self.src[self.pos - 1] % 32)
            if self.unicode:
                self.fail("Invalid unicode escape")
            return _escape(ord("\\"))  # Annex B: the backslash is literal and ``c`` comes next
        return _escape(self.character_escape())

    def legacy_octal(self) -> int:
        """Annex B's ``\\0``-``\\377`` escapes (the cursor is on the first digit)."""
        value = self.peek() - ord("0")
        self.pos += 1
        if ord("0") <= self.peek() <= ord("7"):
            value = value * 8 + self.peek() - ord("0")
            self.pos += 1
            if value < 32 and ord("0") <= self.peek() <= ord("7"):
                value = value * 8 + self.peek() - ord("0")
                self.pos += 1
        return value

    def character_escape(self) -> int:
        """The code point of a ``CharacterEscape`` (the cursor is just past the backslash)."""
        c = self.peek()
        self.pos += 1
        if c in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[c]
        if c in (ord("x"), ord("u")):
            value = self.hex_digits(2) if c == ord("x") else self.unicode_escape(self.unicode)
            if value is not None:
                return value
            if self.unicode:
                self.fail("Invalid escape")
            return c
        if self.unicode and c not in _SYNTAX_CHARACTERS and c != ord("/"):
            self.fail("Invalid escape")
        return c

    def hex_digits(self, count: int) -> int | None:
        value = 0
        for offset in range(count):
            digit = _hex_value(self.peek(offset))
            if digit is None:
                return None
            value = value * 16 + digit
        self.pos += count
        return value

    def unicode_escape(self, unicode_mode: bool) -> int | None:
        """After ``\\u``: ``XXXX``, and in unicode mode also ``{X...}`` and escaped surrogate pairs."""
        if unicode_mode and self.peek() == ord("{"):
            end = self.pos + 1
            while _hex_value(self.peek(end - self.pos)) is not None:
                end += 1
            digits = self.src[self.pos + 1 : end]
            if not digits or self.peek(end - self.pos) != ord("}"):
                return None
            value = int("".join(map(chr, digits)), 16)
            if value > 0x10FFFF:
                return None
            self.pos = end + 1
            return value
        value = self.hex_digits(4)
        if value is not None and unicode_mode and 0xD800 <= value <= 0xDBFF and self.peek() == ord("\\"):
            start = self.pos
            self.pos += 1
            trail = self.hex_digits(4) if self.eat("u") else None
            if trail is not None and 0xDC00 <= trail <= 0xDFFF:
                return 0x10000 + ((value - 0xD800) << 10) + (trail - 0xDC00)
            self.pos = start
        return value

    def property_escape(self, negated: bool) -> str:
        """``\\p{...}`` / ``\\P{...}`` (the cursor is past the ``p``) as a ``regex`` set."""
        if not self.eat("{") or ord("}") not in self.src[self.pos :]:
            self.fail("Invalid property name")
        end = self.src.index(ord("}"), self.pos)
        body = "".join(map(chr, self.src[self.pos : end]))
        self.pos = end + 1
        name, equals, value = body.partition("=")
        if not equals and body in _GENERAL_CATEGORIES:
            item = f"\\p{{gc={body}}}"
        elif not equals and body in _BINARY_PROPERTIES:
            item = _BINARY_PROPERTIES[body]
        elif name in ("General_Category", "gc") and value in _GENERAL_CATEGORIES:
            item = f"\\p{{gc={value}}}"
        elif name in ("Script", "sc") and value in _SCRIPTS:
            item = f"\\p{{Script={value}}}"
        elif name in ("Script_Extensions", "scx") and value in _SCRIPTS:
            item = f"\\p{{Script_Extensions={value}}}"
        else:
            self.fail("Invalid property name")
        return f"[^{item}]" if negated else f"[{item}]"

    # -- classes -----------------------------------------------------------------------------------

    def character_class(self) -> str:
        self.pos += 1
        negated = self.eat("^")
        items: list[str] = []
        while not self.eat("]"):
            if self.pos >= len(self.src):
                self.fail("Unterminated character class")
            first, first_cp = self.class_atom()
            if self.peek() == ord("-") and self.peek(1) not in (ord("]"), -1):
                self.pos += 1
                second, second_cp = self.class_atom()
                if first_cp is None or second_cp is None:
                    if self.unicode:
                        self.fail("Invalid character class")
                    items += [first, "\\x2d", second]
                elif first_cp > second_cp:
                    self.fail("Range out of order in character class")
                else:
                    items.append(f"{first}-{second}")
            else:
                items.append(first)
        if not items:
            return _ANY if negated else _NOTHING
        return f"[{'^' if negated else ''}{''.join(items)}]"

    def class_atom(self) -> tuple[str, int | None]:
        """One class member as ``regex`` set syntax, with its code point (``None`` for a set)."""
        c = self.peek()
        self.pos += 1
        if c != ord("\\"):
            return _escape(c), c
        c = self.peek()
        if c == -1:
            self.fail("\\ at end of pattern")
        if c in _CLASS_ESCAPES:
            self.pos += 1
            return _CLASS_ESCAPES[c], None
        if c in (ord("p"), ord("P")) and self.unicode:
            self.pos += 1
            return self.property_escape(negated=c == ord("P")), None
        value: int | None = None
        if c == ord("b") or (c == ord("-") and self.unicode):
            self.pos += 1
            value = 0x08 if c == ord("b") else c
        elif c == ord("c"):
            control = self.peek(1)
            if _is_ascii_letter(control) or (
                not self.unicode and (control == ord("_") or 0x30 <= control <= 0x39)
            ):
                self.pos += 2
                value = control % 32
            elif self.unicode:
                self.fail("Invalid class escape")
            else:
                value = ord("\\")  # Annex B: the backslash is literal and ``c`` comes next
        elif ord("0") <= c <= ord("9"):
            if self.unicode:
                if c != ord("0") or ord("0") <= self.peek(1) <= ord("9"):
                    self.fail("Invalid class escape")
                self.pos += 1
                value = 0
            elif c >= ord("8"):
                self.pos += 1
                value = c
            else:
                value = self.legacy_octal()
        elif c == ord("k") and self.named_references:
            self.fail("Invalid escape")
        else:
            value = self.character_escape()
        return _escape(value), value


@functools.lru_cache(maxsize=512)
def js_regex(pattern: str) -> regex.Pattern[str]:
    """Compile ``pattern`` as JavaScript's ``new RegExp(pattern, 'u')`` would.

    Use ``.search(text)`` for ``RegExp.prototype.test``. Raises ``ValueError`` naming the pattern
    when JavaScript would throw a ``SyntaxError``.
    """
    return regex.compile(_Pattern(pattern, unicode=True).parse(), regex.VERSION1)


def is_regex(value: str) -> bool:
    """``regex``: ``new RegExp(value)`` (no flags, so Annex B syntax) does not throw."""
    if value == "":
        return False
    try:
        _Pattern(value, unicode=False).parse()
    except ValueError:
        return False
    return True


FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": is_date_time,
    "date": is_date,
    "duration": is_duration,
    "email": is_email,
    "hostname": is_hostname,
    "idn-email": is_idn_email,
    "idn-hostname": is_idn_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "iri-reference": is_iri_reference,
    "iri": is_iri,
    "json-pointer-uri-fragment": is_json_pointer_uri_fragment,
    "json-pointer": is_json_pointer,
    "regex": is_regex,
    "relative-json-pointer": is_relative_json_pointer,
    "time": is_time,
    "uri-reference": is_uri_reference,
    "uri-template": is_uri_template,
    "uri": is_uri,
    "url": is_url,
    "uuid": is_uuid,
}
"""TypeBox's default format registry; a format missing here passes, as TypeBox's ``Format.Test`` does."""
