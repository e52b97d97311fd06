import { describe, expect, it } from 'vitest';
import {
  sessionEntries,
  sessionTitle,
  timeAgo,
  toolTarget,
  modelLabels,
  permissionDetail,
  permissionMessage,
  statsParts,
  appendTail,
  bashLabel,
  contentText,
  EMPTY_TAIL,
  formatCost,
  formatTokens,
  parseModelKey,
  relativePath,
  summarizeArgs,
  summarizePartialArgs,
  tailText,
  truncateHead,
  truncateTail,
  visibleControls,
} from '../src/format';

describe('tool call summaries', () => {
  it.each([
    ['bash', { command: 'pytest -q\n  --lf' }, 'pytest -q --lf'],
    ['read', { path: 'src/a.py', offset: 10 }, 'src/a.py:10'],
    ['edit', { path: 'a.txt', edits: [{}, {}] }, 'a.txt (2 edits)'],
    ['edit', { path: 'a.txt', edits: [{}] }, 'a.txt'],
    ['write', { path: 'b.txt', content: 'x' }, 'b.txt'],
    ['ls', {}, '.'],
    ['grep', { pattern: 'TODO', path: 'src' }, 'TODO in src'],
    ['find', { pattern: '*.ts' }, '*.ts'],
    ['custom', { query: 'x' }, '{"query":"x"}'],
  ])('%s %j -> %s', (tool, args, summary) => {
    expect(summarizeArgs(tool, args)).toBe(summary);
  });

  it('cuts long summaries', () => {
    const summary = summarizeArgs('bash', { command: 'x'.repeat(500) });
    expect(summary.length).toBe(120);
    expect(summary.endsWith('…')).toBe(true);
  });

  it('reads what has arrived of streaming arguments', () => {
    expect(summarizePartialArgs('')).toBe('');
    expect(summarizePartialArgs('{"pa')).toBe('');
    expect(summarizePartialArgs('{"path":"src/ma')).toBe('src/ma');
    expect(summarizePartialArgs('{"command":"echo \\"hi')).toBe('echo "hi');
    expect(summarizePartialArgs('{"command":"a\\')).toBe('a');
    expect(summarizePartialArgs('{"path":"x.txt"}')).toBe('x.txt');
  });
});

