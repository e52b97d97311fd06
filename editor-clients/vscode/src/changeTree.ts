/**
 * The Changes view as data (pure: no VS Code): the requests of the last run's or the whole
 * session's changes (`agent/getChanges`) and of their reverts (`agent/revertChanges`), the
 * tree's file and hunk items, the `agentls-change:` URIs of a file's diff, and one line for
 * what a revert did (protocol.md "Checkpoints and changes").
 */

import { baseName, hunkHeader } from './reviews';
import type { ChangedFile, ChangesResult, Hunk, RevertResult } from './protocol';

/** The scheme of both sides of a changed file's diff (read-only documents). */
export const CHANGE_SCHEME = 'agentls-change';

/** What the view lists: the changes of the session's last run, or of the whole session. */
export type ChangeScope = 'run' | 'session';

/** The params of `agent/getChanges` for a scope (`text`: with each file's old and new text, for a diff). */
export function changesParams(sessionId: string, scope: ChangeScope, text = false): Record<string, unknown> {
  return { sessionId, ...(scope === 'session' ? { fromEntryId: null } : {}), ...(text ? { text: true } : {}) };
}

/** What to revert: whole files, or single hunks (`index` into the file's `hunks`). */
export interface RevertTarget {
  files?: string[];
  hunks?: { path: string; index: number }[];
}

/**
 * The params of `agent/revertChanges` for what the view shows: the same span as the
 * `agent/getChanges` it listed (that run, or the session up to the entry it ended at), so
 * that the hunk indexes are those shown.
 */
export function revertParams(
  sessionId: string,
  scope: ChangeScope,
  shown: Pick<ChangesResult, 'runId' | 'toEntryId'>,
  target: RevertTarget,
  force = false,
): Record<string, unknown> {
  const span =
    scope === 'run'
      ? shown.runId !== undefined
        ? { runId: shown.runId }
        : {}
      : { fromEntryId: null, ...(shown.toEntryId ? { toEntryId: shown.toEntryId } : {}) };
  return { sessionId, ...span, ...target, ...(force ? { force: true } : {}) };
}

export interface FileNode {
  kind: 'file';
  file: ChangedFile;
  label: string;
  description: string;
  tooltip: string;
  /** Whether it has a diff to open (not binary, recorded). */
  diffable: boolean;
  hunks: HunkNode[];
}

export interface HunkNode {
  kind: 'hunk';
  file: ChangedFile;
  index: number;
  hunk: Hunk;
  label: string;
  description: string;
  tooltip: string;
}

export type ChangeNode = FileNode | HunkNode;

const STATUS_WORD: Record<ChangedFile['status'], string> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  renamed: 'renamed',
};

function counts(hunk: Hunk): { added: number; removed: number } {
  return {
    added: hunk.lines.filter((line) => line.startsWith('+')).length,
    removed: hunk.lines.filter((line) => line.startsWith('-')).length,
  };
}

/** `modified · bash, edit`, `renamed from old.txt · bash`, `binary · write`. */
export function fileDescription(file: ChangedFile): string {
  const status = file.status === 'renamed' && file.oldPath ? `renamed from ${file.oldPath}` : STATUS_WORD[file.status] ?? file.status;
  const notes = [file.binary ? 'binary' : '', file.recorded === false ? 'not recorded' : ''].filter(Boolean);
  return [status, ...notes, file.by.join(', ')].filter(Boolean).join(' · ');
}

/** The tree's items for a `agent/getChanges` result: a file per changed file, its hunks as children. */
export function changeNodes(result: Pick<ChangesResult, 'files'>): FileNode[] {
  return result.files.map((file) => {
    const hunks: HunkNode[] = file.hunks.map((hunk, index) => {
      const { added, removed } = counts(hunk);
      return {
        kind: 'hunk',
        file,
        index,
        hunk,
        label: hunkHeader(hunk),
        description: `+${added} −${removed}`,
        tooltip: hunk.lines.join('\n'),
      };
    });
    const by = file.by.length > 0 ? file.by.join(', ') : 'unknown';
    return {
      kind: 'file',
      file,
      label: file.path,
      description: fileDescription(file),
      tooltip: `${file.path}: ${STATUS_WORD[file.status] ?? file.status}${file.oldPath ? ` (was ${file.oldPath})` : ''}, changed by ${by}`,
      diffable: !file.binary && file.recorded !== false,
      hunks,
    };
  });
}

/** The view's message above the files: what it lists, or why nothing. */
export function viewMessage(scope: ChangeScope, result: Pick<ChangesResult, 'files' | 'checkpoints'> | undefined): string {
  const what = scope === 'run' ? 'the last run' : 'this session';
  if (!result) return 'No session yet.';
  const count = result.files.length;
  const files = count === 0 ? `No changes in ${what}.` : `${count} ${count === 1 ? 'file' : 'files'} changed in ${what}.`;
  if (result.checkpoints === 'on') return files;
  return `${files} Checkpoints are ${result.checkpoints}: only write and edit changes are known.`;
}

/** The path of one side's URI: `/<generation>/<old|new>/<path>` (the file's own path last: its language). */
export function changeUriPath(generation: number, side: 'old' | 'new', path: string): string {
  const tail = path.split(/[\\/]/).filter((part) => part !== '' && part !== '.' && part !== '..');
  return `/${generation}/${side}/${tail.length > 0 ? tail.join('/') : 'file'}`;
}

/** The diff editor's title: `calc.py: changes of the last run`. */
export function changeTitle(file: Pick<ChangedFile, 'path'>, scope: ChangeScope): string {
  return `${baseName(file.path)}: ${scope === 'run' ? 'changes of the last run' : "the session's changes"}`;
}

/**
 * Whether a revert refused for `conflicts` has anything else to revert with `force` (which
 * reverts the others and leaves the conflicting files as they are): a file or hunk of
 * another path, or everything (neither files nor hunks named).
 */
export function othersToRevert(target: RevertTarget, conflicts: readonly { path: string }[]): boolean {
  const asked = new Set([...(target.files ?? []), ...(target.hunks ?? []).map((h) => h.path)]);
  if (asked.size === 0) return true;
  const refused = new Set(conflicts.map((c) => c.path));
  return [...asked].some((path) => !refused.has(path));
}

/** What a revert did, in one line: `Reverted a.txt (hunk 1), b.txt. Skipped: c.txt (changed since).` */
export function revertOutcome(result: RevertResult): string {
  const done = (result.reverted ?? []).map((r) =>
    r.hunks && r.hunks.length > 0 ? `${r.path} (${r.hunks.length === 1 ? 'hunk' : 'hunks'} ${r.hunks.map((i) => i + 1).join(', ')})` : r.path,
  );
  const skipped = (result.skipped ?? []).map((f) => `${f.path} (${f.reason})`);
  const parts = [done.length > 0 ? `Reverted ${done.join(', ')}.` : 'Nothing reverted.'];
  if (skipped.length > 0) parts.push(`Skipped: ${skipped.join(', ')}.`);
  return parts.join(' ');
}
