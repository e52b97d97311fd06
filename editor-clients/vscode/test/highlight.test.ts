import { describe, expect, it } from 'vitest';
import { escapeHtml, highlight, languageOf, tokenize } from '../webview/highlight';
import { renderMarkdown } from '../webview/markdown';

/** The tokens of a kind, as text. */
function kinds(code: string, lang: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const token of tokenize(code, languageOf(lang))) {
    if (token.kind) (out[token.kind] ??= []).push(token.text);
  }
  return out;
}

describe('languageOf', () => {
  it('knows the common languages and their aliases, case and attributes aside', () => {
    expect(languageOf('py')).toBe('python');
    expect(languageOf('Python')).toBe('python');
    expect(languageOf('ts title="a.ts"')).toBe('typescript');
    expect(languageOf('tsx')).toBe('typescript');
    expect(languageOf('js')).toBe('javascript');
    expect(languageOf('sh')).toBe('bash');
    expect(languageOf('console')).toBe('bash');
    expect(languageOf('jsonc')).toBe('json');
    expect(languageOf('yml')).toBe('yaml');
    expect(languageOf('')).toBeUndefined();
    expect(languageOf('brainfuck')).toBeUndefined();
  });
});

describe('tokenize', () => {
  it('python: keywords, literals, strings, triple strings, comments, numbers', () => {
    const code = 'def f(x):  # add one\n    """Doc "with" quotes."""\n    return x + 1.5e3 if x is not None else \'s\\\'q\'\n';
    expect(kinds(code, 'python')).toEqual({
      keyword: ['def', 'return', 'if', 'is', 'not', 'else'],
      comment: ['# add one'],
      string: ['"""Doc "with" quotes."""', "'s\\'q'"],
      number: ['1.5e3'],
      literal: ['None'],
    });
  });

  it('typescript: keywords, template strings, block and line comments; properties and identifiers stay plain', () => {
    const code = '/* a\n b */ export const n: number = 0x1F; // hex\nlet s = `t ${n}`; obj.if = await f(value2);';
    expect(kinds(code, 'ts')).toEqual({
      comment: ['/* a\n b */', '// hex'],
      keyword: ['export', 'const', 'let', 'await'],
      literal: ['number'],
      number: ['0x1F'],
      string: ['`t ${n}`'],
    });
  });

  it('json: keys apart from string values; literals and numbers', () => {
    expect(kinds('{"a": 1, "b" : "x", "c": [true, null, -2.5]}', 'json')).toEqual({
      key: ['"a"', '"b"', '"c"'],
      number: ['1', '2.5'],
      string: ['"x"'],
      literal: ['true', 'null'],
    });
  });

  it('bash: comments only at a word start, variables, keywords, single quotes without escapes', () => {
    expect(kinds("for f in *.py; do echo \"$f\" ${HOME} 'a\\' a#b; done # end", 'bash')).toEqual({
      keyword: ['for', 'in', 'do', 'echo', 'done'],
      string: ['"$f"', "'a\\'"],
      variable: ['${HOME}'],
      comment: ['# end'],
    });
  });

  it('an unclosed string ends with its line; an unclosed comment at the end', () => {
    expect(kinds('x = "open\ny = 2 /* never', 'js')).toEqual({ string: ['"open'], number: ['2'], comment: ['/* never'] });
  });

  it('the tokens put together are the code, whatever it is', () => {
    const samples = ['a = "x\\"y" # c\n', '/* */ `a${b}` 1e-3 .5 x.y', '{"k": [1, 2]}', 'echo $1 "$@" # x', '\\'];
    for (const code of samples) {
      for (const lang of ['python', 'ts', 'json', 'bash', 'sql', 'go', 'rust', 'css', 'unknown']) {
        expect(tokenize(code, languageOf(lang)).map((t) => t.text).join('')).toBe(code);
      }
    }
  });

  it('an unknown language is one plain token', () => {
    expect(tokenize('if x then "y"', undefined)).toEqual([{ text: 'if x then "y"' }]);
  });
});

describe('highlight', () => {
  it('escapes the code and wraps each token in its class', () => {
    expect(highlight('if (a < "<b>") // &', 'js')).toBe(
      '<span class="tok-keyword">if</span> (a &lt; <span class="tok-string">&quot;&lt;b&gt;&quot;</span>) <span class="tok-comment">// &amp;</span>',
    );
    expect(highlight('<script>', 'nope')).toBe('&lt;script&gt;');
    expect(escapeHtml('a&<>"')).toBe('a&amp;&lt;&gt;&quot;');
  });
});

describe('renderMarkdown', () => {
  it('wraps code blocks with a Copy button and highlights them by their language', () => {
    const html = renderMarkdown('Some text.\n\n```python\nreturn None\n```\n');
    expect(html).toContain('<p>Some text.</p>');
    expect(html).toContain(
      '<div class="code-block"><button class="icon copy-code" title="Copy the code" aria-label="Copy the code">Copy</button><pre><code class="language-python"><span class="tok-keyword">return</span> <span class="tok-literal">None</span>\n</code></pre>\n</div>',
    );
  });

  it('an indented block and a fence without a language get the button, unhighlighted', () => {
    const html = renderMarkdown('```\nif x\n```\n\n    indented <b>\n');
    expect(html.match(/class="code-block"/g)).toHaveLength(2);
    expect(html).not.toContain('tok-');
    expect(html).toContain('indented &lt;b&gt;');
  });

  it('raw HTML in the source, in text or a fence, stays escaped', () => {
    const html = renderMarkdown('<img src=x onerror=alert(1)>\n\n```html\n<script>alert(1)</script>\n```');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
  });
});
