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

The package: :mod:`.typebox` (the format checks and ``FORMATS``), :mod:`.whatwg_url` (the URL
parser's failure paths), :mod:`.ecmascript_regex` (the pattern translator) and :mod:`.js_text`
(JavaScript's view of strings that they share).
"""

from agentls.ai.formats.ecmascript_regex import js_regex
from agentls.ai.formats.typebox import FORMATS

__all__ = ["FORMATS", "js_regex"]
