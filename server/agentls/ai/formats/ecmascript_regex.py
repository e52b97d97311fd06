"""ECMAScript regular expressions: ``new RegExp(pattern, 'u')`` translated to the ``regex`` package.

``js_regex`` parses a pattern with ECMAScript's grammar (unicode mode) and translates it,
so ``\\p{L}``, ``\\u{1F600}``, ASCII ``\\d``/``\\w``/``\\b``, JS whitespace for ``\\s`` and
``$`` as the true end of input behave as in Node; ``is_regex`` checks a pattern without
flags (Annex B syntax), as TypeBox's ``regex`` format does.
"""

from __future__ import annotations

import functools
from typing import NoReturn

import regex

from agentls.ai.formats.js_text import join_surrogate_pairs

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
            self.src = [ord(ch) for ch in join_surrogate_pairs(pattern)]
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
