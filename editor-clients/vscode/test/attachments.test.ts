import { describe, expect, it } from 'vitest';
import {
  addChip,
  atQuery,
  chipFor,
  contextChip,
  contextChips,
  filterFiles,
  rangeLines,
  removeAtWord,
  removeChip,
  sameAttachment,
  withoutSent,
} from '../src/attachments';
import type { Attachment } from '../src/protocol';

const CALC = 'file:///w/src/calc.py';
const range = (l1: number, c1: number, l2: number, c2: number) => ({
  start: { line: l1, character: c1 },
  end: { line: l2, character: c2 },
});
const selection = (l1: number, c1: number, l2: number, c2: number): Attachment => ({
  type: 'selection',
  uri: CALC,
  range: range(l1, c1, l2, c2),
});

describe('attachment chips', () => {
  it('labels a selection by its 1-based lines; a range ending at column 0 stops before that line', () => {
    expect(rangeLines(range(2, 0, 3, 12))).toEqual({ startLine: 3, endLine: 4 });
    expect(rangeLines(range(2, 0, 4, 0))).toEqual({ startLine: 3, endLine: 4 });
    expect(rangeLines(range(2, 4, 2, 9))).toEqual({ startLine: 3, endLine: 3 });
    expect(rangeLines(range(2, 0, 2, 0))).toEqual({ startLine: 3, endLine: 3 });
    expect(chipFor(selection(2, 0, 3, 12), 'src/calc.py')).toEqual({
      attachment: selection(2, 0, 3, 12),
      label: 'src/calc.py:3-4',
      title: 'Selection: src/calc.py, lines 3-4',
    });
    expect(chipFor(selection(2, 4, 2, 9), 'src/calc.py').label).toBe('src/calc.py:3');
  });

  it('labels a file by its path and diagnostics as problems', () => {
    expect(chipFor({ type: 'file', uri: 'file:///w/README.md' }, 'README.md').label).toBe('README.md');
    expect(chipFor({ type: 'diagnostics', uri: CALC }, 'src/calc.py').label).toBe('src/calc.py: problems');
    expect(chipFor({ type: 'diagnostics' }, '').label).toBe('problems');
  });

  it('adds an attachment once, removes by index, and keeps the chips added while a send went on', () => {
    const a = chipFor(selection(2, 0, 3, 12), 'calc.py');
    const b = chipFor({ type: 'file', uri: 'file:///w/README.md' }, 'README.md');
    const c = chipFor(selection(5, 0, 6, 0), 'calc.py');
    let chips = addChip([], a);
    chips = addChip(chips, b);
    chips = addChip(chips, chipFor(selection(2, 0, 3, 12), 'calc.py')); // the same selection again
    expect(chips.map((chip) => chip.label)).toEqual(['calc.py:3-4', 'README.md']);
    expect(removeChip(chips, 0).map((chip) => chip.label)).toEqual(['README.md']);
    expect(withoutSent([...chips, c], chips).map((chip) => chip.label)).toEqual(['calc.py:6']);
    expect(sameAttachment(a.attachment, c.attachment)).toBe(false);
    expect(sameAttachment({ type: 'file', uri: CALC }, { type: 'selection', uri: CALC, range: range(0, 0, 1, 0) })).toBe(
      false,
    );
  });
});

describe('the @ file completion', () => {
  const files = [
    { uri: 'file:///w/docs/notes/readme.txt', path: 'docs/notes/readme.txt' },
    { uri: 'file:///w/README.md', path: 'README.md' },
    { uri: 'file:///w/src/calc.py', path: 'src/calc.py' },
    { uri: 'file:///w/src/read.ts', path: 'src/read.ts' },
    { uri: 'file:///w/thread.c', path: 'thread.c' },
  ];

  it('finds the @word at the cursor, at the start or after a blank only', () => {
    expect(atQuery('@', 1)).toEqual({ query: '', start: 0 });
    expect(atQuery('look at @src/ca', 15)).toEqual({ query: 'src/ca', start: 8 });
    expect(atQuery('mail me@home', 12)).toBeUndefined();
    expect(atQuery('@calc and more', 14)).toBeUndefined(); // the cursor is past the word
    expect(atQuery('@calc and more', 5)).toEqual({ query: 'calc', start: 0 });
    expect(atQuery('line one\n@no', 12)).toEqual({ query: 'no', start: 9 });
  });

  it('lists names that start with the word first, then paths that do, then paths that contain it', () => {
    expect(filterFiles(files, 'read').map((f) => f.path)).toEqual([
      'README.md', // names first, the shorter path first among them
      'src/read.ts',
      'docs/notes/readme.txt',
      'thread.c',
    ]);
    expect(filterFiles(files, 'src/').map((f) => f.path)).toEqual(['src/calc.py', 'src/read.ts']); // same length: by name
    expect(filterFiles(files, '').length).toBe(5);
    expect(filterFiles(files, '', 2).length).toBe(2);
    expect(filterFiles(files, 'zzz')).toEqual([]);
  });

  it('takes the @word out of the text when a file is picked', () => {
    expect(removeAtWord('@REA', 4)).toEqual({ text: '', cursor: 0 });
    expect(removeAtWord('see @no and fix', 7)).toEqual({ text: 'see and fix', cursor: 4 });
    expect(removeAtWord('see @notes', 10)).toEqual({ text: 'see ', cursor: 4 });
    expect(removeAtWord('no at word', 3)).toEqual({ text: 'no at word', cursor: 3 });
  });
});

describe('the chips of a user message (editorContext details)', () => {
  it('shows a selection by its lines, a file by its path, diagnostics by their count', () => {
    const details = {
      attachments: [
        {
          type: 'selection',
          uri: CALC,
          path: 'src/calc.py',
          range: range(2, 0, 3, 12),
          startLine: 3,
          endLine: 4,
          language: 'python',
          lines: 2,
          truncated: false,
        },
        { type: 'file', uri: 'file:///w/README.md', path: 'README.md', language: 'markdown', lines: 40, truncated: true },
        { type: 'diagnostics', uri: CALC, path: 'src/calc.py', count: 2, lines: 2, truncated: false },
        { type: 'diagnostics', count: 1, lines: 1, truncated: false },
      ],
    };
    expect(contextChips(details)).toEqual([
      { type: 'selection', label: 'src/calc.py:3-4', title: 'Selection: src/calc.py:3-4 (2 lines)' },
      { type: 'file', label: 'README.md', title: 'File: README.md (40 lines, cut: the read tool has the rest)' },
      { type: 'diagnostics', label: '2 problems', title: '2 problems the editor showed in src/calc.py' },
      { type: 'diagnostics', label: '1 problem', title: '1 problem the editor showed' },
    ]);
  });

  it('falls back to the range, and rejects details of another form', () => {
    expect(contextChip({ type: 'selection', path: 'a.py', range: range(0, 0, 0, 3) }).label).toBe('a.py:1');
    expect(contextChips(undefined)).toBeUndefined();
    expect(contextChips({ other: 1 })).toBeUndefined();
    expect(contextChips({ attachments: [null, 'x'] })).toEqual([]);
  });
});
