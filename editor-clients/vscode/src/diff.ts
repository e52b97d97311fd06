/**
 * Diffs as the panel shows them (pure): the unified diff of an `edit` result read into
 * coloured lines (its `---`/`+++` headers become the file name), and the line diff of a
 * change a permission question asks about (an `edit`'s replacements, a `write`'s content).
 */

import { visibleControls } from './format';

/** `add` / `del`: a line added or removed; `ctx`: unchanged; `hunk`: where the next lines are; `note`: `\ No newline…`, a cut. */
export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  /** The line without its `+`/`-`/` ` marker, control characters written out. */
  text: string;
}

export interface DiffView {
  /** The file, as the diff's `+++ b/…` (or `--- a/…`) names it; `''` when it names none. */
  file: string;
  added: number;
  removed: number;
  lines: DiffLine[];
}

const MARKERS: Record<string, DiffLineKind> = { '+': 'add', '-': 'del', ' ': 'ctx', '\\': 'note' };

/** `a/notes.txt` -> `notes.txt`; `/dev/null` -> `''`. */
function headerFile(rest: string): string {
  const name = rest.split('\t')[0] ?? '';
  if (name === '/dev/null') return '';
  return /^[ab]\//.test(name) ? name.slice(2) : name;
}

/** A unified diff (`--- a/x`, `+++ b/x`, `@@ … @@`, lines) as the panel's lines; `undefined` if it is none. */
export function parseUnifiedDiff(diff: string): DiffView | undefined {
  const lines: DiffLine[] = [];
  let file = '';
  let inHunk = false;
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    if (!inHunk && line.startsWith('--- ')) {
      file ||= headerFile(line.slice(4));
      continue;
    }
    if (!inHunk && line.startsWith('+++ ')) {
      file = headerFile(line.slice(4)) || file;
      continue;
    }
    if (line.startsWith('@@')) {
      inHunk = true;
      lines.push({ kind: 'hunk', text: visibleControls(line, { newlines: false }) });
      continue;
    }
    if (!inHunk) continue;
    const kind = MARKERS[line[0] ?? ''];
    // a line of the server's own (`… more lines left out`) is a note
    lines.push(kind ? { kind, text: visibleControls(kind === 'note' ? line : line.slice(1), { newlines: false }) } : { kind: 'note', text: visibleControls(line, { newlines: false }) });
  }
  if (lines.length === 0) return undefined;
  return { file, ...counts(lines), lines };
}

function counts(lines: readonly DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((line) => line.kind === 'add').length,
    removed: lines.filter((line) => line.kind === 'del').length,
  };
}

/** Above this many line pairs the diff is not matched: the old lines removed, the new added. */
const MAX_CELLS = 250_000;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Each line of `a` and `b` as kept, removed or added (a longest common subsequence). */
function matchLines(a: readonly string[], b: readonly string[]): DiffLine[] {
  if (a.length * b.length > MAX_CELLS) {
    return [...a.map((text) => ({ kind: 'del' as const, text })), ...b.map((text) => ({ kind: 'add' as const, text }))];
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..]
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i]![j] = a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ kind: 'ctx', text: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || lengths[i + 1]![j]! >= lengths[i]![j + 1]!)) {
      out.push({ kind: 'del', text: a[i++]! }); // the removed lines before the added ones
    } else {
      out.push({ kind: 'add', text: b[j++]! });
    }
  }
  return out;
}

/**
 * The lines that change from `before` to `after`, with up to `context` unchanged lines
 * around each change (`…` where more are left out); control characters written out.
 */
export function lineDiff(before: string, after: string, context = 3): DiffLine[] {
  const matched = matchLines(splitLines(before), splitLines(after));
  const near = matched.map(() => false);
  matched.forEach((line, index) => {
    if (line.kind === 'ctx') return;
    for (let k = Math.max(0, index - context); k <= Math.min(matched.length - 1, index + context); k++) near[k] = true;
  });
  const out: DiffLine[] = [];
  matched.forEach((line, index) => {
    if (near[index]) out.push({ kind: line.kind, text: visibleControls(line.text, { newlines: false }) });
    else if (index === 0 || near[index - 1]) out.push({ kind: 'note', text: '…' });
  });
  return out;
}

/**
 * The change a `write` or `edit` call would make, for its permission question: an edit's
 * replacements one after the other (`edit 2 of 3` between them), a write's content against
 * `before` (the file as it is; `undefined`: new or unknown, every line added). `undefined`
 * for other tools and for arguments that are not such a call.
 */
export function proposedDiff(toolName: string, args: unknown, before?: string): DiffView | undefined {
  const a = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  const file = typeof a.path === 'string' ? visibleControls(a.path, { newlines: false }) : '';
  let lines: DiffLine[];
  if (toolName === 'write' && typeof a.content === 'string') {
    lines = lineDiff(before ?? '', a.content);
  } else if (toolName === 'edit' && Array.isArray(a.edits) && a.edits.length > 0) {
    const edits = a.edits as unknown[];
    lines = edits.flatMap((edit, index) => {
      const e = edit !== null && typeof edit === 'object' ? (edit as Record<string, unknown>) : {};
      const old = typeof e.oldText === 'string' ? e.oldText : '';
      const replacement = typeof e.newText === 'string' ? e.newText : '';
      const head: DiffLine[] = edits.length > 1 ? [{ kind: 'hunk', text: `edit ${index + 1} of ${edits.length}` }] : [];
      return [...head, ...lineDiff(old, replacement, Number.MAX_SAFE_INTEGER)];
    });
  } else {
    return undefined;
  }
  return { file, ...counts(lines), lines };
}
