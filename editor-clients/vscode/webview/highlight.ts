/**
 * A small syntax highlighter for the code blocks of the panel's markdown: comments,
 * strings, numbers, keywords and literals of the common languages, as escaped HTML
 * with `<span class="tok-KIND">`. The colours come from the theme (media/panel.css).
 * Pure (no DOM): the unit tests run it in Node.
 */

export type TokenKind = 'comment' | 'string' | 'number' | 'keyword' | 'literal' | 'key' | 'variable';

interface Language {
  /** Line comment starts (`#`, `//`, `--`). */
  line: string[];
  /** Block comments `[open, close]`. */
  block: [string, string][];
  /** Quote characters of strings; triple quotes (`"""`) when `triple`. */
  quotes: string[];
  triple?: boolean;
  keywords: Set<string>;
  literals: Set<string>;
  /** `$name`, `${...}` are variables (shells). */
  dollar?: boolean;
  /** A string followed by `:` is a key (JSON). */
  keys?: boolean;
}

const words = (text: string): Set<string> => new Set(text.split(/\s+/).filter(Boolean));

const JS_KEYWORDS =
  'async await break case catch class const continue debugger default delete do else export extends finally for from function get if import in instanceof let new of return set static super switch this throw try typeof var void while with yield';
const TS_KEYWORDS = `${JS_KEYWORDS} abstract as declare enum implements interface keyof namespace private protected public readonly satisfies type`;

const C_LIKE = { line: ['//'], block: [['/*', '*/']] as [string, string][] };

const LANGUAGES: Record<string, Language> = {
  python: {
    line: ['#'],
    block: [],
    quotes: ['"', "'"],
    triple: true,
    keywords: words(
      'and as assert async await break class continue def del elif else except finally for from global if import in is lambda match case nonlocal not or pass raise return try while with yield',
    ),
    literals: words('True False None self'),
  },
  javascript: {
    ...C_LIKE,
    quotes: ['"', "'", '`'],
    keywords: words(JS_KEYWORDS),
    literals: words('true false null undefined NaN Infinity'),
  },
  typescript: {
    ...C_LIKE,
    quotes: ['"', "'", '`'],
    keywords: words(TS_KEYWORDS),
    literals: words('true false null undefined NaN Infinity string number boolean any unknown never object'),
  },
  json: { line: ['//'], block: [['/*', '*/']], quotes: ['"'], keywords: new Set(), literals: words('true false null'), keys: true },
  bash: {
    line: ['#'],
    block: [],
    quotes: ['"', "'"],
    keywords: words(
      'if then else elif fi for while until do done case esac in function return local export exit break continue select time echo cd source set unset readonly shift',
    ),
    literals: words('true false'),
    dollar: true,
  },
  go: {
    ...C_LIKE,
    quotes: ['"', "'", '`'],
    keywords: words(
      'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var',
    ),
    literals: words('true false nil iota'),
  },
  rust: {
    ...C_LIKE,
    quotes: ['"'],
    keywords: words(
      'as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while',
    ),
    literals: words('true false None Some Ok Err'),
  },
  c: {
    ...C_LIKE,
    quotes: ['"', "'"],
    keywords: words(
      'auto break case char class const continue default delete do double else enum extern float for goto if include define inline int long namespace new private protected public register return short signed sizeof static struct switch template this throw try catch typedef typename union unsigned using virtual void volatile while',
    ),
    literals: words('true false NULL nullptr'),
  },
  java: {
    ...C_LIKE,
    quotes: ['"', "'"],
    keywords: words(
      'abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long new package private protected public return short static super switch synchronized this throw throws try void volatile while var fun val when object override',
    ),
    literals: words('true false null'),
  },
  yaml: { line: ['#'], block: [], quotes: ['"', "'"], keywords: new Set(), literals: words('true false null yes no on off') },
  toml: { line: ['#'], block: [], quotes: ['"', "'"], triple: true, keywords: new Set(), literals: words('true false') },
  css: { line: [], block: [['/*', '*/']], quotes: ['"', "'"], keywords: words('important media import from to'), literals: new Set() },
  sql: {
    line: ['--'],
    block: [['/*', '*/']],
    quotes: ["'", '"'],
    keywords: words(
      'select from where and or not insert into values update set delete create table drop alter index join left right inner outer on as group by order having limit offset union all distinct primary key foreign references default case when then else end is in like between exists',
    ),
    literals: words('null true false'),
  },
};

const ALIASES: Record<string, string> = {
  py: 'python',
  python3: 'python',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  node: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  jsonc: 'json',
  json5: 'json',
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  shellscript: 'bash',
  golang: 'go',
  rs: 'rust',
  h: 'c',
  cpp: 'c',
  'c++': 'c',
  cc: 'c',
  hpp: 'c',
  cs: 'c',
  csharp: 'c',
  kotlin: 'java',
  kt: 'java',
  yml: 'yaml',
  scss: 'css',
  less: 'css',
  postgres: 'sql',
  postgresql: 'sql',
  sqlite: 'sql',
  mysql: 'sql',
};

