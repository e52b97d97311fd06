/**
 * Editor context attachments (protocol.md, "Editor context"): the chips of the prompt box,
 * the `@` file completion, and the chips of a user message in the transcript, made from
 * the `editorContext` message the server puts before it (pure: shared by the extension
 * host and the webview).
 *
 * The prompt box holds a list of chips; each is an attachment the next prompt, steer or
 * follow-up sends as `context`, with a label (`calc.py:3-4`, `README.md`) and a tooltip.
 * `@` followed by a word at the start of the box or after a blank completes workspace
 * files; picking one removes the `@word` from the text and adds a `file` chip.
 */

import type { Attachment, EditorContextAttachmentInfo, LspRange } from './protocol';
import type { Chip, ContextChip, FileEntry } from './view';

/** The 1-based first and last line a range covers; a range ending at column 0 of a later line stops before it. */
export function rangeLines(range: LspRange): { startLine: number; endLine: number } {
  const startLine = range.start.line + 1;
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line - 1 : range.end.line;
  return { startLine, endLine: Math.max(startLine, last + 1) };
}

/** `path:3` or `path:3-4`. */
export function linesLabel(path: string, startLine: number, endLine: number): string {
  return startLine === endLine ? `${path}:${startLine}` : `${path}:${startLine}-${endLine}`;
}

export function problemsLabel(count: number): string {
  return `${count} ${count === 1 ? 'problem' : 'problems'}`;
}

/** The chip of an attachment, with the path the editor shows for its URI (`path`: relative to the workspace). */
export function chipFor(attachment: Attachment, path: string): Chip {
  switch (attachment.type) {
    case 'selection': {
      const { startLine, endLine } = rangeLines(attachment.range);
      const lines = startLine === endLine ? `line ${startLine}` : `lines ${startLine}-${endLine}`;
      return { attachment, label: linesLabel(path, startLine, endLine), title: `Selection: ${path}, ${lines}` };
    }
    case 'file':
      return { attachment, label: path, title: `File: ${path}` };
    case 'diagnostics':
      return attachment.uri === undefined
        ? { attachment, label: 'problems', title: 'The problems the editor shows in every file' }
        : { attachment, label: `${path}: problems`, title: `The problems the editor shows in ${path}` };
  }
}

function sameRange(a: LspRange, b: LspRange): boolean {
  return (
    a.start.line === b.start.line &&
    a.start.character === b.start.character &&
    a.end.line === b.end.line &&
    a.end.character === b.end.character
  );
}

/** Whether two attachments point at the same thing. */
export function sameAttachment(a: Attachment, b: Attachment): boolean {
  if (a.type !== b.type || a.uri !== b.uri) return false;
  return a.type !== 'selection' || (b.type === 'selection' && sameRange(a.range, b.range));
}

/** The chips with `chip` added at the end, unless the same attachment is there already. */
export function addChip(chips: readonly Chip[], chip: Chip): Chip[] {
  return chips.some((c) => sameAttachment(c.attachment, chip.attachment)) ? [...chips] : [...chips, chip];
}

/** The chips without the one at `index`. */
export function removeChip(chips: readonly Chip[], index: number): Chip[] {
  return chips.filter((_, i) => i !== index);
}

/** The chips not among `sent` (those added while a send was under way stay). */
export function withoutSent(chips: readonly Chip[], sent: readonly Chip[]): Chip[] {
  return chips.filter((chip) => !sent.some((s) => sameAttachment(s.attachment, chip.attachment)));
}

// --- the `@` file completion ---------------------------------------------------------------

/** The `@word` being typed at the cursor: `@` at the start of the box or after a blank, then no blank. */
export function atQuery(text: string, cursor: number): { query: string; start: number } | undefined {
  const match = /(^|\s)@(\S*)$/.exec(text.slice(0, cursor));
  if (!match) return undefined;
  const query = match[2] ?? '';
  return { query, start: cursor - query.length - 1 };
}

/**
 * The files whose path contains `query` (case-insensitive): those whose name starts with
 * it first, then those whose path does, then the rest; shorter paths first in each group.
 */
export function filterFiles(files: readonly FileEntry[], query: string, max = 50): FileEntry[] {
  const q = query.toLowerCase();
  const ranked: { file: FileEntry; rank: number }[] = [];
  for (const file of files) {
    const path = file.path.toLowerCase();
    const name = path.slice(path.lastIndexOf('/') + 1);
    const rank = name.startsWith(q) ? 0 : path.startsWith(q) ? 1 : path.includes(q) ? 2 : -1;
    if (rank >= 0) ranked.push({ file, rank });
  }
  ranked.sort((a, b) => a.rank - b.rank || a.file.path.length - b.file.path.length || a.file.path.localeCompare(b.file.path));
  return ranked.slice(0, max).map((r) => r.file);
}

/** The text without the `@word` at the cursor (a picked file becomes a chip), and the new cursor. */
export function removeAtWord(text: string, cursor: number): { text: string; cursor: number } {
  const at = atQuery(text, cursor);
  if (!at) return { text, cursor };
  const rest = text.slice(cursor).replace(/^\S*/, '');
  const before = text.slice(0, at.start);
  // `see @no|tes and` -> `see and`: one blank between what is left
  const joined = before.endsWith(' ') && rest.startsWith(' ') ? before + rest.slice(1) : before + rest;
  return { text: joined, cursor: before.length };
}

// --- the chips of a user message in the transcript ------------------------------------------

/** The customType of the message the server puts before a user message with attachments. */
export const EDITOR_CONTEXT = 'editorContext';

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function int(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

/** One attachment of `details.attachments` as a chip: `calc.py:3-4`, `README.md`, `2 problems`. */
export function contextChip(info: EditorContextAttachmentInfo): ContextChip {
  const path = str(info.path) ?? str(info.uri) ?? '';
  const type = str(info.type) ?? 'attachment';
  const notes: string[] = [];
  if (typeof info.lines === 'number') notes.push(`${info.lines} ${info.lines === 1 ? 'line' : 'lines'}`);
  if (info.truncated === true) notes.push('cut: the read tool has the rest');
  const suffix = notes.length > 0 ? ` (${notes.join(', ')})` : '';
  switch (type) {
    case 'selection': {
      const start = int(info.startLine) ?? (info.range ? rangeLines(info.range).startLine : undefined);
      const end = int(info.endLine) ?? (info.range ? rangeLines(info.range).endLine : start);
      const label = start !== undefined ? linesLabel(path, start, end ?? start) : path;
      return { type, label, title: `Selection: ${label}${suffix}` };
    }
    case 'diagnostics': {
      const count = int(info.count) ?? 0;
      const label = problemsLabel(count);
      return { type, label, title: `${label} the editor showed${path ? ` in ${path}` : ''}` };
    }
    default:
      return { type, label: path || type, title: `${type === 'file' ? 'File' : type}: ${path}${suffix}` };
  }
}

/** The chips of an `editorContext` message's `details`; `undefined` when they are not in that form. */
export function contextChips(details: unknown): ContextChip[] | undefined {
  const list = (details as { attachments?: unknown } | null | undefined)?.attachments;
  if (!Array.isArray(list)) return undefined;
  return list
    .filter((item): item is EditorContextAttachmentInfo => item !== null && typeof item === 'object')
    .map(contextChip);
}
