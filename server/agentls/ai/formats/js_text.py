"""Text as the JavaScript these ports copy sees it: UTF-16 strings, hex digits, punycode's bias."""

from __future__ import annotations


def join_surrogate_pairs(value: str) -> str:
    """Read ``value`` as JavaScript does: a lead surrogate followed by a trail one is one character."""
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf16_len(value: str) -> int:
    """JavaScript's ``value.length``: code units, so astral characters count twice."""
    return len(value) + sum(1 for ch in value if ord(ch) > 0xFFFF)


HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def punycode_adapt(delta: int, num_points: int, first_time: bool) -> int:
    """RFC 3492's bias adaptation (shared by TypeBox's and ada's punycode)."""
    delta = delta // 700 if first_time else delta // 2
    delta += delta // num_points
    k = 0
    while delta > 455:
        delta //= 35
        k += 36
    return k + (36 * delta) // (delta + 38)
