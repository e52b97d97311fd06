"""TypeBox 1.3.7's ``format`` checks (``typebox/build/format/*.mjs``), regexes and quirks included.

``FORMATS`` maps each registered name to a port of its check; formats TypeBox does not
register pass. ``iri`` and ``iri-reference`` ask whether ``new URL(value)`` throws
(:mod:`~agentls.ai.formats.whatwg_url`), ``regex`` whether ``new RegExp(value)`` does
(:mod:`~agentls.ai.formats.ecmascript_regex`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import regex

from agentls.ai.formats.ecmascript_regex import is_regex
from agentls.ai.formats.js_text import HEX_DIGITS, join_surrogate_pairs, punycode_adapt, utf16_len
from agentls.ai.formats.whatwg_url import url_parses

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
        while i < length and value[i] in HEX_DIGITS:
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
    return i + 2 < end and value[i + 1] in HEX_DIGITS and value[i + 2] in HEX_DIGITS


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
        bias = punycode_adapt(i - old_i, len(output) + 1, old_i == 0)
        n += i // (len(output) + 1)
        i %= len(output) + 1
        output.insert(i, n)
        i += 1
    if any(cp > 0x10FFFF for cp in output):
        return None  # String.fromCodePoint throws a RangeError
    return join_surrogate_pairs("".join(map(chr, output)))


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
    if len(value) == 0 or utf16_len(value) > 253 or value.endswith("."):
        return False
    for label in value.split("."):
        if len(label) == 0 or utf16_len(label) > 63:
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
    if utf16_len(canonical) > 253:
        return False
    for label in canonical.split("."):
        if len(label) == 0 or utf16_len(label) > 63:
            return False
        is_puny = label.lower().startswith("xn--")
        if not (_is_puny_label(label) if is_puny else _is_unicode_label(label)):
            return False
    return True


def is_iri(value: str) -> bool:
    """``iri``: ``new URL(value)`` does not throw."""
    return url_parses(value, http_base=False)


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
    return url_parses(value, http_base=True)


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