describe('text helpers', () => {
  it('joins text blocks and marks images', () => {
    expect(contentText('plain')).toBe('plain');
    expect(
      contentText([
        { type: 'text', text: 'a' },
        { type: 'image', data: '', mimeType: 'image/png' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('a\n[image]\nb');
    expect(contentText(undefined)).toBe('');
  });

  it('truncates the head or the tail', () => {
    expect(truncateHead('abcdef', 3)).toBe('abc\n… (3 more characters)');
    expect(truncateTail('abcdef', 3)).toBe('… (3 earlier characters)\ndef');
    expect(truncateHead('abc', 3)).toBe('abc');
  });

  it('formats figures', () => {
    expect(formatTokens(999)).toBe('999');
    expect(formatTokens(1234)).toBe('1.2k');
    expect(formatTokens(123_456)).toBe('123k');
    expect(formatTokens(2_500_000)).toBe('2.5M');
    expect(formatCost(0)).toBe('$0');
    expect(formatCost(0.0042)).toBe('$0.0042');
    expect(formatCost(1.234)).toBe('$1.23');
  });

  it('parses provider/id model keys', () => {
    expect(parseModelKey('faux/faux-1')).toEqual({ provider: 'faux', id: 'faux-1' });
    expect(parseModelKey('openrouter/meta/llama')).toEqual({ provider: 'openrouter', id: 'meta/llama' });
    expect(parseModelKey('nope')).toBeUndefined();
    expect(parseModelKey('x/')).toBeUndefined();
  });
});

describe('streamed output', () => {
  it('keeps the latest characters and counts the rest', () => {
    let tail = appendTail(EMPTY_TAIL, 'abc', 4);
    expect(tailText(tail)).toBe('abc');
    tail = appendTail(tail, 'defg', 4);
    expect(tail).toEqual({ text: 'defg', dropped: 3 });
    expect(tailText(appendTail(tail, 'h', 4))).toBe('… (4 earlier characters)\nefgh');
  });

  it('says how a command ended', () => {
    expect(bashLabel({ status: 'running', exitCode: null })).toBe('running');
    expect(bashLabel({ status: 'done', exitCode: 0 })).toBe('exit 0');
    expect(bashLabel({ status: 'error', exitCode: 2 })).toBe('exit 2');
    expect(bashLabel({ status: 'cancelled', exitCode: null })).toBe('cancelled');
    expect(bashLabel({ status: 'done', exitCode: null })).toBe('done');
  });
});

describe('relativePath', () => {
  it('is relative inside the folder, as it is elsewhere', () => {
    expect(relativePath('/w/AGENTS.md', '/w')).toBe('AGENTS.md');
    expect(relativePath('/w/sub/CLAUDE.md', '/w/')).toBe('sub/CLAUDE.md');
    expect(relativePath('/wx/AGENTS.md', '/w')).toBe('/wx/AGENTS.md');
    expect(relativePath('/AGENTS.md', '/w')).toBe('/AGENTS.md');
    expect(relativePath('/w/AGENTS.md', undefined)).toBe('/w/AGENTS.md');
  });
});

describe('permissionDetail', () => {
  it('names the command or the path, not the arguments as JSON', () => {
    expect(permissionDetail('bash', { command: 'rm -rf build' })).toBe('$ rm -rf build');
    expect(permissionDetail('write', { path: 'a.txt', content: 'x' })).toBe('write a.txt');
    expect(permissionDetail('edit', { path: 'a.py', edits: [{}, {}] })).toBe('edit a.py (2 edits)');
    expect(permissionDetail('custom', { n: 1 })).toBe('custom\n\n{\n  "n": 1\n}');
    expect(permissionDetail('bash', { command: 'x'.repeat(700) })).toHaveLength(2 + 600 + 1);
  });
});

describe('the header figures', () => {
  it('say in words what each figure is', () => {
    const parts = statsParts({ input: 25_000, output: 619, cacheRead: 6600, cacheWrite: 25_000, cost: 0, contextPercent: 3 });
    expect(parts.map((p) => p.text).join(' · ')).toBe('↑25k · ↓619 · R6.6k · W25k · $0 · ctx 3%');
    expect(parts.map((p) => p.title.split(':')[0])).toEqual(['Input', 'Output', 'Cache read', 'Cache write', 'Cost of the session so far', 'Context used']);
    expect(parts[0]?.title).toContain('25,000 tokens');
    expect(statsParts({ input: 1, output: 2, cacheRead: 0, cacheWrite: 0, cost: 0.5, contextPercent: null }).map((p) => p.text)).toEqual(['↑1', '↓2', '$0.50']);
  });
});

describe('modelLabels', () => {
  it('adds the provider only when two providers offer a model of the same name', () => {
    expect(
      modelLabels([
        { provider: 'anthropic', id: 'claude-x', name: 'Claude X' },
        { provider: 'openrouter', id: 'anthropic/claude-x', name: 'Claude X' },
        { provider: 'faux', id: 'faux-1' },
      ]),
    ).toEqual(['Claude X (anthropic)', 'Claude X (openrouter)', 'faux-1']);
  });
});

describe('toolTarget', () => {
  it('is the path of read, edit, write, ls, find and grep calls, with the line a read starts at', () => {
    expect(toolTarget('read', { path: 'a.py', offset: 12 })).toEqual({ path: 'a.py', line: 12 });
    expect(toolTarget('read', { path: 'a.py', offset: 0 })).toEqual({ path: 'a.py' });
    expect(toolTarget('edit', { path: 'b.ts', edits: [] })).toEqual({ path: 'b.ts' });
    expect(toolTarget('write', { path: '/abs/c', content: '' })).toEqual({ path: '/abs/c' });
    expect(toolTarget('ls', { path: 'src' })).toEqual({ path: 'src' });
    expect(toolTarget('grep', { pattern: 'x', path: 'src', offset: 3 })).toEqual({ path: 'src' });
    expect(toolTarget('find', { pattern: '*.md' })).toBeUndefined();
    expect(toolTarget('ls', {})).toBeUndefined();
    expect(toolTarget('bash', { command: 'cat a', path: 'a' })).toBeUndefined();
    expect(toolTarget('read', null)).toBeUndefined();
    expect(toolTarget('read', { path: '' })).toBeUndefined();
  });
});

describe('session history entries', () => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  it('says how long ago in words', () => {
    expect(timeAgo(now - 20_000, now)).toBe('just now');
    expect(timeAgo(now + 5_000, now)).toBe('just now');
    expect(timeAgo(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(timeAgo(now - 3 * 3600_000, now)).toBe('3 h ago');
    expect(timeAgo(now - 26 * 3600_000, now)).toBe('1 day ago');
    expect(timeAgo(now - 9 * 86400_000, now)).toBe('9 days ago');
    expect(timeAgo(Date.UTC(2026, 0, 2), now)).toBe('2026-01-02');
  });

  it('lists title, message count and time, marking the current session', () => {
    const entries = sessionEntries(
      [
        { sessionId: 'a', title: 'Fix the tests', updatedAt: now - 120_000, messageCount: 12 },
        { sessionId: 'b', updatedAt: now - 7200_000, messageCount: 1 },
        { sessionId: 'c', title: '   ', updatedAt: now, messageCount: 0 },
      ],
      'b',
      now,
    );
    expect(entries.map(({ updated, ...rest }) => rest)).toEqual([
      { sessionId: 'a', title: 'Fix the tests', detail: '12 messages · 2 min ago', current: false },
      { sessionId: 'b', title: '(no prompt yet)', detail: '1 message · 2 h ago', current: true },
      { sessionId: 'c', title: '(no prompt yet)', detail: '0 messages · just now', current: false },
    ]);
    expect(entries[0]?.updated).toBe(new Date(now - 120_000).toLocaleString());
    expect(sessionTitle({ title: ' Hi ' })).toBe('Hi');
  });
});

describe('control characters in what a question shows', () => {
  const SPOOF = 'touch PWNED #\r\x1b[2K\x1b[1A\u202eRun the command: ls -la';
  const SHOWN = 'touch PWNED #\\r\\x1b[2K\\x1b[1A\\u202eRun the command: ls -la';

  it.each([
    ['\x00\x07\x08\x0b\x0c\x7f', '\\x00\\x07\\x08\\x0b\\x0c\\x7f'],
    ['\x85\x9b', '\\x85\\x9b'],
    ['\u202a\u202e\u2066\u2069\u061c', '\\u202a\\u202e\\u2066\\u2069\\u061c'],
    ['\u200b\u200f\u2060\ufeff\u2028', '\\u200b\\u200f\\u2060\\ufeff\\u2028'],
    ['tab\tand\nnewline, é ✓ 日本', 'tab\tand\nnewline, é ✓ 日本'],
  ])('%j is shown as %j', (raw, shown) => {
    expect(visibleControls(raw)).toBe(shown);
  });

  it('writes out newlines and tabs for one-line text', () => {
    expect(visibleControls('ls\nrm -rf ~\t#', { newlines: false })).toBe('ls\\nrm -rf ~\\t#');
  });

  it("the modal's message and detail show the whole spoofing command", () => {
    expect(permissionMessage(`Run the command: ${SPOOF}\nrm -rf ~`)).toBe(`agentls: Run the command: ${SHOWN}\\nrm -rf ~`);
    expect(permissionDetail('bash', { command: SPOOF })).toBe(`$ ${SHOWN}`);
    expect(permissionDetail('mcp__srv__t\u202e', { x: '\u202e' })).toContain('\\u202e');
    expect(permissionDetail('mcp__srv__t\u202e', { x: '\u202e' })).not.toContain('\u202e');
    expect(summarizeArgs('bash', { command: SPOOF })).toBe(SHOWN);
  });
});