/** The language of a fence's info string (`ts`, `Python`, `bash title=x`), if known. */
export function languageOf(info: string): string | undefined {
  const name = info.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  const key = ALIASES[name] ?? name;
  return key in LANGUAGES ? key : undefined;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export interface Token {
  kind?: TokenKind;
  text: string;
}

const IDENT = /[A-Za-z_$][\w$]*/y;
const NUMBER = /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?/y;

/** Split `code` into tokens (plain text has no kind). Unknown languages give one plain token. */
export function tokenize(code: string, language: string | undefined): Token[] {
  const lang = language ? LANGUAGES[language] : undefined;
  if (!lang) return [{ text: code }];
  const tokens: Token[] = [];
  let plain = '';
  const push = (kind: TokenKind | undefined, text: string): void => {
    if (kind === undefined) {
      plain += text;
      return;
    }
    if (plain) tokens.push({ text: plain });
    plain = '';
    tokens.push({ kind, text });
  };
  let i = 0;
  const n = code.length;
  const startsWith = (s: string): boolean => code.startsWith(s, i);
  outer: while (i < n) {
    const ch = code[i] as string;
    for (const start of lang.line) {
      // `#` in a shell word (a#b) or after `$` is no comment
      if (startsWith(start) && !(lang.dollar && i > 0 && /[^\s;|&(]/.test(code[i - 1] as string))) {
        const end = code.indexOf('\n', i);
        const stop = end === -1 ? n : end;
        push('comment', code.slice(i, stop));
        i = stop;
        continue outer;
      }
    }
    for (const [open, close] of lang.block) {
      if (startsWith(open)) {
        const end = code.indexOf(close, i + open.length);
        const stop = end === -1 ? n : end + close.length;
        push('comment', code.slice(i, stop));
        i = stop;
        continue outer;
      }
    }
    if (lang.quotes.includes(ch)) {
      const triple = lang.triple && startsWith(ch.repeat(3)) ? ch.repeat(3) : undefined;
      let j = i + (triple ? 3 : 1);
      while (j < n) {
        // a backslash escapes the next character, except in a shell's single quotes
        if (code[j] === '\\' && !(lang.dollar && ch === "'")) {
          j += 2;
          continue;
        }
        if (triple ? code.startsWith(triple, j) : code[j] === ch) {
          j += triple ? 3 : 1;
          break;
        }
        if (!triple && code[j] === '\n' && ch !== '`' && !lang.dollar) break; // an unclosed string ends with its line
        j++;
      }
      const text = code.slice(i, Math.min(j, n));
      let k = j;
      while (k < n && (code[k] === ' ' || code[k] === '\t')) k++;
      push(lang.keys && code[k] === ':' ? 'key' : 'string', text);
      i = Math.min(j, n);
      continue;
    }
    if (lang.dollar && ch === '$') {
      const match = /\$(?:\{[^}\n]*\}|[A-Za-z_]\w*|[0-9#?@*!$-])/y;
      match.lastIndex = i;
      const m = match.exec(code);
      if (m) {
        push('variable', m[0]);
        i += m[0].length;
        continue;
      }
    }
    const before = i > 0 ? (code[i - 1] as string) : '';
    if (/[\d.]/.test(ch) && !/[\w$]/.test(before)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(code);
      if (m && m[0] !== '.' && /\d/.test(m[0])) {
        push('number', m[0]);
        i += m[0].length;
        continue;
      }
    }
    if (/[A-Za-z_$]/.test(ch) && !/[\w$]/.test(before)) {
      IDENT.lastIndex = i;
      const m = IDENT.exec(code);
      if (m) {
        const word = m[0];
        const lower = language === 'sql' ? word.toLowerCase() : word;
        // `obj.if` is a property, not a keyword
        const property = before === '.' && language !== 'bash';
        push(
          property ? undefined : lang.keywords.has(lower) ? 'keyword' : lang.literals.has(lower) ? 'literal' : undefined,
          word,
        );
        i += word.length;
        continue;
      }
    }
    push(undefined, ch);
    i++;
  }
  if (plain) tokens.push({ text: plain });
  return tokens;
}

/** `code` as escaped HTML with a `tok-KIND` span per token; plain escaped text for unknown languages. */
export function highlight(code: string, info: string): string {
  return tokenize(code, languageOf(info))
    .map((token) => (token.kind ? `<span class="tok-${token.kind}">${escapeHtml(token.text)}</span>` : escapeHtml(token.text)))
    .join('');
}
