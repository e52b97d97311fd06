import { describe, expect, it } from 'vitest';
import { lineDiff, parseUnifiedDiff, proposedDiff } from '../src/diff';
import { questionDetail } from '../src/question';

describe('parseUnifiedDiff (an edit row)', () => {
  it('takes the file from the headers, hides them, and marks each line', () => {
    const diff = parseUnifiedDiff('--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n keep\n-hello world\n+hello agentls\n\\ No newline at end of file\n');
    expect(diff).toEqual({
      file: 'notes.txt',
      added: 1,
      removed: 1,
      lines: [
        { kind: 'hunk', text: '@@ -1,2 +1,2 @@' },
        { kind: 'ctx', text: 'keep' },
        { kind: 'del', text: 'hello world' },
        { kind: 'add', text: 'hello agentls' },
        { kind: 'note', text: '\\ No newline at end of file' },
      ],
    });
  });

  it('keeps a blank context line, writes control characters out, names a new file', () => {
    const diff = parseUnifiedDiff('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,3 @@\n+a\x1b[2K\n \n+b\n');
    expect(diff?.file).toBe('new.txt');
    expect(diff?.lines.slice(1)).toEqual([
      { kind: 'add', text: 'a\\x1b[2K' },
      { kind: 'ctx', text: '' },
      { kind: 'add', text: 'b' },
    ]);
  });

  it('is undefined for text without a hunk', () => {
    expect(parseUnifiedDiff('Wrote 3 bytes')).toBeUndefined();
  });
});

describe('lineDiff and proposedDiff (a permission question)', () => {
  it('keeps the shared lines as context, up to three around a change', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n');
    const after = before.replace('5', 'five');
    expect(lineDiff(before, after)).toEqual([
      { kind: 'note', text: '…' },
      { kind: 'ctx', text: '2' },
      { kind: 'ctx', text: '3' },
      { kind: 'ctx', text: '4' },
      { kind: 'del', text: '5' },
      { kind: 'add', text: 'five' },
      { kind: 'ctx', text: '6' },
      { kind: 'ctx', text: '7' },
      { kind: 'ctx', text: '8' },
      { kind: 'note', text: '…' },
    ]);
  });

  it("shows an edit's replacements, each under its number", () => {
    const diff = proposedDiff('edit', {
      path: 'calc.py',
      edits: [
        { oldText: 'def add(a, b):\n    return a - b\n', newText: 'def add(a, b):\n    return a + b\n' },
        { oldText: 'x = 1', newText: 'x = 2' },
      ],
    });
    expect(diff).toMatchObject({ file: 'calc.py', added: 2, removed: 2 });
    expect(diff?.lines).toEqual([
      { kind: 'hunk', text: 'edit 1 of 2' },
      { kind: 'ctx', text: 'def add(a, b):' },
      { kind: 'del', text: '    return a - b' },
      { kind: 'add', text: '    return a + b' },
      { kind: 'hunk', text: 'edit 2 of 2' },
      { kind: 'del', text: 'x = 1' },
      { kind: 'add', text: 'x = 2' },
    ]);
  });

  it("shows a write's content against the file as it is, or all added for a new file", () => {
    expect(proposedDiff('write', { path: 'a.txt', content: 'one\ntwo\n' }, 'one\n')?.lines).toEqual([
      { kind: 'ctx', text: 'one' },
      { kind: 'add', text: 'two' },
    ]);
    expect(proposedDiff('write', { path: 'b.txt', content: 'x\ny' })).toMatchObject({ file: 'b.txt', added: 2, removed: 0 });
    expect(proposedDiff('bash', { command: 'ls' })).toBeUndefined();
  });
});

describe('questionDetail (the inline permission card)', () => {
  it("shows a bash call's whole command, newlines kept, control characters written out", () => {
    const command = `echo ${'x'.repeat(700)} && \\\n  touch PWNED #\r\x1b[2K\u202e`;
    const detail = questionDetail('bash', { command });
    expect(detail).toEqual({ kind: 'command', text: `echo ${'x'.repeat(700)} && \\\n  touch PWNED #\\r\\x1b[2K\\u202e` });
  });

  it('shows the change of a write or edit, and the arguments of an MCP tool', () => {
    expect(questionDetail('edit', { path: 'n.txt', edits: [{ oldText: 'a', newText: 'b' }] })).toMatchObject({
      kind: 'diff',
      diff: { file: 'n.txt', lines: [{ kind: 'del', text: 'a' }, { kind: 'add', text: 'b' }] },
    });
    expect(questionDetail('mcp__quirky__echo', { text: 'hi\u202e', count: 2 })).toEqual({
      kind: 'args',
      text: '{\n  "text": "hi\\u202e",\n  "count": 2\n}',
    });
    expect(questionDetail('mcp__time__now', {})).toBeUndefined();
  });
});
