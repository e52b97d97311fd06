import { describe, expect, it } from 'vitest';
import { diagnosticsResult, type DocumentDiagnostics, toLspDiagnostic, toLspSeverity } from '../src/diagnostics';

const range = { start: { line: 0, character: 9 }, end: { line: 0, character: 10 } };

/** What vscode.languages.getDiagnostics() gives for two files (VS Code severities: Error 0 ... Hint 3). */
const ALL: DocumentDiagnostics[] = [
  {
    uri: 'file:///w/broken.json',
    fsPath: '/w/broken.json',
    items: [
      { range, severity: 0, message: 'Property expected', source: 'json', code: 513 },
      { range, severity: 1, message: 'Trailing comma', code: { value: 'trailing-comma', target: 'https://x' } },
    ],
  },
  { uri: 'file:///w/clean.ts', fsPath: '/w/clean.ts', items: [] },
  {
    uri: 'file:///w/my%20file.ts',
    fsPath: '/w/my file.ts',
    items: [
      { range, severity: 2, message: 'Info', source: '' },
      { range, severity: 3, message: 'Hint', code: '' },
    ],
  },
];

const pathOf = (uri: string): string | undefined =>
  uri.startsWith('file://') ? decodeURIComponent(uri.slice('file://'.length)) : undefined;

describe('agent/getDiagnostics', () => {
  it('maps VS Code severities (0-3) to LSP ones (1-4)', () => {
    expect([0, 1, 2, 3].map(toLspSeverity)).toEqual([1, 2, 3, 4]);
    expect(toLspSeverity(7)).toBe(1);
  });

  it('converts a diagnostic to LSP JSON: range, severity, message, source and code only when set', () => {
    const vscodeRange = { start: { line: 2, character: 4, extra: 1 }, end: { line: 3, character: 0 } };
    expect(toLspDiagnostic({ range: vscodeRange, severity: 0, message: 'm', source: 's', code: 42 })).toEqual({
      range: { start: { line: 2, character: 4 }, end: { line: 3, character: 0 } },
      severity: 1,
      message: 'm',
      source: 's',
      code: 42,
    });
    expect(toLspDiagnostic({ range, severity: 1, message: 'm', code: { value: 'no-unused', target: {} } })).toEqual({
      range,
      severity: 2,
      message: 'm',
      code: 'no-unused',
    });
    expect(toLspDiagnostic({ range, severity: 3, message: 'm', source: '', code: '' })).toEqual({
      range,
      severity: 4,
      message: 'm',
    });
  });

  it('answers every document with problems when no uris are given', () => {
    const result = diagnosticsResult(ALL, undefined, pathOf);
    expect(result.diagnostics.map((d) => d.uri)).toEqual(['file:///w/broken.json', 'file:///w/my%20file.ts']);
    expect(result.diagnostics[0]?.items).toEqual([
      { range, severity: 1, message: 'Property expected', source: 'json', code: 513 },
      { range, severity: 2, message: 'Trailing comma', code: 'trailing-comma' },
    ]);
    expect(result.diagnostics[1]?.items.map((d) => d.severity)).toEqual([3, 4]);
  });

  it('answers each uri asked for, in order, found by its path whatever its encoding', () => {
    const result = diagnosticsResult(
      ALL,
      ['file:///w/my file.ts', 'file:///w/none.py', 'file:///w/broken.json', 'untitled:x'],
      pathOf,
    );
    expect(result.diagnostics.map((d) => [d.uri, d.items.length])).toEqual([
      ['file:///w/my file.ts', 2],
      ['file:///w/none.py', 0],
      ['file:///w/broken.json', 2],
      ['untitled:x', 0],
    ]);
  });
});
